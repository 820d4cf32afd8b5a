"""Derived model files (a converted GGUF, an exported ONNX graph) cached on disk.

A cache folder is complete when it holds :data:`MARKER`. It is built in a temporary
folder beside the target and renamed into place, so a killed build never leaves a
half cache, and a lock file makes a second process wait for the first one's build
instead of repeating it.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ragloom.errors import ConfigurationError

MARKER = "ragloom-cache.json"

_log = logging.getLogger("ragloom")


def default_cache_dir() -> Path:
    """``$RAGLOOM_CACHE_DIR/models`` or ``~/.cache/ragloom/models``."""
    root = os.environ.get("RAGLOOM_CACHE_DIR")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "ragloom"
    return base / "models"


def is_complete(folder: Path) -> bool:
    return (folder / MARKER).is_file()


def build_cached(target: Path, build: Callable[[Path], None], *, what: str = "model") -> Path:
    """``target``, built by ``build(empty_folder)`` on first use and reused after.

    ``build`` must write :data:`MARKER` last, once everything else is in place.
    ``what`` names the work in the one-line notice a first build logs.
    """
    if is_complete(target):
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(
            f"cannot create the model cache folder {target.parent}: {exc}. Set "
            "RAGLOOM_CACHE_DIR to a writable folder"
        ) from exc
    with file_lock(target.parent / f"{target.name}.lock"):
        if is_complete(target):
            return target
        for stale in target.parent.glob(f"{target.name}.tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)  # left by a killed build
        if target.exists():
            shutil.rmtree(target)  # no marker, so never a finished cache
        work = Path(tempfile.mkdtemp(prefix=f"{target.name}.tmp-", dir=target.parent))
        _log.info("first use: %s into %s (once; later runs reuse it)", what, target)
        try:
            with _quiet_progress_bars():
                build(work)
            os.replace(work, target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


@contextmanager
def _quiet_progress_bars() -> Iterator[None]:
    """Silence tqdm bars of the libraries doing the build (our notice says what happens)."""
    previous = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = previous


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock between processes (a no-op where fcntl is missing)."""
    try:
        import fcntl
    except ImportError:  # Windows: the atomic rename alone keeps the cache whole
        yield
        return
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

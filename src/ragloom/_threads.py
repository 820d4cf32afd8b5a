"""Thread counts and library verbosity, changed only for as long as the work needs.

Each of these is process-wide state that belongs to the application, not to a
library: torch's intra-op thread count, the BLAS pool's size, transformers'
log level and progress bars. ragloom changes them inside ``with`` scopes and
puts back what it found when the last overlapping scope ends, so a search, an
embedding or a model load never leaves the process configured differently (two
threads searching at once used to leave BLAS at one thread for good).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def available_cores() -> int:
    """CPUs this process may run on (respects affinity masks and cgroup cpusets)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class ScopedSetting:
    """A process-wide setting held at a value while any scope is open.

    The first scope saves the current value and sets its own; a later overlapping
    scope sets its own; when a scope closes, the value of the latest scope still open
    is put back, and the last one to close restores the saved value. ``read`` and
    ``write`` are the setting's getter and setter.
    """

    def __init__(self, read: Callable[[], Any], write: Callable[[Any], None]) -> None:
        self._read = read
        self._write = write
        self._lock = threading.Lock()
        self._open: list[tuple[object, Any]] = []  # (scope, its value), oldest first
        self._saved: Any = None

    @property
    def depth(self) -> int:
        """How many scopes are open (for tests and diagnostics)."""
        return len(self._open)

    @contextmanager
    def held(self, value: Any) -> Iterator[None]:
        scope = object()
        with self._lock:
            if not self._open:
                self._saved = self._read()
            self._open.append((scope, value))
            if self._read() != value:
                self._write(value)
        try:
            yield
        finally:
            with self._lock:
                self._open = [entry for entry in self._open if entry[0] is not scope]
                wanted = self._open[-1][1] if self._open else self._saved
                if self._read() != wanted:
                    self._write(wanted)


# ---------------------------------------------------------------- other cores

_sharing = 0
_sharing_lock = threading.Lock()


@contextmanager
def cores_shared() -> Iterator[None]:
    """Marks, for the block, work of this process running beside the current thread
    (a keyword ranking beside a query embedding, say): an embedder that gives a lone
    query the idle cores keeps it to one thread meanwhile."""
    global _sharing
    with _sharing_lock:
        _sharing += 1
    try:
        yield
    finally:
        with _sharing_lock:
            _sharing -= 1


def cores_are_shared() -> bool:
    """Whether some :func:`cores_shared` block is open."""
    return _sharing > 0


# ------------------------------------------------------------------------- torch

_torch_setting: ScopedSetting | None = None
_setup_lock = threading.Lock()


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """torch's intra-op thread count for the length of the block.

    A no-op when torch has not been imported (the ONNX paths never import it).
    """
    global _torch_setting
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    with _setup_lock:
        if _torch_setting is None:
            _torch_setting = ScopedSetting(torch.get_num_threads, torch.set_num_threads)
    with _torch_setting.held(count):
        yield


# -------------------------------------------------------------------------- BLAS

_blas_setting: ScopedSetting | None = None
_blas_unavailable = False


def _make_blas_setting() -> ScopedSetting | None:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    # The controller knows the BLAS libraries loaded when it was made; an import
    # since (torch, scipy...) may have loaded another, so it is made again then.
    controllers: list[tuple[int, Any]] = [(len(sys.modules), ThreadpoolController())]
    # The limit in force (None: the library's own) and the limiter that undoes it.
    held: list[tuple[int, Any]] = []

    def controller() -> Any:
        if controllers[0][0] != len(sys.modules):
            controllers[0] = (len(sys.modules), ThreadpoolController())
        return controllers[0][1]

    def read() -> int | None:
        return held[0][0] if held else None

    def write(value: int | None) -> None:
        while held:
            held.pop()[1].restore_original_limits()
        if value is not None:
            held.append((value, controller().limit(limits=value, user_api="blas")))

    return ScopedSetting(read, write)


@contextmanager
def blas_threads(count: int) -> Iterator[None]:
    """The BLAS pool (OpenBLAS, MKL...) limited to ``count`` threads in the block.

    The limit is taken through a cached ``threadpoolctl`` controller (about 10
    microseconds) and lifted when the last overlapping block ends; without
    threadpoolctl the BLAS library keeps its own setting.
    """
    global _blas_setting, _blas_unavailable
    if _blas_setting is None and not _blas_unavailable:
        with _setup_lock:
            if _blas_setting is None and not _blas_unavailable:
                _blas_setting = _make_blas_setting()
                _blas_unavailable = _blas_setting is None
    if _blas_setting is None:
        yield
        return
    with _blas_setting.held(count):
        yield


# ---------------------------------------------------------------- transformers

_quiet_setting: ScopedSetting | None = None


def _make_quiet_setting() -> ScopedSetting | None:
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # the caller reports the missing dependency
        return None

    def read() -> tuple[int, bool]:
        return (hf_logging.get_verbosity(),
                hf_logging.is_progress_bar_enabled())

    def write(value: tuple[int, bool]) -> None:
        verbosity, bars = value
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
        else:
            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

    return ScopedSetting(read, write)


@contextmanager
def quiet_loading() -> Iterator[None]:
    """transformers' info logs and progress bars off while a model loads.

    They write to the terminal on every load ("Loading weights", GGUF conversion),
    which drowns the CLI's own output; real errors still raise. The application's
    own settings come back when the block ends.
    """
    global _quiet_setting
    import logging

    if _quiet_setting is None:
        with _setup_lock:
            if _quiet_setting is None:
                _quiet_setting = _make_quiet_setting()
    if _quiet_setting is None:
        yield
        return
    with _quiet_setting.held((logging.ERROR, False)):
        yield



def quiet_model_libraries() -> None:
    """Deprecated, and now does nothing: it silenced transformers for the whole
    process. Wrap the load in ``with quiet_loading():`` instead."""


def use_torch_threads(count: int) -> None:
    """Deprecated: sets torch's thread count for good. Use ``with torch_threads(count):``."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != count:
        torch.set_num_threads(count)

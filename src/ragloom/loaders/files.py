"""Loading files and folders into documents, one :class:`LoadResult` per document or skip.

A file that cannot be loaded yields a skip with a reason; the batch goes on.
Folders are walked in sorted order; hidden files and folders (names starting with
``.``) are left out unless ``hidden=True``; a folder reached twice through symbolic
links is walked once, so link loops end.
"""

from __future__ import annotations

import mimetypes
import os
import stat
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from ragloom.errors import MissingDependencyError, ParseError
from ragloom.loaders.base import (
    LoadResult,
    Parsed,
    ParseFunction,
    ParseLimits,
    iso_utc,
    sha256_hex,
    to_results,
)
from ragloom.loaders.detect import MIME_TYPES
from ragloom.loaders.globs import any_match
from ragloom.loaders.notices import captured_notices, log, summary
from ragloom.loaders.parsers import parse_bytes


def default_parser(
    limits: ParseLimits | None = None, text_fields: Sequence[str] | None = None
) -> ParseFunction:
    """:func:`parse_bytes` with the given options bound, as loaders call it."""
    return partial(parse_bytes, limits=limits or ParseLimits(), text_fields=text_fields)


def parse_to_results(
    data: bytes, source: str, base: dict[str, Any], parse: ParseFunction,
    mime_type: str | None = None,
) -> list[LoadResult]:
    """Parse ``data`` and build documents, turning every failure into a skip.

    What the parser library warns or logs meanwhile is caught: it ends the skip
    reason of a file that fails, and goes to the debug log for one that parses."""
    failure: str | None = None
    parsed: list[Parsed] = []
    with captured_notices() as notices:
        try:
            parsed = parse(data, source, mime_type)
        except ParseError as exc:
            failure = exc.reason
        except MissingDependencyError as exc:
            failure = str(exc)
        except Exception as exc:  # a parser bug or a library crash must not stop the batch
            failure = f"parser failed: {type(exc).__name__}: {exc}"
    if failure is not None:
        return [LoadResult(source=source, reason=failure + summary(notices))]
    if notices:
        log.debug("%s: the parser said: %s", source, " | ".join(notices))
    if parsed:
        fmt = str(parsed[0].metadata.get("format", ""))
        base = {**base, "mime_type": MIME_TYPES.get(fmt) or base.get("mime_type")
                or "application/octet-stream"}
    return to_results(parsed, source, base)


def load_file(
    path: str | os.PathLike[str], *, limits: ParseLimits | None = None,
    parse: ParseFunction | None = None, text_fields: Sequence[str] | None = None,
) -> list[LoadResult]:
    """The documents of one file (several for JSON arrays / JSON Lines), or one skip."""
    limits = limits or ParseLimits()
    parse = parse or default_parser(limits, text_fields)
    source = os.path.abspath(os.fspath(path))
    try:
        info = os.stat(source)
    except FileNotFoundError:
        reason = "broken symbolic link" if os.path.islink(source) else "no such file"
        return [LoadResult(source=source, reason=reason)]
    except OSError as exc:
        return [LoadResult(source=source, reason=f"cannot read: {exc.strerror or exc}")]
    if not stat.S_ISREG(info.st_mode):
        return [LoadResult(source=source, reason="not a regular file")]
    if info.st_size == 0:
        return [LoadResult(source=source, reason="empty file")]
    if info.st_size > limits.max_file_bytes:
        return [LoadResult(source=source, reason=f"refused: {info.st_size} bytes, more than "
                                                 f"max_file_bytes={limits.max_file_bytes}")]
    try:
        with open(source, "rb") as handle:
            data = handle.read(limits.max_file_bytes + 1)
    except OSError as exc:
        return [LoadResult(source=source, reason=f"cannot read: {exc.strerror or exc}")]
    if len(data) > limits.max_file_bytes:
        return [LoadResult(source=source, reason=f"refused: more than "
                                                 f"max_file_bytes={limits.max_file_bytes}")]
    if not data:
        return [LoadResult(source=source, reason="empty file")]
    created = getattr(info, "st_birthtime", None) or info.st_ctime
    base: dict[str, Any] = {
        "source": source,
        "mime_type": mimetypes.guess_type(source)[0],
        "file_name": os.path.basename(source),
        "size": len(data),
        "created": iso_utc(created),
        "modified": iso_utc(info.st_mtime),
        "content_hash": sha256_hex(data),
    }
    return parse_to_results(data, source, base, parse)


def load_path(
    path: str | os.PathLike[str],
    *,
    include: Sequence[str] = ("**/*",),
    exclude: Sequence[str] = (),
    recursive: bool = True,
    hidden: bool = False,
    limits: ParseLimits | None = None,
    text_fields: Sequence[str] | None = None,
    parse: ParseFunction | None = None,
) -> Iterator[LoadResult]:
    """Documents from a file or a folder, lazily, one :class:`LoadResult` at a time.

    ``include`` / ``exclude`` are glob patterns (see :mod:`ragloom.loaders.globs`)
    applied to paths relative to the folder; excluded folders are not entered.
    ``parse`` replaces the parser call (e.g. to run it in a subprocess with a time
    limit); it defaults to :func:`parse_bytes` with ``limits`` and ``text_fields``.
    """
    limits = limits or ParseLimits()
    parse = parse or default_parser(limits, text_fields)
    root = Path(os.path.abspath(os.fspath(path)))
    if not root.is_dir():
        if not root.exists() and not root.is_symlink():
            yield LoadResult(source=str(root), reason="no such file or directory")
            return
        yield from load_file(root, limits=limits, parse=parse)
        return
    for file_path, skip in _walk(root, "", recursive, hidden, exclude, set()):
        if skip is not None:
            yield LoadResult(source=str(file_path), reason=skip)
            continue
        relative = file_path.relative_to(root).as_posix()
        if any_match(relative, include) and not any_match(relative, exclude):
            yield from load_file(file_path, limits=limits, parse=parse)


def _walk(
    folder: Path, relative: str, recursive: bool, hidden: bool, exclude: Sequence[str],
    visited: set[tuple[int, int]],
) -> Iterator[tuple[Path, str | None]]:
    try:
        info = os.stat(folder)
        key = (info.st_dev, info.st_ino)
        if key in visited:
            return
        visited.add(key)
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as exc:
        yield folder, f"cannot read folder: {exc.strerror or exc}"
        return
    for entry in entries:
        if not hidden and entry.name.startswith("."):
            continue
        child = f"{relative}{entry.name}"
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            if recursive and not any_match(child, exclude) and not any_match(child + "/",
                                                                               exclude):
                yield from _walk(Path(entry.path), child + "/", recursive, hidden, exclude,
                                 visited)
            continue
        yield Path(entry.path), None

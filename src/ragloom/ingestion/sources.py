"""Which files a run reads: paths and folders walked like :func:`ragloom.loaders.load_path`
(sorted, hidden names left out unless asked, include / exclude globs, link loops
cut), but only listed, so unchanged files can be skipped before anyone parses them."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ragloom.loaders.globs import any_match


@dataclass(frozen=True, kw_only=True)
class SourceFile:
    """A file to ingest, or a path that cannot be (``reason`` set)."""

    path: str
    reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class FileSelection:
    include: Sequence[str] = ("**/*",)
    exclude: Sequence[str] = ()
    hidden: bool = False
    recursive: bool = True


def list_files(paths: Sequence[str], selection: FileSelection | None = None
               ) -> Iterator[SourceFile]:
    """Every file under ``paths`` (absolute paths), in a stable order."""
    selection = selection or FileSelection()
    for raw in paths:
        root = os.path.abspath(os.path.expanduser(raw))
        if os.path.isdir(root):
            yield from _walk(root, "", selection, set())
        elif os.path.exists(root):
            yield SourceFile(path=root)
        else:
            yield SourceFile(path=root, reason="no such file or directory")


def _walk(folder: str, relative: str, selection: FileSelection,
          visited: set[tuple[int, int]]) -> Iterator[SourceFile]:
    try:
        info = os.stat(folder)
        key = (info.st_dev, info.st_ino)
        if key in visited:
            return
        visited.add(key)
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as exc:
        yield SourceFile(path=folder, reason=f"cannot read folder: {exc.strerror or exc}")
        return
    for entry in entries:
        if not selection.hidden and entry.name.startswith("."):
            continue
        child = f"{relative}{entry.name}"
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            if selection.recursive and not any_match(child, selection.exclude) \
                    and not any_match(child + "/", selection.exclude):
                yield from _walk(entry.path, child + "/", selection, visited)
            continue
        if any_match(child, selection.include) and not any_match(child, selection.exclude):
            yield SourceFile(path=entry.path)

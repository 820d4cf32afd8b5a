"""Refuse ZIP bombs before any parser opens the archive.

Python's ``zipfile`` stops reading an entry at its declared size, so checking the
declared sizes in the central directory bounds what parsing can decompress.
"""

from __future__ import annotations

import io
import zipfile

from ragloom.errors import ParseError
from ragloom.loaders.base import MB, ParseLimits

# Tiny entries compress oddly well (runs of spaces in XML); only judge big ones.
_RATIO_MIN_BYTES = 1 * MB


def zip_names(data: bytes) -> list[str] | None:
    """The entry names of a ZIP archive, or None when ``data`` is not a readable ZIP."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return None


def check_zip(data: bytes, name: str, limits: ParseLimits) -> None:
    """Raise ParseError when the archive is unreadable or over any ZIP limit."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ParseError(name, f"not a readable ZIP-based file ({exc})") from exc
    if len(entries) > limits.max_zip_entries:
        raise ParseError(name, f"refused: ZIP archive has {len(entries)} entries, more than "
                               f"max_zip_entries={limits.max_zip_entries}")
    total = sum(entry.file_size for entry in entries)
    if total > limits.max_zip_uncompressed_bytes:
        raise ParseError(name, f"refused as a possible ZIP bomb: {total} bytes uncompressed, "
                               f"more than max_zip_uncompressed_bytes="
                               f"{limits.max_zip_uncompressed_bytes}")
    compressed = sum(entry.compress_size for entry in entries)
    for entry in entries:
        if entry.file_size < _RATIO_MIN_BYTES:
            continue
        ratio = entry.file_size / max(entry.compress_size, 1)
        if ratio > limits.max_zip_ratio:
            raise ParseError(name, f"refused as a possible ZIP bomb: entry {entry.filename!r} "
                                   f"expands {ratio:.0f}x, more than max_zip_ratio="
                                   f"{limits.max_zip_ratio:g}")
    if total >= _RATIO_MIN_BYTES and total / max(compressed, 1) > limits.max_zip_ratio:
        raise ParseError(name, f"refused as a possible ZIP bomb: the archive expands "
                               f"{total / max(compressed, 1):.0f}x, more than max_zip_ratio="
                               f"{limits.max_zip_ratio:g}")

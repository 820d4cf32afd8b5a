"""What every splitter shares: spans of the document text, pages, chunk building.

Splitters work on ``(start, end)`` spans into ``document.text`` and only cut text
out at the end, so ``document.text[chunk.start:chunk.end] == chunk.text`` holds by
construction for every splitter.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragloom.errors import ConfigurationError
from ragloom.types import TextChunk, TextDocument

Span = tuple[int, int]

# Document-level structure that would only bloat every chunk's metadata.
_DOCUMENT_ONLY_KEYS = ("page_starts",)


def strip_span(text: str, start: int, end: int) -> Span:
    """The span without leading and trailing whitespace (may become empty)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def page_starts_of(document: TextDocument) -> list[int] | None:
    """The document's page boundaries, or None when it has no usable ones."""
    starts = document.metadata.get("page_starts")
    if not isinstance(starts, list) or not starts:
        return None
    if not all(isinstance(value, int) for value in starts):
        return None
    return sorted(starts)


def page_at(page_starts: Sequence[int] | None, offset: int) -> int | None:
    """The 1-based page holding ``offset``; text before the first page counts as page 1."""
    if not page_starts:
        return None
    return max(1, bisect.bisect_right(page_starts, offset))


#: Longest table header line kept in a chunk's metadata.
MAX_TABLE_HEADER = 600


def _is_table_row(line: str) -> bool:
    """A line of a pipe table ("a | b | c"), as the loaders write tables."""
    cells = line.strip().strip("|").split("|")
    return len(cells) >= 2 and any(cell.strip() for cell in cells)


def table_header(text: str, start: int) -> str | None:
    """The first row of the pipe table a chunk starting at ``start`` begins inside of,
    when that row lies before ``start``: a table split between chunks keeps its column
    names with every part (``metadata["table_header"]``). None otherwise."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    if not _is_table_row(text[line_start: line_end if line_end >= 0 else len(text)]):
        return None
    header: str | None = None
    end = line_start - 1  # the newline before the chunk's first line
    while end > 0:
        begin = text.rfind("\n", 0, end) + 1
        line = text[begin:end]
        if not _is_table_row(line):
            break
        header, end = line, begin - 1
    if header is None or len(header) > MAX_TABLE_HEADER:
        return None
    return header.strip()


def build_chunks(
    document: TextDocument,
    spans: Iterable[Span],
    extra: Sequence[Mapping[str, Any]] | None = None,
) -> list[TextChunk]:
    """Chunks for the given spans, stripped of surrounding whitespace; empty ones dropped.

    ``extra`` holds per-span metadata (same length as ``spans``) when given. A chunk
    that starts inside a table gets the table's first row as ``table_header``.
    """
    text = document.text
    starts = page_starts_of(document)
    if any(key in document.metadata for key in _DOCUMENT_ONLY_KEYS):
        # Same id and text, lighter metadata: chunks are built from this stand-in.
        document = dataclasses.replace(document, metadata={
            k: v for k, v in document.metadata.items() if k not in _DOCUMENT_ONLY_KEYS})
    chunks: list[TextChunk] = []
    for position, (raw_start, raw_end) in enumerate(spans):
        start, end = strip_span(text, raw_start, raw_end)
        if start >= end:
            continue
        metadata = dict(extra[position]) if extra is not None else None
        header = table_header(text, start)
        if header is not None:
            metadata = {**(metadata or {}), "table_header": header}
        chunk = TextChunk.create(document, text[start:end], index=len(chunks), start=start,
                                 end=end, page=page_at(starts, start), metadata=metadata)
        chunks.append(chunk)
    return chunks


def window_spans(units: Sequence[Span], size: int, overlap: int) -> list[Span]:
    """Group consecutive units ``size`` at a time, ``overlap`` units shared between groups."""
    if not units:
        return []
    step = size - overlap
    spans: list[Span] = []
    for first in range(0, len(units), step):
        last = min(first + size, len(units)) - 1
        spans.append((units[first][0], units[last][1]))
        if last == len(units) - 1:
            break
    return spans


def check_size(name: str, size: int, overlap: int) -> None:
    """Refuse sizes that cannot make progress."""
    if size < 1:
        raise ConfigurationError(f"{name} must be at least 1, got {size}")
    if overlap < 0 or overlap >= size:
        raise ConfigurationError(
            f"overlap must be at least 0 and smaller than {name} ({size}), got {overlap}"
        )


def describe(obj: object, **override: object) -> str:
    """A stable ``ClassName(field=value, ...)`` string for a dataclass splitter."""
    assert dataclasses.is_dataclass(obj)
    parts = []
    for item in dataclasses.fields(obj):
        value = override.get(item.name, getattr(obj, item.name))
        parts.append(f"{item.name}={value!r}")
    return f"{type(obj).__name__}({', '.join(parts)})"

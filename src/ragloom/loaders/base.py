"""Values shared by loaders and parsers: limits, parse results, load results.

Parsers are pure functions, ``bytes`` and a name in, :class:`Parsed` out, so a
caller can run them in a separate process with a time limit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ragloom.types import TextDocument

MB = 1024 * 1024


@dataclass(frozen=True, kw_only=True)
class ParseLimits:
    """What a loader refuses before parsing, so one bad file cannot exhaust the machine."""

    max_file_bytes: int = 100 * MB
    max_pages: int = 2000
    max_zip_entries: int = 10_000
    max_zip_uncompressed_bytes: int = 500 * MB
    max_zip_ratio: float = 100.0


@dataclass(frozen=True, kw_only=True)
class Parsed:
    """One document's text and format metadata, as a parser returns it.

    ``part`` names a record inside a file holding several (JSON arrays, JSONL);
    the document's source becomes ``"<source>#<part>"``.
    """

    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    part: str | None = None


@dataclass(frozen=True, kw_only=True)
class LoadResult:
    """A loaded document, or the reason a source was skipped."""

    source: str
    document: TextDocument | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.document is not None


ParseFunction = Callable[[bytes, str, "str | None"], list[Parsed]]
"""``parse(data, name, mime_type) -> list[Parsed]``; raises ParseError or
MissingDependencyError. :func:`ragloom.loaders.parse_bytes` with bound options."""


def iso_utc(timestamp: float) -> str:
    """``2024-05-01T12:00:00Z``: ISO 8601 in UTC, to the second."""
    moment = datetime.fromtimestamp(timestamp, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def to_results(
    parsed: Sequence[Parsed], source: str, base: Mapping[str, Any]
) -> list[LoadResult]:
    """Documents from parser output; the loader's metadata wins over the parser's."""
    results: list[LoadResult] = []
    for item in parsed:
        item_source = source if item.part is None else f"{source}#{item.part}"
        metadata = {**dict(item.metadata), **dict(base), "source": item_source}
        if item.part is not None:
            metadata["parent_source"] = source
        document = TextDocument.create(item.text, source=item_source, metadata=metadata)
        results.append(LoadResult(source=item_source, document=document))
    if not results:
        results.append(LoadResult(source=source, reason="no text found"))
    return results

"""Markdown sections: split at ATX headers (``#`` to ``######``), keep the header path.

Each chunk's metadata gets ``headers`` (``{"h1": ..., "h2": ...}``) and ``section``
(``"H1 > H2"``). Sections longer than the size are sub-split with
:class:`RecursiveSplitter`; every piece keeps its section's headers. Headers inside
fenced code blocks are not headers. A section holding nothing but its header line is
left out: its title still shows in the path of the sections below it.
"""

from __future__ import annotations

import re
from typing import Any

from ragloom.chunking.base import Span, build_chunks
from ragloom.chunking.recursive import RecursiveSplitter
from ragloom.protocols import TokenCounter
from ragloom.types import TextChunk, TextDocument

_HEADER = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def markdown_sections(text: str) -> list[tuple[int, int, dict[str, str], bool]]:
    """``(start, end, headers, has_body)`` for each section of a Markdown text."""
    sections: list[tuple[int, int, dict[str, str], bool]] = []
    path: dict[int, str] = {}
    headers: dict[str, str] = {}
    section_start, header_end = 0, 0
    fence: str | None = None
    position = 0
    for line in text.splitlines(keepends=True):
        line_start, position = position, position + len(line)
        stripped = line.rstrip("\r\n")
        fence_match = _FENCE.match(stripped)
        if fence_match:
            marker = fence_match.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        header = None if fence is not None else _HEADER.match(stripped)
        if header is None:
            continue
        if line_start > section_start:
            body = text[header_end:line_start]
            sections.append((section_start, line_start, headers, bool(body.strip())))
        level = len(header.group(1))
        path = {k: v for k, v in path.items() if k < level}
        path[level] = (header.group(2) or "").strip()
        headers = {f"h{k}": v for k, v in sorted(path.items())}
        section_start, header_end = line_start, position
    if section_start < len(text):
        body = text[header_end:]
        sections.append((section_start, len(text), headers, bool(body.strip())))
    return sections


class MarkdownSplitter:
    """Sections at Markdown headers, long sections sub-split by a RecursiveSplitter."""

    def __init__(
        self,
        chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        *,
        token_counter: TokenCounter | None = None,
    ) -> None:
        self._recursive = RecursiveSplitter(chunk_size, chunk_overlap, token_counter=token_counter)

    @property
    def chunk_size(self) -> int:
        return self._recursive.chunk_size

    @property
    def chunk_overlap(self) -> int:
        return self._recursive.chunk_overlap

    def split(self, document: TextDocument) -> list[TextChunk]:
        spans: list[Span] = []
        extra: list[dict[str, Any]] = []
        for start, end, headers, has_body in markdown_sections(document.text):
            if not has_body:
                continue
            meta: dict[str, Any] = {"headers": headers,
                                    "section": " > ".join(v for v in headers.values() if v)}
            for span in self._recursive.split_spans(document.text, start, end):
                spans.append(span)
                extra.append(meta)
        return build_chunks(document, spans, extra)

    def settings_key(self) -> str:
        return f"MarkdownSplitter({self._recursive.settings_key()})"

    def __repr__(self) -> str:
        return self.settings_key()

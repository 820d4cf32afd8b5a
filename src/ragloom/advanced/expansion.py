"""Retrieval expansion: give the model more of the text around a hit.

Both expanders read the hit's neighbours from the store by document id and put
them together by their character offsets (``start``/``end``), so overlapping
chunks are not repeated. Both follow the :class:`~ragloom.protocols.Reranker`
protocol (``rerank(question, matches)``), so they go wherever a reranker goes,
after it.

* :class:`SentenceWindowExpander`: the hit plus ``sentences`` sentences before and
  after it, taken from the neighbouring chunks of the same document.
* :class:`ParentDocumentExpander`: the whole parent — the Markdown ``section``, the
  ``page``, or the whole document — with several hits in one parent merged into one
  (the best score wins). ``max_chars`` keeps a huge parent from flooding the prompt:
  past it, the parent is cut to a window around the hit.

The store needs ``document_chunks(document_id)`` (the SQLite store has it) or
``chunks()`` (the in-memory store).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ragloom.errors import InvalidInputError, StoreError
from ragloom.types import QueryMatch, TextChunk

__all__ = ["ParentDocumentExpander", "SentenceWindowExpander", "stitch"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n{2,}")


def _chunk_source(store: Any) -> Callable[[str], list[TextChunk]]:
    native = getattr(store, "document_chunks", None)
    if callable(native):
        return lambda document_id: list(native(document_id))
    listing = getattr(store, "chunks", None)
    if callable(listing):
        return lambda document_id: sorted(
            (c for c in listing() if c.document_id == document_id), key=lambda c: c.index)
    raise StoreError(f"{type(store).__name__} cannot list a document's chunks; retrieval "
                     "expansion needs document_chunks() or chunks()")


def stitch(chunks: Sequence[TextChunk]) -> tuple[str, int]:
    """The text the chunks cover, overlaps written once; and where it starts."""
    ordered = sorted(chunks, key=lambda c: (c.start, c.index))
    if not ordered:
        return "", 0
    text = ordered[0].text
    start = ordered[0].start
    end = ordered[0].start + len(ordered[0].text)
    for chunk in ordered[1:]:
        if chunk.start >= end:
            text += ("\n\n" if chunk.start > end else "") + chunk.text
        else:
            text += chunk.text[end - chunk.start:]
        end = max(end, chunk.start + len(chunk.text))
    return text, start


def _with_text(match: QueryMatch, text: str, **metadata: Any) -> QueryMatch:
    chunk = match.chunk
    meta = {**chunk.metadata, **metadata}
    return dataclasses.replace(match, chunk=dataclasses.replace(chunk, text=text, metadata=meta))


class SentenceWindowExpander:
    """Each hit grows by ``sentences`` sentences on each side (see the module docstring)."""

    def __init__(self, store: Any, *, sentences: int = 2, neighbours: int = 1) -> None:
        if sentences < 0 or neighbours < 0:
            raise InvalidInputError("sentences and neighbours must be zero or more")
        self.document_chunks = _chunk_source(store)
        self.sentences = sentences
        self.neighbours = neighbours

    def expand(self, match: QueryMatch) -> QueryMatch:
        chunk = match.chunk
        siblings = [c for c in self.document_chunks(chunk.document_id)
                    if abs(c.index - chunk.index) <= self.neighbours]
        if not siblings:
            return match
        text, origin = stitch(siblings)
        hit_start = max(0, chunk.start - origin)
        hit_end = min(len(text), hit_start + len(chunk.text))
        if text[hit_start:hit_end] != chunk.text:  # offsets disagree: find the text itself
            found = text.find(chunk.text)
            if found < 0:
                return match
            hit_start, hit_end = found, found + len(chunk.text)
        bounds = [0] + [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]
        before = [b for b in bounds if b <= hit_start]
        after = [b for b in bounds if b >= hit_end]
        start = before[-1 - self.sentences] if len(before) > self.sentences else 0
        end = after[self.sentences] if len(after) > self.sentences else len(text)
        window = text[start:end].strip()
        return _with_text(match, window, window_start=origin + start, window_end=origin + end,
                          expanded="sentence_window")

    def rerank(self, question: str, matches: Sequence[QueryMatch]) -> list[QueryMatch]:
        return [self.expand(m) for m in matches]


Level = Literal["section", "page", "document"]


class ParentDocumentExpander:
    """Each hit becomes its parent section, page or document (see the module docstring)."""

    def __init__(self, store: Any, *, level: Level = "section",
                 max_chars: int | None = 6000) -> None:
        if level not in ("section", "page", "document"):
            raise InvalidInputError("level is one of section, page, document")
        self.document_chunks = _chunk_source(store)
        self.level = level
        self.max_chars = max_chars

    def _parent_key(self, chunk: TextChunk) -> tuple[str, str]:
        if self.level == "section" and chunk.metadata.get("section") is not None:
            return chunk.document_id, f"section:{chunk.metadata['section']}"
        if self.level in ("section", "page") and chunk.page is not None:
            return chunk.document_id, f"page:{chunk.page}"
        return chunk.document_id, "document"

    def expand(self, match: QueryMatch) -> QueryMatch:
        chunk = match.chunk
        key = self._parent_key(chunk)
        family = [c for c in self.document_chunks(chunk.document_id)
                  if self._parent_key(c) == key]
        if not family:
            return match
        text, origin = stitch(family)
        if self.max_chars is not None and len(text) > self.max_chars:
            centre = max(0, chunk.start - origin) + len(chunk.text) // 2
            start = max(0, min(len(text) - self.max_chars, centre - self.max_chars // 2))
            text = text[start:start + self.max_chars]
        return _with_text(match, text.strip(), parent=key[1], expanded="parent_document")

    def rerank(self, question: str, matches: Sequence[QueryMatch]) -> list[QueryMatch]:
        seen: set[tuple[str, str, str]] = set()
        result = []
        for match in matches:  # best first, so the first hit of a parent keeps its score
            key = (match.knowledge_base, *self._parent_key(match.chunk))
            if key in seen:
                continue
            seen.add(key)
            result.append(self.expand(match))
        return result

"""What the answer engine may read beyond the passages it was given.

Lists, summaries, mentions and comparisons need more than the top few passages: every
matching row across the knowledge base, a whole document in order, a second search
for the other side of a comparison. :class:`Corpus` is that small capability;
:class:`KnowledgeBaseCorpus` provides it over one or more knowledge bases (anything
with ``search(query, SearchOptions)``). Without a corpus the engine answers from the
passages it was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ragloom.answering.tables import with_table_header
from ragloom.filters import MetadataFilters, parse_filters
from ragloom.retrieval.options import SearchMode, SearchOptions
from ragloom.types import QueryMatch

#: Most chunks read for one document (a summary of a very long file reads its start).
MAX_DOCUMENT_CHUNKS = 400


@runtime_checkable
class Corpus(Protocol):
    """Searches and whole documents for the answer engine."""

    def search(self, query: str, *, top_k: int, mode: SearchMode = "hybrid"
               ) -> list[QueryMatch]: ...

    def document(self, source: str) -> list[QueryMatch]:
        """Every chunk of the document at ``source``, in reading order."""
        ...


def _scoped(filters: MetadataFilters | None, source: str) -> MetadataFilters:
    by_source = parse_filters({"source": source})
    if filters is None:
        return by_source
    return parse_filters({"and": [filters.to_dict(), by_source.to_dict()]})


class KnowledgeBaseCorpus:
    """A :class:`Corpus` over knowledge bases, keeping the caller's filters."""

    def __init__(self, knowledge_bases: Sequence[Any], *,
                 filters: MetadataFilters | None = None) -> None:
        self.knowledge_bases = [kb for kb in knowledge_bases if hasattr(kb, "search")]
        self.filters = filters

    def search(self, query: str, *, top_k: int, mode: SearchMode = "hybrid"
               ) -> list[QueryMatch]:
        found: list[QueryMatch] = []
        for base in self.knowledge_bases:
            options = SearchOptions(mode=mode, top_k=top_k, filters=self.filters)
            found.extend(base.search(query, options).matches)
        found.sort(key=lambda m: -m.score)
        return [with_table_header(match) for match in found[:top_k]]

    def document(self, source: str) -> list[QueryMatch]:
        for base in self.knowledge_bases:
            options = SearchOptions(mode="vector", top_k=MAX_DOCUMENT_CHUNKS,
                                    filters=_scoped(self.filters, source))
            matches = list(base.search(source, options).matches)
            if matches:
                ordered = sorted(matches, key=lambda m: (m.chunk.index, m.chunk.start))
                return [with_table_header(match) for match in ordered]
        return []

"""The passes of a file search read from one ranking instead of searching again.

A vector store search returns files, but stores rank chunks: when the best chunks
belong to too few files, :func:`~ragloom.server.v1.search.run_search`
looks further down without the files already found. Searching again with a
``file_id nin [...]`` filter did that at the price of a second query: the filter's
ids read from SQLite, the matrix gathered by them, the ranking redone (on SciFact
abstracts, 2-3 chunks each, most vector searches needed a second pass).

In vector and keyword mode a chunk's score does not depend on which other chunks
are candidates, so the filtered search's answer is the unfiltered ranking with the
found files' chunks skipped. :class:`RankedPasses` ranks chunk ids once (deeper
than the first pass needs; ids only, which costs little) and reads chunks back only
as the passes reach them. Hybrid search normalises each side over its candidates,
so a filter changes its scores: it keeps searching again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TypeGuard

from ragloom.errors import RagError
from ragloom.filters import MetadataFilter, MetadataFilters, evaluate
from ragloom.protocols import EmbeddingProvider, RankedSearchable
from ragloom.retrieval.options import SearchOptions
from ragloom.tracing import retrieval_span
from ragloom.types import QueryMatch, TextChunk

log = logging.getLogger("ragloom.retrieval.search")
#: How much deeper than its first pass a ranking starts (then doubles when reached).
DEPTH_FACTOR = 4
MIN_DEPTH = 40


def can_rank_once(store: object, options: SearchOptions) -> TypeGuard[RankedSearchable]:
    """Whether passes over ``store`` may read one ranking (see the module notes)."""
    return (options.mode in ("vector", "keyword") and not options.graph
            and isinstance(store, RankedSearchable))


class RankedPasses:
    """One knowledge base's chunk ranking for one request, read back on demand.

    ``take(top_k, exclude)`` gives what a search with ``top_k`` and the extra filter
    ``file_id nin exclude`` would give, and whether the store may hold more.
    """

    def __init__(self, store: RankedSearchable, embedder: EmbeddingProvider, query: str,
                 options: SearchOptions, knowledge_base: str) -> None:
        self.store = store
        self.embedder = embedder
        self.query = query
        self.options = options
        self.knowledge_base = knowledge_base
        self._ranked: list[tuple[str, float, float]] = []
        self._depth = 0
        self._chunks: dict[str, TextChunk] = {}

    def _rank(self, depth: int) -> None:
        with retrieval_span(self.knowledge_base, depth, self.options.mode):
            self._rank_to(depth)

    def _rank_to(self, depth: int) -> None:
        filters = self.options.filters
        self._depth = depth
        if self.options.mode == "vector":
            try:
                embedding = self.embedder.embed_query(self.query)
            except RagError as exc:
                # As search() does: keyword results when the query cannot be embedded
                # (the caller's QueryWatch reports it in the response).
                log.warning("the query could not be embedded (%s: %s); %s answers with "
                            "keyword results", type(exc).__name__, exc, self.knowledge_base)
            else:
                self._ranked = self.store.ranked_ids(embedding, top_k=depth, filters=filters)
                return
        self._ranked = self.store.keyword_ranked_ids(self.query, top_k=depth, filters=filters)

    def _complete(self) -> bool:
        """Whether the ranking holds every chunk the store would rank."""
        return len(self._ranked) < self._depth

    def _read(self, ids: Sequence[str]) -> None:
        wanted = [item for item in ids if item not in self._chunks]
        if wanted:
            self._chunks.update((c.id, c) for c in self.store.get_chunks(wanted))

    def take(self, top_k: int, exclude: Sequence[str] = ()) -> tuple[list[QueryMatch], bool]:
        if self._depth == 0:
            self._rank(max(MIN_DEPTH, top_k * DEPTH_FACTOR))
        skip = (MetadataFilters((MetadataFilter("file_id", "nin", tuple(exclude)),))
                if exclude else None)
        found: list[QueryMatch] = []
        position = 0
        while len(found) < top_k:
            if position >= len(self._ranked):
                if self._complete():
                    return found, False
                self._rank(self._depth * 2)
                continue
            # Read as many as are still needed: few are skipped in the common case.
            window = self._ranked[position:position + top_k - len(found)]
            self._read([item for item, _, _ in window])
            for item, score, raw in window:
                chunk = self._chunks.get(item)
                # A chunk deleted since the ranking is left out, as a search would.
                if chunk is None or (skip is not None and not evaluate(skip, chunk.metadata)):
                    continue
                found.append(QueryMatch(chunk=chunk, score=score, raw_score=raw,
                                        knowledge_base=self.knowledge_base))
            position += len(window)
        return found, True

"""One search entry point for every mode: vector, keyword and hybrid.

:func:`search` works with any :class:`~ragloom.protocols.VectorStore`; keyword and
hybrid modes need a store that is also
:class:`~ragloom.protocols.KeywordSearchable`. The same ``MetadataFilters`` apply
in every mode, and every match's ``score`` obeys the score contract (in [0, 1],
higher is better; see docs/retrieval.md).

When the query embedder fails (a :class:`~ragloom.errors.RagError`, e.g. the
embedding provider is unreachable) in vector or hybrid mode and the store can
search keywords, the search falls back to keyword results and says so with
``degraded=True`` and a ``notice``.

A hybrid query on a large store embeds the query and ranks by vector on a worker
thread while the caller ranks by keyword (see :mod:`ragloom.retrieval.overlap`); the
results are those of the one-thread path.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, wait
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ragloom._threads import cores_shared
from ragloom.errors import QueryError, RagError
from ragloom.filters import MetadataFilters
from ragloom.protocols import (
    EmbeddingProvider,
    EmbeddingReadable,
    KeywordSearchable,
    RankedSearchable,
    RankingView,
    VectorStore,
    ViewRankable,
)
from ragloom.retrieval.fusion import Fused, Normalization, fuse_hybrid
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.overlap import DEFAULT_OVERLAP, HybridOverlap
from ragloom.retrieval.threads import single_blas_thread
from ragloom.scores import hybrid_score
from ragloom.tracing import record_matches, record_results, retrieval_span
from ragloom.types import QueryMatch, VectorMatch

log = logging.getLogger(__name__)
#: Longest query accepted, in characters; longer ones are almost surely a mistake.
MAX_QUERY_CHARS = 100_000


@dataclass(frozen=True)
class SearchResult:
    """Matches best first; ``degraded`` is set when a fallback answered instead."""

    matches: list[QueryMatch] = field(default_factory=list)
    degraded: bool = False
    notice: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"matches": [m.to_dict() for m in self.matches], "degraded": self.degraded,
                "notice": self.notice}


def store_name(store: object) -> str:
    name = getattr(store, "name", "")
    kind = type(store).__name__
    return f"{kind} {name!r}" if isinstance(name, str) and name else kind


def check_query(query: str) -> str:
    """The query, or a QueryError saying why it cannot be searched."""
    if not isinstance(query, str):
        raise QueryError(f"a search query is text, not {type(query).__name__}")
    if not query.strip():
        raise QueryError("the search query is empty; give some words to search for")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(
            f"the search query has {len(query):,} characters; the limit is "
            f"{MAX_QUERY_CHARS:,}. Shorten it or search for its key phrases."
        )
    return query


def _to_query_matches(
    matches: list[VectorMatch], knowledge_base: str
) -> list[QueryMatch]:
    return [QueryMatch(chunk=m.chunk, score=m.score, raw_score=m.raw_score,
                       knowledge_base=knowledge_base) for m in matches]


def _finish(matches: list[QueryMatch], options: SearchOptions) -> list[QueryMatch]:
    if options.score_threshold is not None:
        matches = [m for m in matches if m.score >= options.score_threshold]
    return matches[: options.top_k]


def _keyword(
    store: object, query: str, top_k: int, filters: MetadataFilters | None
) -> list[VectorMatch]:
    if not isinstance(store, KeywordSearchable):
        raise QueryError(
            f"{store_name(store)} has no keyword search; use mode 'vector', or a store "
            "with keyword support (InMemoryVectorStore, SqliteVectorStore)"
        )
    return store.keyword_query(query, top_k=top_k, filters=filters)


class GraphSearch(Protocol):
    """Graph-aware search (``SearchOptions(graph=True)``): the usual search with graph
    candidates fused in. :func:`ragloom.graph.retrieval.graph_search` is the one
    ragloom has; the retrieval layer takes it as a collaborator and never imports the
    graph layer above it."""

    def __call__(self, store: VectorStore, embedder: EmbeddingProvider, query: str,
                 options: SearchOptions, knowledge_base: str = "") -> SearchResult: ...


_graph_search: GraphSearch | None = None


def use_graph_search(graph_search: GraphSearch | None) -> None:
    """Set the graph search that ``SearchOptions(graph=True)`` runs when :func:`search`
    is not given one; importing :mod:`ragloom.graph` sets it."""
    global _graph_search
    _graph_search = graph_search


def normalization_of(options: SearchOptions) -> Normalization:
    value = options.extra.get("normalization", "minmax")
    if value not in ("minmax", "zscore", "none"):
        raise QueryError(f"unknown score normalisation {value!r}; use minmax, zscore or none")
    return value  # type: ignore[no-any-return]


def search(
    store: VectorStore,
    embedder: EmbeddingProvider,
    query: str,
    options: SearchOptions | None = None,
    *,
    knowledge_base: str = "",
    overlap: HybridOverlap | None = None,
    graph_search: GraphSearch | None = None,
) -> SearchResult:
    """Search ``store`` for ``query`` as ``options`` say (mode, ranker, filters...).

    ``overlap`` decides when a hybrid query runs its vector side (embedding and
    ranking) beside its keyword ranking
    (default: :data:`~ragloom.retrieval.overlap.DEFAULT_OVERLAP`). ``graph_search``
    runs ``SearchOptions(graph=True)`` (default: the one :func:`use_graph_search` set,
    which importing :mod:`ragloom.graph` does).
    """
    options = options or SearchOptions()
    with retrieval_span(knowledge_base or store_name(store), options.top_k,
                        options.mode) as current, single_blas_thread():
        result = _search(store, embedder, query, options, knowledge_base,
                         overlap or DEFAULT_OVERLAP, graph_search)
        if record_results():
            record_matches(current, [m.chunk.document_id for m in result.matches],
                           [m.score for m in result.matches])
    return with_embeddings(store, result) if options.include_embeddings else result


def with_embeddings(store: object, result: SearchResult) -> SearchResult:
    """The result with each match's stored embedding attached (``include_embeddings``)."""
    if not isinstance(store, EmbeddingReadable):
        raise QueryError(f"{store_name(store)} cannot return stored embeddings; search "
                         "without include_embeddings")
    stored = store.get_embeddings([match.chunk.id for match in result.matches])
    return replace(result, matches=[replace(match, embedding=stored.get(match.chunk.id))
                                    for match in result.matches])


def _search(
    store: VectorStore,
    embedder: EmbeddingProvider,
    query: str,
    options: SearchOptions,
    knowledge_base: str,
    overlap: HybridOverlap,
    graph_search: GraphSearch | None = None,
) -> SearchResult:
    query = check_query(query)
    if options.graph:
        graph = graph_search or _graph_search
        if graph is None:
            raise QueryError("graph retrieval (graph=True) needs ragloom.graph: import "
                             "ragloom.graph, or pass graph_search to search()")
        return graph(store, embedder, query, options, knowledge_base)
    mode = options.mode
    filters = options.filters
    if mode == "keyword":
        found = _keyword(store, query, options.top_k, filters)
        return SearchResult(_finish(_to_query_matches(found, knowledge_base), options))

    can_keyword = isinstance(store, KeywordSearchable)
    depth = max(options.candidates, options.top_k)
    if mode == "hybrid" and isinstance(store, ViewRankable) and overlap.wants(store.count):
        beside = _hybrid_beside(store, embedder, overlap, query, options, knowledge_base, depth)
        if beside is not None:
            return beside
    try:
        embedding = embedder.embed_query(query)
    except RagError as exc:
        if not can_keyword:
            raise
        return _degraded(store, query, options, knowledge_base, exc)

    if mode == "vector":
        found = store.query(embedding, top_k=options.top_k, filters=filters)
        return SearchResult(_finish(_to_query_matches(found, knowledge_base), options))

    if isinstance(store, RankedSearchable):
        dense_ids = store.ranked_ids(embedding, top_k=depth, filters=filters)
        sparse_ids = store.keyword_ranked_ids(query, top_k=depth, filters=filters)
        return SearchResult(_fuse_ranked(store, dense_ids, sparse_ids, options,
                                         knowledge_base, depth))
    dense = store.query(embedding, top_k=depth, filters=filters)
    if not can_keyword:
        notice = (f"{store_name(store)} has no keyword search; hybrid search ran as "
                  "vector search")
        return SearchResult(_finish(_to_query_matches(dense, knowledge_base), options),
                            degraded=True, notice=notice)
    sparse = _keyword(store, query, depth, filters)
    return SearchResult(fuse_matches(dense, sparse, options, knowledge_base, depth=depth,
                                     limit=options.top_k))


def _degraded(store: object, query: str, options: SearchOptions, knowledge_base: str,
              exc: RagError) -> SearchResult:
    """Keyword results standing in for a search whose query could not be embedded."""
    found = _keyword(store, query, options.top_k, options.filters)
    notice = (f"the query could not be embedded ({exc}); these are keyword (BM25) "
              f"results instead of {options.mode} results")
    # Never silent: the result says it (degraded, notice) and the log does too.
    log.warning("search of %s fell back to keyword results: the query could not be "
                "embedded (%s: %s)", knowledge_base or store_name(store),
                type(exc).__name__, exc)
    return SearchResult(_finish(_to_query_matches(found, knowledge_base), options),
                        degraded=True, notice=notice)


def _hybrid_beside(
    store: ViewRankable,
    embedder: EmbeddingProvider,
    overlap: HybridOverlap,
    query: str,
    options: SearchOptions,
    knowledge_base: str,
    depth: int,
) -> SearchResult | None:
    """A hybrid search whose vector side (embedding, then ranking) runs on a worker
    while this thread ranks by keyword, both over one view of the store; None when no
    worker is free. Errors and the keyword fallback are those of the one-thread path."""
    # The embedding keeps to one core meanwhile: the keyword side has the other.
    with cores_shared():
        opened: Future[RankingView] = Future()

        def vector_side() -> list[tuple[str, float, float]] | RagError:
            try:  # before the view opens: embedding needs no lock
                embedding = embedder.embed_query(query)
            except RagError as exc:
                return exc
            return opened.result().ranked_ids(embedding, depth)

        pending = overlap.submit(vector_side)
        if pending is None:
            return None
        try:
            with store.ranking_view(options.filters) as view:
                opened.set_result(view)
                try:
                    sparse = view.keyword_ranked_ids(query, depth)
                finally:
                    # The worker reads the view: it must be done before the view closes.
                    wait([pending])
        finally:
            if not opened.done():  # the view did not open: the worker stops waiting for it
                opened.set_exception(QueryError("the store could not be read"))
                wait([pending])
        dense = pending.result()
        if isinstance(dense, RagError):
            return _degraded(store, query, options, knowledge_base, dense)
        return SearchResult(_fuse_ranked(store, dense, sparse, options, knowledge_base, depth))


def _fuse_ranked(
    store: RankedSearchable,
    dense: list[tuple[str, float, float]],
    sparse: list[tuple[str, float, float]],
    options: SearchOptions,
    knowledge_base: str,
    depth: int,
) -> list[QueryMatch]:
    """What :func:`fuse_matches` gives, from ranked ids (``depth`` of each side's):
    only the ``top_k`` chunks returned are read back (on SciFact, reading 2 x 100
    chunks cost more than the whole rest of a hybrid search)."""
    cut = (len(dense) >= depth, len(sparse) >= depth)
    fused = _fused([(item, score) for item, score, _ in dense],
                   [(item, score) for item, score, _ in sparse], options, cut, options.top_k)
    chunks = {chunk.id: chunk for chunk in store.get_chunks([item.id for item in fused])}
    # A chunk deleted between ranking and reading is left out, as a search a moment
    # later would leave it out.
    return [QueryMatch(chunk=chunks[item.id], score=item.score, raw_score=item.raw,
                       knowledge_base=knowledge_base) for item in fused if item.id in chunks]


def _fused(dense: list[tuple[str, float]], sparse: list[tuple[str, float]],
           options: SearchOptions, cut: tuple[bool, bool] | None, limit: int | None
           ) -> list[Fused]:
    """The fused ranking, scored and cut as ``options.score_normalization`` says.

    ``per_query``: the threshold applies to each side before fusion and the fused
    (per-query) score is reported. ``absolute``: fusion sees every candidate, so the
    order is the one without a threshold; each item is then scored by
    :func:`~ragloom.retrieval.scores.hybrid_score` and the threshold applies to that.
    """
    threshold = options.score_threshold
    absolute = options.score_normalization == "absolute"
    if not absolute and threshold is not None:
        dense = [(item, score) for item, score in dense if score >= threshold]
        sparse = [(item, score) for item, score in sparse if score >= threshold]
    fused = fuse_hybrid(dense, sparse, ranker=options.ranker,
                        impact_factor=options.impact_factor, alpha=options.alpha,
                        normalization=normalization_of(options), cut=cut,
                        limit=None if absolute and threshold is not None else limit)
    if not absolute:
        return fused
    vector, keyword = dict(reversed(dense)), dict(reversed(sparse))  # best per id
    scored = [Fused(item.id, hybrid_score(vector.get(item.id), keyword.get(item.id),
                                          options.alpha), item.raw) for item in fused]
    if threshold is not None:
        scored = [item for item in scored if item.score >= threshold]
    return scored if limit is None else scored[:limit]


def fuse_matches(
    dense: list[VectorMatch],
    sparse: list[VectorMatch],
    options: SearchOptions,
    knowledge_base: str = "",
    *,
    depth: int | None = None,
    limit: int | None = None,
) -> list[QueryMatch]:
    """Vector and keyword matches fused by chunk id with the ranker ``options`` name.

    ``score_threshold`` applies to the reported score (see
    :attr:`~ragloom.retrieval.options.SearchOptions.score_normalization`).
    ``depth`` is how many matches each side was asked for (see
    :func:`~ragloom.retrieval.fusion.alpha_fusion`); ``limit`` keeps the first that
    many.
    """
    # Cut short by the depth asked for? Decided before the threshold shortens them.
    cut = None if depth is None else (len(dense) >= depth, len(sparse) >= depth)
    chunks = {m.chunk.id: m.chunk for m in sparse}
    chunks.update({m.chunk.id: m.chunk for m in dense})
    fused = _fused([(m.chunk.id, m.score) for m in dense],
                   [(m.chunk.id, m.score) for m in sparse], options, cut, limit)
    return [QueryMatch(chunk=chunks[item.id], score=item.score, raw_score=item.raw,
                       knowledge_base=knowledge_base) for item in fused]

"""``vector_stores/{id}/search``: OpenAI's request mapped onto ragloom's search.

* ``filters``: OpenAI's comparison (``eq ne gt gte lt lte in nin``) and compound
  (``and or``) filters become a :class:`~ragloom.filters.MetadataFilters` over the
  file's ``attributes`` (``file_id`` and ``filename`` name the file itself).
* Results: one per file, scored by its best chunk (the contract score, in [0, 1]),
  with its best chunks as ``content``; ``max_num_results`` counts files.
* ``search_mode`` (vector, keyword, hybrid; default hybrid) and ``ranker``
  (``rrf``/``weighted`` or ``{"type": "rrf", "impact_factor": k}`` /
  ``{"type": "weighted", "alpha": a}``) are extra fields; ``ranking_options.ranker``
  takes OpenAI's ``auto``/``none``/``default-2024-11-15`` (the default ranker) or
  ``rrf``/``weighted``.
* ``rewrite_query``: the question is reduced to its content words (no model call),
  and ``search_query`` shows what was searched.
* ``degraded`` and ``notice`` (ragloom's extra fields on the page): when the query
  could not be embedded, the results are keyword (BM25) results and the notice says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragloom import json_codec
from ragloom.embeddings.query_memo import QueryMemo
from ragloom.errors import RagError
from ragloom.filters import MetadataFilter, MetadataFilters, parse_filters
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import EmbeddingProvider
from ragloom.retrieval.options import SEARCH_MODES, SearchOptions
from ragloom.retrieval.search import check_query, search
from ragloom.retrieval.threads import single_blas_thread
from ragloom.server.v1.errors import bad_request
from ragloom.server.v1.ranked_passes import RankedPasses, can_rank_once
from ragloom.types import Embedding, QueryMatch

COMPARISONS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin")
FILE_KEYS = ("file_id", "filename")
#: Chunks fetched per file asked for (results are files, matches are chunks). When
#: the chunks found belong to too few files (one long file may fill the list), the
#: search runs again without the files already found, up to MAX_PASSES times. Each
#: chunk read back costs time, so the common case stays cheap.
PER_FILE = 2
MAX_PASSES = 5
#: Best chunks shown per file.
CHUNKS_PER_FILE = 3
OPENAI_RANKERS = ("auto", "none", "default-2024-11-15")


class RankingOptions(BaseModel):
    """OpenAI's ``ranking_options``, plus Llama Stack's ``impact_factor`` (with ranker
    ``rrf``) and ``alpha`` (with ``weighted``), and ragloom's ``score_normalization``."""

    model_config = ConfigDict(extra="forbid")
    ranker: str | None = None
    score_threshold: float | None = Field(None, ge=0.0, le=1.0)
    hybrid_search: dict[str, Any] | None = None
    impact_factor: float | None = Field(None, gt=0.0)
    alpha: float | None = Field(None, ge=0.0, le=1.0)
    score_normalization: Literal["absolute", "per_query"] | None = None


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str | list[str]
    filters: dict[str, Any] | None = None
    max_num_results: int = Field(10, ge=1, le=50)
    ranking_options: RankingOptions | None = None
    rewrite_query: bool = False
    search_mode: str | None = None
    ranker: str | dict[str, Any] | None = None


def openai_filters(data: Any, param: str = "filters") -> MetadataFilters:
    """ragloom filters from OpenAI's JSON form (400 when malformed)."""
    try:
        return parse_filters(_convert(data, param))
    except RagError as exc:
        raise bad_request(f"invalid filters: {exc}", param) from exc


def _convert(node: Any, param: str) -> dict[str, Any]:
    if not isinstance(node, dict) or "type" not in node:
        raise bad_request("each filter needs a 'type' (eq, ne, gt, gte, lt, lte, in, nin, "
                          "and, or)", param)
    kind = node["type"]
    if kind in ("and", "or"):
        items = node.get("filters")
        if not isinstance(items, list):
            raise bad_request(f"a compound '{kind}' filter needs a list 'filters'", param)
        return {kind: [_convert(item, param) for item in items]}
    if kind not in COMPARISONS:
        raise bad_request(f"unknown filter type {kind!r}; use one of "
                          f"{', '.join(COMPARISONS)}, and, or", param)
    if "key" not in node or "value" not in node:
        raise bad_request(f"a '{kind}' filter needs 'key' and 'value'", param)
    key = str(node["key"])
    path = key if key in FILE_KEYS else f"attributes.{key}"
    return {"key": path, "op": kind, "value": node["value"]}


_STOP = frozenset(re.findall(r"\S+", """
a an the is are was were be been being do does did of in on at to for
from by with about what which who whom whose when where why how can could should would
may might will shall i me my we our you your it its this that these those there here and
or not please tell find show give any some"""))


def rewrite(query: str) -> str:
    """The content words of a question: a keyword-friendly query, no model needed."""
    words = re.findall(r"[\w'-]+", query)
    kept = [w for w in words if w.lower() not in _STOP]
    return " ".join(kept) or query


def _ranker(request: SearchRequest) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    ranking = request.ranking_options
    named = ranking.ranker if ranking else None
    if named is not None and named not in OPENAI_RANKERS:
        if named not in ("rrf", "weighted"):
            raise bad_request(f"unknown ranker {named!r}; use auto, none, "
                              "default-2024-11-15, rrf or weighted",
                              "ranking_options.ranker", code="unsupported_value")
        changes["ranker"] = named
    hybrid = request.ranking_options.hybrid_search if request.ranking_options else None
    if hybrid:  # OpenAI's weights of the embedding and text rankings
        vector = float(hybrid.get("embedding_weight", 1.0))
        text = float(hybrid.get("text_weight", 1.0))
        if vector < 0 or text < 0 or vector + text <= 0:
            raise bad_request("hybrid_search weights must be non-negative, not both zero",
                              "ranking_options.hybrid_search")
        changes.update(ranker="weighted", alpha=vector / (vector + text))
    if ranking is not None:  # Llama Stack's shapes: {"ranker": "rrf", "impact_factor": k}
        if ranking.impact_factor is not None:
            if changes.get("ranker") == "weighted":
                raise bad_request("impact_factor goes with ranker 'rrf', not 'weighted'",
                                  "ranking_options.impact_factor")
            changes.update(ranker="rrf", impact_factor=ranking.impact_factor)
        if ranking.alpha is not None:
            if changes.get("ranker") == "rrf":
                raise bad_request("alpha goes with ranker 'weighted', not 'rrf'",
                                  "ranking_options.alpha")
            changes.update(ranker="weighted", alpha=ranking.alpha)
        if ranking.score_normalization is not None:
            changes["score_normalization"] = ranking.score_normalization
    extra = request.ranker
    if isinstance(extra, str):
        extra = {"type": extra}
    if isinstance(extra, dict):
        kind = extra.get("type")
        if kind not in ("rrf", "weighted"):
            raise bad_request("ranker type must be 'rrf' or 'weighted'", "ranker.type",
                              code="unsupported_value")
        changes["ranker"] = kind
        if "impact_factor" in extra:
            changes["impact_factor"] = float(extra["impact_factor"])
        if "alpha" in extra:
            changes["alpha"] = float(extra["alpha"])
    return changes


def search_options(request: SearchRequest, base: SearchOptions, *, top_k: int | None = None,
                   exclude: Sequence[str] = ()) -> SearchOptions:
    mode = request.search_mode or "hybrid"
    if mode not in SEARCH_MODES:
        raise bad_request(f"search_mode must be one of {', '.join(SEARCH_MODES)}",
                          "search_mode", code="unsupported_value")
    filters = openai_filters(request.filters) if request.filters is not None else None
    if exclude:
        known = MetadataFilter("file_id", "nin", tuple(exclude))
        filters = MetadataFilters((known,) if filters is None else (filters, known))
    changes = _ranker(request)
    # With absolute scores the search itself drops what is under the threshold (after
    # fusion: the ranking is the same); per-query scores are only comparable within
    # the fused list, which group_by_file filters.
    normalization = changes.get("score_normalization", base.score_normalization)
    threshold = threshold_of(request) if normalization == "absolute" else None
    try:
        return base.with_(mode=mode, top_k=top_k or request.max_num_results * PER_FILE,
                          filters=filters, score_threshold=threshold, **changes)
    except RagError as exc:
        raise bad_request(str(exc), "ranker") from exc


def threshold_of(request: SearchRequest) -> float | None:
    return request.ranking_options.score_threshold if request.ranking_options else None


def query_text(request: SearchRequest) -> str:
    query = request.query if isinstance(request.query, str) else " ".join(request.query)
    if not query.strip():
        raise bad_request("query must not be empty", "query", code="empty_query")
    return query


@dataclass(frozen=True)
class FileHit:
    file_id: str
    filename: str
    score: float
    attributes: dict[str, Any]
    chunks: list[QueryMatch]


def group_by_file(matches: Sequence[QueryMatch], limit: int,
                  threshold: float | None = None) -> list[FileHit]:
    """One hit per file, best first, with its best chunks (in score order)."""
    hits: dict[str, FileHit] = {}
    for match in matches:
        meta = match.chunk.metadata
        file_id = str(meta.get("file_id") or match.chunk.source)
        hit = hits.get(file_id)
        if hit is None:
            if threshold is not None and match.score < threshold:
                continue
            attributes = meta.get("attributes")
            hits[file_id] = FileHit(file_id, str(meta.get("filename", "")), match.score,
                                    dict(attributes) if isinstance(attributes, dict) else {},
                                    [match])
        elif len(hit.chunks) < CHUNKS_PER_FILE:
            hit.chunks.append(match)
    return list(hits.values())[:limit]


# The passes of one search (and the knowledge bases of one question) share one query
# embedding; made per request and dropped with it.
QueryOnce = QueryMemo


class QueryWatch(QueryMemo):
    """:class:`QueryOnce` that remembers the embedder's failure: the search went on
    with keyword results (see :func:`ragloom.retrieval.search.search`)."""

    failure: RagError | None = None

    def embed_query(self, text: str) -> Embedding:
        try:
            return super().embed_query(text)
        except RagError as exc:
            self.failure = exc
            raise


@dataclass(frozen=True)
class FileSearch:
    """What a file search found, and whether a fallback answered (``notice`` says)."""

    query: str
    hits: list[FileHit]
    degraded: bool = False
    notice: str = ""


def fallback_notice(failure: RagError, mode: str) -> str:
    return (f"the query could not be embedded ({failure}); these are keyword (BM25) "
            f"results instead of {mode} results")


def run_search(kbs: Sequence[VectorKnowledgeBase], request: SearchRequest
               ) -> tuple[str, list[FileHit]]:
    """The query searched and the file hits over one or more vector stores."""
    found = search_files(kbs, request)
    return found.query, found.hits


def search_files(kbs: Sequence[VectorKnowledgeBase], request: SearchRequest, *,
                 embedder_for: Callable[[EmbeddingProvider], EmbeddingProvider] | None = None
                 ) -> FileSearch:
    """:func:`run_search`, saying whether the query embedding failed (keyword results);
    ``embedder_for`` may wrap each embedder (the server's query embedding cache)."""
    query = query_text(request)
    if request.rewrite_query:
        query = rewrite(query)
    threshold = threshold_of(request)
    limit = request.max_num_results
    for kb in kbs:
        kb.check_embedder()
    wrap = embedder_for or (lambda embedder: embedder)
    once: dict[int, QueryWatch] = {}  # one per embedder: stores sharing it embed once
    targets = [(kb, once.setdefault(id(kb.embedder), QueryWatch(wrap(kb.embedder))))
               for kb in kbs]
    rankings = _rankings(targets, request, query)
    hits: list[FileHit] = []
    for _ in range(MAX_PASSES):
        found = [h.file_id for h in hits]
        top_k = (limit - len(hits)) * PER_FILE
        if rankings is not None:
            matches, more = _taken(rankings, top_k, found)
        else:
            matches, more = _matches(targets, request, query, top_k, found)
        hits += group_by_file(matches, limit - len(hits), threshold)
        below = threshold is not None and bool(matches) and matches[-1].score < threshold
        if len(hits) >= limit or not more or below:
            break
    # Later passes rank without the files found first, so one store's hits are in rank
    # order already; several stores' hits are merged by their (absolute) scores.
    if len(kbs) > 1:
        hits.sort(key=lambda h: -h.score)
    failure = next((w.failure for w in once.values() if w.failure is not None), None)
    if failure is None:
        return FileSearch(query, hits)
    return FileSearch(query, hits, degraded=True,
                      notice=fallback_notice(failure, request.search_mode or "hybrid"))


def _rankings(targets: Sequence[tuple[VectorKnowledgeBase, QueryOnce]],
              request: SearchRequest, query: str) -> list[RankedPasses] | None:
    """One ranking per store that later passes read further down (vector and keyword
    mode), or None: every pass searches again (see ranked_passes)."""
    rankings = []
    for kb, embedder in targets:
        options = search_options(request, kb.search_options)
        if not can_rank_once(kb.store, options):
            return None
        rankings.append(RankedPasses(kb.store, embedder, check_query(query), options,
                                     kb.name))
    return rankings


def _taken(rankings: Sequence[RankedPasses], top_k: int, exclude: Sequence[str]
           ) -> tuple[list[QueryMatch], bool]:
    """What :func:`_matches` gives, read from the rankings."""
    matches: list[QueryMatch] = []
    more = False
    with single_blas_thread():
        for ranking in rankings:
            found, has_more = ranking.take(top_k, exclude)
            more = more or has_more
            matches.extend(found)
    if len(rankings) > 1:
        matches.sort(key=lambda m: -m.score)
    return matches, more


def _matches(targets: Sequence[tuple[VectorKnowledgeBase, QueryOnce]], request: SearchRequest,
             query: str, top_k: int, exclude: Sequence[str]) -> tuple[list[QueryMatch], bool]:
    """Chunk matches best first, and whether some store may have more."""
    matches: list[QueryMatch] = []
    more = False
    for kb, embedder in targets:
        options = search_options(request, kb.search_options, top_k=top_k, exclude=exclude)
        try:
            found = search(kb.store, embedder, query, options, knowledge_base=kb.name).matches
        except RagError as exc:
            if "no keyword search" in str(exc) or "is empty" in str(exc):
                raise bad_request(str(exc), "query") from exc
            raise
        more = more or len(found) >= options.top_k
        matches.extend(found)
    if len(targets) > 1:
        matches.sort(key=lambda m: -m.score)
    return matches, more


def hit_json(hit: FileHit) -> dict[str, Any]:
    return {"file_id": hit.file_id, "filename": hit.filename, "score": round(hit.score, 6),
            "attributes": hit.attributes,
            "content": [{"type": "text", "text": m.chunk.text} for m in hit.chunks]}


def page_json(query: str, hits: Sequence[FileHit], *, degraded: bool = False,
              notice: str = "") -> bytes:
    """The search results page, encoded (as FastAPI's JSONResponse would encode it),
    with ragloom's ``degraded`` and ``notice``."""
    page = {"object": "vector_store.search_results.page", "search_query": [query],
            "data": [hit_json(h) for h in hits], "has_more": False, "next_page": None,
            "degraded": degraded, "notice": notice}
    return json_codec.encode(page)

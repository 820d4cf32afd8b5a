"""Search several knowledge bases in one call and fuse their results.

Each target is ``(name, store, embedder)``; every knowledge base is searched as
``options`` say (its own mode, filters, threshold), then the lists are fused with
``options.ranker``:

* ``rrf``: reciprocal rank fusion over the knowledge bases' lists, keyed by
  (knowledge base, chunk id); a knowledge base's top hit scores 1.
* ``weighted``: the contract scores are on one scale in every store and mode, so
  the lists are merged by score.

Every match keeps ``knowledge_base`` naming where it came from.

:func:`search_knowledge_bases` does the same for knowledge-base objects (anything
with ``search(query, options)`` or ``retrieve(query, filters)``), as ``NaiveRag``
searches its knowledge bases: one knowledge base answers with its own search options;
several are searched side by side and fused by reciprocal rank
(:func:`fuse_match_lists`, the fusion the advanced pipeline's default aggregator uses).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ragloom.errors import QueryError
from ragloom.filters import MetadataFilters
from ragloom.protocols import EmbeddingProvider, VectorStore
from ragloom.retrieval.fusion import reciprocal_rank_fusion
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import SearchResult, check_query, search
from ragloom.types import QueryMatch

Target = tuple[str, VectorStore, EmbeddingProvider]


def search_many(
    targets: Sequence[Target], query: str, options: SearchOptions | None = None
) -> SearchResult:
    """Search every target knowledge base and return one fused, ranked result."""
    options = options or SearchOptions()
    check_query(query)
    if not targets:
        raise QueryError("no knowledge bases to search; name at least one")
    names = [name for name, _, _ in targets]
    if len(set(names)) != len(names):
        raise QueryError(f"knowledge base names must be distinct, got {names}")
    depth = max(options.candidates, options.top_k)
    results = _one_knowledge_base(targets[0], query, options) if len(targets) == 1 else None
    if results is None:
        per_kb = options.with_(top_k=depth)
        results = [search(store, embedder, query, per_kb, knowledge_base=name)
                   for name, store, embedder in targets]
    merged = _merge([r.matches for r in results], options)
    if options.score_threshold is not None:
        merged = [m for m in merged if m.score >= options.score_threshold]
    notices = [f"{name}: {r.notice}" for (name, _, _), r in zip(targets, results, strict=True)
               if r.notice]
    return SearchResult(merged[: options.top_k], degraded=any(r.degraded for r in results),
                        notice="; ".join(notices))


def _one_knowledge_base(
    target: Target, query: str, options: SearchOptions
) -> list[SearchResult] | None:
    """One knowledge base's results, reading back ``top_k + 1`` chunks, not every
    candidate's: its ranking is a prefix of the deeper one, and one extra result shows
    whether ties at the cut could reach further down (then None: search deeper)."""
    name, store, embedder = target
    result = search(store, embedder, query, options.with_(top_k=options.top_k + 1),
                    knowledge_base=name)
    matches = result.matches
    if len(matches) > options.top_k and matches[options.top_k - 1].score == matches[-1].score:
        return None
    return [result]


def _key(match: QueryMatch) -> str:
    return f"{match.knowledge_base}\x1f{match.chunk.id}"


#: The RRF constant :func:`search_knowledge_bases` fuses with.
KNOWLEDGE_BASE_RRF_K = 60.0


def fuse_match_lists(lists: Sequence[Sequence[QueryMatch]], k: float = KNOWLEDGE_BASE_RRF_K
                     ) -> list[QueryMatch]:
    """Reciprocal-rank fusion of match lists keyed by (knowledge base, chunk id); empty
    lists are dropped and one list passes through with its own scores."""
    kept = [list(items) for items in lists if items]
    if not kept:
        return []
    if len(kept) == 1:
        return kept[0]
    by_key = {_key(m): m for items in kept for m in items}
    fused = reciprocal_rank_fusion([[(_key(m), m.score) for m in items] for items in kept],
                                   k=k)
    return [QueryMatch(chunk=by_key[f.id].chunk, score=f.score, raw_score=f.raw,
                       knowledge_base=by_key[f.id].knowledge_base) for f in fused]


def search_knowledge_bases(
    bases: Sequence[tuple[str, Any]], query: str, options: SearchOptions | None = None,
    filters: MetadataFilters | None = None, *, max_workers: int = 4,
) -> SearchResult:
    """Search ``(name, knowledge base)`` pairs for ``query``: each with ``options``
    (else its own ``search_options``) plus ``filters``; several are searched on up to
    ``max_workers`` threads, fused by RRF and cut to ``top_k``. ``notice`` joins the
    knowledge bases' notices and ``degraded`` says there was one."""
    if not bases:
        raise QueryError("no knowledge bases to search; name at least one")

    def one(name: str, base: Any) -> tuple[list[QueryMatch], str]:
        return _search_one(name, base, query, options, filters)

    if len(bases) == 1 or max_workers == 1:
        found = [one(name, base) for name, base in bases]
    else:
        with ThreadPoolExecutor(max_workers=min(max_workers, len(bases)),
                                thread_name_prefix="ragloom-retrieve") as pool:
            futures = [pool.submit(one, name, base) for name, base in bases]
            found = [future.result() for future in futures]
    matches = fuse_match_lists([items for items, _ in found])
    if len(bases) > 1:
        top_k = (options or getattr(bases[0][1], "search_options", None)
                 or SearchOptions()).top_k
        matches = matches[:top_k]
    notice = "; ".join(sorted({text for _, text in found} - {""}))
    return SearchResult(matches, degraded=bool(notice), notice=notice)


def _search_one(name: str, base: Any, query: str, options: SearchOptions | None,
                filters: MetadataFilters | None) -> tuple[list[QueryMatch], str]:
    """One knowledge base's matches (named after it) and its notice."""
    notice = ""
    search_fn = getattr(base, "search", None)
    if callable(search_fn) and (options is not None or hasattr(base, "search_options")):
        chosen: SearchOptions = options or base.search_options
        if filters is not None:
            chosen = chosen.with_(filters=filters)
        result = search_fn(query, chosen)
        notice = str(getattr(result, "notice", "") or "")
        matches: list[QueryMatch] = list(result.matches)
    else:
        matches = list(base.retrieve(query, filters))
        if options is not None:
            matches = matches[: options.top_k]
    return ([m if m.knowledge_base else dataclasses.replace(m, knowledge_base=name)
             for m in matches], notice)


def _merge(lists: list[list[QueryMatch]], options: SearchOptions) -> list[QueryMatch]:
    by_key = {_key(m): m for matches in lists for m in matches}
    if options.ranker == "rrf":
        fused = reciprocal_rank_fusion(
            [[(_key(m), m.score) for m in matches] for matches in lists],
            k=options.impact_factor, max_lists=1)
        # Absolute scores stay each match's own; RRF only orders them.
        own = options.score_normalization == "absolute"
        return [QueryMatch(chunk=by_key[f.id].chunk,
                           score=by_key[f.id].score if own else f.score, raw_score=f.raw,
                           knowledge_base=by_key[f.id].knowledge_base) for f in fused]
    return sorted(by_key.values(), key=lambda m: (-m.score, m.knowledge_base, m.chunk.id))

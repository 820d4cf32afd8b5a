"""Search several knowledge bases in one call and fuse their results.

Each target is ``(name, store, embedder)``; every knowledge base is searched as
``options`` say (its own mode, filters, threshold), then the lists are fused with
``options.ranker``:

* ``rrf``: reciprocal rank fusion over the knowledge bases' lists, keyed by
  (knowledge base, chunk id); a knowledge base's top hit scores 1.
* ``weighted``: the contract scores are on one scale in every store and mode, so
  the lists are merged by score.

Every match keeps ``knowledge_base`` naming where it came from.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragloom.errors import QueryError
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

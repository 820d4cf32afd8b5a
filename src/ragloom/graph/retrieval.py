"""Graph-aware retrieval: entities named in the question, their neighbours, their chunks.

:func:`graph_search` runs the usual search (any mode) for a deeper candidate list,
then a graph list: the entities the question names (by name or alias), their
neighbours up to ``graph_hops`` relations away (``graph_fan_out`` strongest relations
followed from each), and the chunks that mention any of them. A chunk's graph score
is the weight of the strongest entity it mentions: a named entity weighs its
specificity (an inverse document frequency: entities in many chunks weigh less); a
neighbour weighs the seed's specificity times its own, times 0.6 to 1 by the strength
of the relations that lead to it, halved for each hop past the first. The graph only
proposes: among the chunks it brings, the usual search scores still decide.

The two lists are fused before the cut to ``top_k``: with RRF, the graph list is one
more ranking (weight ``graph_weight``); with the weighted ranker, scores are summed
with weights 1 and ``graph_weight``. A chunk that only the graph found can thus enter
the results: the second document of a two-hop question.

Retrieval sits below the graph and never imports it: importing this module (which
``import ragloom.graph`` does) hands :func:`graph_search` to
:func:`ragloom.retrieval.search.use_graph_search`, and any caller may pass it to
:func:`~ragloom.retrieval.search.search` as ``graph_search``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ragloom.errors import QueryError
from ragloom.filters import evaluate
from ragloom.graph.model import StoredEntity
from ragloom.graph.sqlite_graph import SqliteGraph
from ragloom.protocols import EmbeddingProvider, VectorStore
from ragloom.retrieval.fusion import reciprocal_rank_fusion, weighted_fusion
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import SearchResult, search, store_name, use_graph_search
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.types import QueryMatch, VectorMatch


@dataclass(frozen=True)
class GraphCandidates:
    """The graph list of one question, and the entities it started from."""

    matches: list[VectorMatch]
    seeds: list[StoredEntity]


def graph_candidates(store: VectorStore, query: str, options: SearchOptions,
                     limit: int) -> GraphCandidates:
    """Chunks mentioning the question's entities or their neighbours, best first."""
    if not isinstance(store, SqliteVectorStore):
        raise QueryError(f"{store_name(store)} keeps no knowledge graph; graph retrieval "
                         "needs the SQLite store (ingest with --graph)")
    graph = SqliteGraph(store)
    seeds = graph.entities_in_text(query)
    if not seeds:
        return GraphCandidates([], [])
    total = max(store.count(), 1)

    def idf(mentions: int) -> float:
        # In [0, 1]: an entity mentioned in every chunk tells nothing.
        return math.log(total / max(mentions, 1)) / math.log(total) if total > 1 else 1.0

    weights: dict[str, float] = {}
    for seed in seeds:
        specificity = idf(seed.mentions)
        if specificity <= 0:
            continue
        weights[seed.id] = max(weights.get(seed.id, 0.0), specificity)
        for near in graph.neighbours(seed.id, hops=options.graph_hops,
                                     fan_out=options.graph_fan_out):
            value = (specificity * idf(near.entity.mentions) * (0.6 + 0.4 * near.strength)
                     * 0.5 ** (near.hops - 1))
            weights[near.entity.id] = max(weights.get(near.entity.id, 0.0), value)
    scores: dict[str, float] = {}
    for entity_id, chunk_id, _document, _evidence in graph.mentions(list(weights)):
        scores[chunk_id] = max(scores.get(chunk_id, 0.0), weights[entity_id])
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    chunks = {c.id: c for c in store.get_chunks([chunk_id for chunk_id, _ in ranked])}
    best = ranked[0][1] if ranked else 1.0
    matches = [VectorMatch(chunk=chunks[chunk_id], score=min(1.0, value / best),
                           raw_score=value)
               for chunk_id, value in ranked if chunk_id in chunks
               and (options.filters is None or evaluate(options.filters,
                                                        chunks[chunk_id].metadata))]
    return GraphCandidates(matches[:limit], seeds)


def graph_search(store: VectorStore, embedder: EmbeddingProvider, query: str,
                 options: SearchOptions, knowledge_base: str = "") -> SearchResult:
    """:func:`~ragloom.retrieval.search.search` with graph candidates fused in."""
    depth = max(options.candidates, options.top_k)
    base = search(store, embedder, query, options.with_(graph=False, top_k=depth,
                                                        score_threshold=None),
                  knowledge_base=knowledge_base)
    found = graph_candidates(store, query, options, depth)
    by_id = {m.chunk.id: m.chunk for m in base.matches}
    by_id.update({m.chunk.id: m.chunk for m in found.matches})
    lists = [[(m.chunk.id, m.score) for m in base.matches],
             [(m.chunk.id, m.score) for m in found.matches]]
    if options.ranker == "rrf":
        fused = reciprocal_rank_fusion(lists, k=options.impact_factor,
                                       weights=[1.0, options.graph_weight])
    else:
        fused = weighted_fusion(lists, [1.0, options.graph_weight], normalization="none")
    matches = [QueryMatch(chunk=by_id[f.id], score=f.score, raw_score=f.raw,
                          knowledge_base=knowledge_base) for f in fused]
    if options.score_threshold is not None:
        matches = [m for m in matches if m.score >= options.score_threshold]
    notice = base.notice
    if not found.seeds:
        notice = "; ".join(filter(None, [notice, "no entity of the knowledge graph is named "
                                         "in the query; graph retrieval added nothing"]))
    return SearchResult(matches[:options.top_k], degraded=base.degraded, notice=notice)


use_graph_search(graph_search)

"""Run a BEIR evaluation of ragloom's search modes and rankers.

The corpus is ingested as a user's documents would be (one TextDocument per entry,
``title + "\\n\\n" + text``, the corpus id as source, the knowledge base's default
splitter), every judged query is searched, corpus documents are ranked by their
best chunk (:func:`~ragloom.retrieval.documents.documents_from_matches`), and
nDCG@10, Recall@100 and MRR@10 are reported per mode (and per ranker for hybrid).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragloom.embeddings.query_memo import QueryMemo
from ragloom.evaluation.beir import BeirDataset
from ragloom.evaluation.metrics import mean, mrr_at_k, ndcg_at_k, recall_at_k
from ragloom.protocols import Chunker, EmbeddingProvider, VectorStore
from ragloom.retrieval.documents import documents_from_matches
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import search

#: Chunks fetched per query: enough to fill 100 documents at ~2-3 chunks each.
CHUNK_DEPTH = 300
DOCUMENT_DEPTH = 100


@dataclass(frozen=True)
class EvalConfig:
    """One configuration to measure: a mode and, for hybrid, a ranker and its settings."""

    mode: str
    ranker: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    label: str = ""

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        return f"hybrid/{self.ranker}" if self.mode == "hybrid" else self.mode


@dataclass(frozen=True)
class EvalRow:
    config: str
    mode: str
    ranker: str
    ndcg_at_10: float
    recall_at_100: float
    mrr_at_10: float
    queries: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config, "mode": self.mode, "ranker": self.ranker,
                "ndcg@10": round(self.ndcg_at_10, 4), "recall@100": round(self.recall_at_100, 4),
                "mrr@10": round(self.mrr_at_10, 4), "queries": self.queries,
                "seconds": round(self.seconds, 2)}


def default_configs(
    modes: Sequence[str] = ("vector", "keyword", "hybrid"),
    rankers: Sequence[str] = ("rrf", "weighted"),
) -> list[EvalConfig]:
    configs: list[EvalConfig] = []
    for mode in modes:
        if mode == "hybrid":
            configs.extend(EvalConfig("hybrid", ranker) for ranker in rankers)
        else:
            configs.append(EvalConfig(mode))
    return configs


def ingest_dataset(
    dataset: BeirDataset,
    store: VectorStore,
    embedder: EmbeddingProvider,
    chunker: Chunker | None = None,
    *,
    name: str = "eval",
) -> int:
    """Ingest the corpus through a VectorKnowledgeBase; returns the store's chunk count."""
    from ragloom.knowledge_base import VectorKnowledgeBase

    kb = VectorKnowledgeBase(store, embedder, chunker, name=name, batch_size=256)
    kb.ingest(dataset.documents())
    return store.count()


def rank_documents(
    store: VectorStore,
    embedder: EmbeddingProvider,
    query: str,
    options: SearchOptions,
    *,
    chunk_depth: int = CHUNK_DEPTH,
    document_depth: int = DOCUMENT_DEPTH,
) -> list[str]:
    """Document keys (sources) ranked by their best chunk."""
    result = search(store, embedder, query, options.with_(top_k=chunk_depth))
    return [d.key for d in documents_from_matches(result.matches, document_depth)]


def evaluate(
    dataset: BeirDataset,
    store: VectorStore,
    embedder: EmbeddingProvider,
    configs: Sequence[EvalConfig] | None = None,
    *,
    base: SearchOptions | None = None,
    limit_queries: int | None = None,
    chunk_depth: int = CHUNK_DEPTH,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[EvalRow]:
    """Search every judged query with each configuration over an ingested store."""
    base = base or SearchOptions()
    queries = dataset.judged_queries(limit_queries)
    memo = QueryMemo(embedder)
    rows: list[EvalRow] = []
    for config in configs or default_configs():
        changes: dict[str, Any] = {"mode": config.mode, **config.options}
        if config.ranker:
            changes["ranker"] = config.ranker
        options = base.with_(**changes)
        started = time.perf_counter()
        ndcg, recall, mrr = [], [], []
        for number, (query_id, text) in enumerate(queries, start=1):
            ranking = rank_documents(store, memo, text, options, chunk_depth=chunk_depth)
            judged = dataset.qrels[query_id]
            ndcg.append(ndcg_at_k(ranking, judged, 10))
            recall.append(recall_at_k(ranking, judged, 100))
            mrr.append(mrr_at_k(ranking, judged, 10))
            if progress is not None:
                progress(config.name, number, len(queries))
        rows.append(EvalRow(config=config.name, mode=config.mode, ranker=config.ranker,
                            ndcg_at_10=mean(ndcg), recall_at_100=mean(recall),
                            mrr_at_10=mean(mrr), queries=len(queries),
                            seconds=time.perf_counter() - started))
    return rows

"""The advanced pipeline on BEIR SciFact: default hybrid vs query expansion vs each
re-ranker available here, side by side, with latency per query.

    .venv/bin/python bench/advanced_scifact.py [--llm-queries 30] [--cross-encoder PATH]

Ingests SciFact as ``bench/retrieval_scifact.py`` does (same embedding cache in
bench/results/cache/), then ranks documents by their best chunk (nDCG@10) for:

* ``hybrid`` — the default search through a RetrievalAugmentor (no LLM), all queries;
* ``hybrid+mmr`` — MaximalMarginalRelevance over the top 20 chunks (no LLM);
* ``expansion`` — ExpandingQueryTransformer (3 phrasings from the model) + two-stage RRF;
* ``hyde`` — HypotheticalAnswerTransformer (a passage written by the model) + RRF;
* ``rerank-llm`` — RerankingContentAggregator with ChatModelScoringModel (top 20);
* ``rerank-cross-encoder`` — with ``--cross-encoder PATH`` only: no cross-encoder's
  weights can be downloaded on this machine and no PyPI package ships one.

The model-based rows run on the first ``--llm-queries`` queries (the bundled
SmolLM2-135M takes seconds per call on 2 cores); ``hybrid`` is also reported on that
subset, so each row is compared with the default on the same queries.
Results go to bench/results/advanced_scifact.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _scifact import DATA, RESULTS, cached_embedder, log
from ragloom.advanced import (
    ChatModelScoringModel,
    CrossEncoderScoringModel,
    DefaultContentAggregator,
    ExpandingQueryTransformer,
    HypotheticalAnswerTransformer,
    KnowledgeBaseContentRetriever,
    QueryResults,
    RerankingContentAggregator,
    RetrievalAugmentor,
)
from ragloom.evaluation.beir import load_beir
from ragloom.evaluation.metrics import mean, ndcg_at_k
from ragloom.evaluation.runner import ingest_dataset
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.registry import DEFAULT_MODEL, make_model
from ragloom.retrieval.documents import documents_from_matches
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.rerank import MaximalMarginalRelevance
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.types import QueryMatch

CANDIDATES = 100  # chunks retrieved per query, before documents are ranked
RERANK_DEPTH = 20


class Reranked:
    """An aggregator that re-scores the top ``depth`` chunks and keeps the rest after."""

    def __init__(self, rerank: Callable[[str, list[QueryMatch]], list[QueryMatch]],
                 depth: int = RERANK_DEPTH) -> None:
        self.rerank = rerank
        self.depth = depth
        self.fusion = DefaultContentAggregator()

    def aggregate(self, question: str, results: Sequence[QueryResults]) -> list[QueryMatch]:
        fused = self.fusion.aggregate(question, results)
        head = self.rerank(question, fused[: self.depth])
        return head + fused[self.depth:]


def run(name: str, augmentor: RetrievalAugmentor, queries: list[tuple[str, str]],
        qrels: dict[str, dict[str, int]]) -> dict[str, Any]:
    scores: list[float] = []
    seconds: list[float] = []
    for number, (qid, text) in enumerate(queries, 1):
        started = time.perf_counter()
        contents = augmentor.retrieve(text).contents
        seconds.append(time.perf_counter() - started)
        ranking = [d.key for d in documents_from_matches(contents, 10)]
        scores.append(ndcg_at_k(ranking, qrels[qid], 10))
        if number % 10 == 0:
            log(f"{name}: {number}/{len(queries)} nDCG@10 so far {mean(scores):.3f}")
    return {"config": name, "queries": len(queries), "ndcg@10": round(mean(scores), 4),
            "latency_ms_mean": round(1000 * statistics.fmean(seconds), 1),
            "latency_ms_p50": round(1000 * statistics.median(seconds), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--llm", default=DEFAULT_MODEL)
    parser.add_argument("--llm-queries", type=int, default=30)
    parser.add_argument("--cross-encoder", default=None,
                        help="a local sentence-transformers CrossEncoder folder")
    parser.add_argument("--skip-llm", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS / "advanced_scifact.json")
    args = parser.parse_args()

    dataset = load_beir(args.data)
    embedder, chunker, cached = cached_embedder(dataset)
    texts = [c.text for d in dataset.documents() for c in chunker.split(d)]
    cached.warm(texts, progress=lambda a, b: log(f"embedded {a}/{b}"))
    store = InMemoryVectorStore(name="scifact")
    chunks = ingest_dataset(dataset, store, cached, chunker, name="scifact")
    log(f"ingested {chunks} chunks")
    kb = VectorKnowledgeBase(store, cached, chunker, name="scifact",
                             search=SearchOptions(top_k=CANDIDATES))
    retriever = KnowledgeBaseContentRetriever(kb)
    queries = dataset.judged_queries()
    subset = queries[: args.llm_queries]

    def augmentor(**parts: Any) -> RetrievalAugmentor:
        return RetrievalAugmentor([retriever], max_contents=None, **parts)

    rows = [run("hybrid", augmentor(), queries, dataset.qrels)]
    mmr = MaximalMarginalRelevance(cached, lambda_=0.7)
    rows.append(run("hybrid+mmr", augmentor(content_aggregator=Reranked(mmr.rerank)),
                    queries, dataset.qrels))
    rows.append(run("hybrid (subset)", augmentor(), subset, dataset.qrels))
    if args.cross_encoder:
        scorer = CrossEncoderScoringModel(args.cross_encoder)
        rerank = RerankingContentAggregator(scorer, candidates=RERANK_DEPTH)
        rows.append(run("rerank-cross-encoder (subset)",
                        augmentor(content_aggregator=Reranked(rerank.reranker.rerank)),
                        subset, dataset.qrels))
    if not args.skip_llm:
        model = make_model(args.llm)
        assert model is not None
        model.chat("Hello", max_tokens=1)  # load before timing
        rows.append(run("expansion (subset)", augmentor(
            query_transformer=ExpandingQueryTransformer(model, n=3)), subset, dataset.qrels))
        rows.append(run("hyde (subset)", augmentor(
            query_transformer=HypotheticalAnswerTransformer(model)), subset, dataset.qrels))
        llm_scorer = RerankingContentAggregator(ChatModelScoringModel(model),
                                                candidates=RERANK_DEPTH)
        rows.append(run("rerank-llm (subset)",
                        augmentor(content_aggregator=Reranked(llm_scorer.reranker.rerank)),
                        subset, dataset.qrels))

    print(f"{'config':32} {'queries':>7} {'nDCG@10':>8} {'mean ms':>9} {'p50 ms':>9}")
    for row in rows:
        print(f"{row['config']:32} {row['queries']:>7} {row['ndcg@10']:>8.4f} "
              f"{row['latency_ms_mean']:>9.1f} {row['latency_ms_p50']:>9.1f}")
    report = {"dataset": dataset.name, "embedder": embedder.name, "llm": args.llm,
              "chunks": chunks, "rows": rows,
              "cross_encoder": args.cross_encoder or "none available on this machine"}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()

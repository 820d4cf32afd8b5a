"""Retrieval quality and latency on BEIR SciFact, plus hybrid latency at 100k chunks.

    .venv/bin/python bench/retrieval_scifact.py [--explore] [--store sqlite|memory]
        [--data ../shared/data/beir/scifact]

Ingests SciFact (5,183 documents) as a user would (title + text, the default
recursive splitter sized in MiniLM tokens, the bundled all-MiniLM-L6-v2), then
reports nDCG@10 / Recall@100 / MRR@10 for vector, keyword and hybrid (RRF and
weighted) search with DEFAULT settings, documents ranked by their best chunk.
``--explore`` adds the alternatives that were measured to choose the defaults.

Chunk embeddings are cached in bench/results/cache/ (keyed by model and splitter
settings), so only the first run spends ~5-10 minutes embedding. Results go to
bench/results/retrieval_scifact.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from _scifact import DATA, RESULTS, Precomputed, cached_embedder, log
from ragloom.evaluation.beir import BeirDataset, load_beir
from ragloom.evaluation.metrics import mean, mrr_at_k, ndcg_at_k, recall_at_k
from ragloom.evaluation.runner import EvalConfig, default_configs, evaluate, ingest_dataset
from ragloom.protocols import EmbeddingProvider, VectorStore
from ragloom.retrieval.documents import documents_from_matches
from ragloom.retrieval.fusion import fuse_hybrid
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import search
from ragloom.types import Embedding, Vector


def make_store(kind: str, folder: str, name: str) -> VectorStore:
    if kind == "sqlite":
        from ragloom.stores.sqlite import SqliteVectorStore

        store: VectorStore = SqliteVectorStore(Path(folder) / f"{name}.db", collection=name)
        return store
    from ragloom.stores.memory import InMemoryVectorStore

    return InMemoryVectorStore(name=name)


# ---------------------------------------------------------------------- quality


def explore_configs() -> list[EvalConfig]:
    configs = [EvalConfig("hybrid", "rrf", {"impact_factor": k}, f"hybrid/rrf k={k}")
               for k in (10, 30, 100)]
    for norm in ("minmax", "zscore"):
        for alpha in (0.3, 0.4, 0.5, 0.6, 0.7):
            configs.append(EvalConfig("hybrid", "weighted",
                                      {"alpha": alpha, "extra": {"normalization": norm}},
                                      f"hybrid/weighted {norm} a={alpha}"))
    return configs


def document_level_fusion(
    dataset: BeirDataset, store: VectorStore, embedder: EmbeddingProvider,
    variants: Sequence[tuple[str, dict[str, Any]]], limit: int | None,
) -> list[dict[str, Any]]:
    """Fuse per-document rankings (best chunk per side) instead of chunk rankings."""
    queries = dataset.judged_queries(limit)
    sides: list[tuple[list[tuple[str, float]], list[tuple[str, float]]]] = []
    for _, text in queries:
        ranked = []
        for mode in ("vector", "keyword"):
            result = search(store, embedder, text, SearchOptions(mode=mode, top_k=300))  # type: ignore[arg-type]
            ranked.append([(d.key, d.score) for d in documents_from_matches(result.matches, 300)])
        sides.append((ranked[0], ranked[1]))
    rows = []
    for label, settings in variants:
        ndcg, recall, mrr = [], [], []
        for (query_id, _), (dense, sparse) in zip(queries, sides, strict=True):
            fused = [f.id for f in fuse_hybrid(dense, sparse, **settings)][:100]
            judged = dataset.qrels[query_id]
            ndcg.append(ndcg_at_k(fused, judged))
            recall.append(recall_at_k(fused, judged))
            mrr.append(mrr_at_k(fused, judged))
        rows.append({"config": label, "ndcg@10": round(mean(ndcg), 4),
                     "recall@100": round(mean(recall), 4), "mrr@10": round(mean(mrr), 4),
                     "queries": len(queries)})
    return rows


# ---------------------------------------------------------------------- latency


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(1000 * statistics.median(ordered), 2),
            "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 2)}


def timed(call: Callable[[], Any], repeat: int = 1) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        call()
    return (time.perf_counter() - started) / repeat


def latency(store: VectorStore, embedder: EmbeddingProvider, queries: list[str]) -> dict[str, Any]:
    """Default SearchOptions per mode: retrieval alone, and with query embedding."""
    precomputed = Precomputed(embedder, queries)
    results: dict[str, Any] = {}
    for mode in ("vector", "keyword", "hybrid"):
        options = SearchOptions(mode=mode)  # type: ignore[arg-type]
        for query in queries[:5]:  # warm caches and the model
            search(store, embedder, query, options)
        alone = [timed(lambda q=q, o=options: search(store, precomputed, q, o)) for q in queries]
        full = [timed(lambda q=q, o=options: search(store, embedder, q, o)) for q in queries]
        results[mode] = {"retrieval": percentiles(alone), "with_embedding": percentiles(full)}
    path = getattr(store, "path", None)
    if isinstance(path, str):
        # The SQLite store's FTS5 path (a one-shot CLI query, or while the in-memory copy
        # is rebuilt): a second store object on the same file that never builds the copy.
        from ragloom.stores.sqlite import SqliteVectorStore

        fts = SqliteVectorStore(path, collection=getattr(store, "name", "default"),
                                keyword_index="fts")
        for k in (10, 100):
            for query in queries[:5]:
                fts.keyword_query(query, top_k=k)
            samples = [timed(lambda q=query, k=k: fts.keyword_query(q, top_k=k))
                       for query in queries]
            results[f"keyword on FTS5, top {k}"] = {"retrieval": percentiles(samples),
                                                    "with_embedding": percentiles(samples)}
        fts.close()
    return results


def synthetic(kind: str, folder: str, size: int, queries: int = 50) -> dict[str, Any]:
    """Hybrid p50 over ``size`` random chunks (384-d vectors, Zipf-distributed words)."""
    from ragloom.types import TextChunk, TextDocument, VectorEntry

    rng = np.random.default_rng(7)
    vocabulary = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=int(n)))
                  for n in rng.integers(3, 10, size=20_000)]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    store = make_store(kind, folder, "synthetic")
    started = time.perf_counter()
    batch = 2_000
    for start in range(0, size, batch):
        entries = []
        words = rng.choice(len(vocabulary), size=(batch, 60), p=weights)
        vectors = rng.normal(size=(batch, 384)).astype(np.float32)
        for row in range(batch):
            text = " ".join(vocabulary[w] for w in words[row])
            doc = TextDocument.create(text, source=f"s{start + row}")
            chunk = TextChunk.create(doc, text, index=0, start=0, end=len(text))
            entries.append(VectorEntry(chunk=chunk, embedding=Vector(vectors[row])))
        store.add(entries)
    load_seconds = time.perf_counter() - started
    query_words = rng.choice(len(vocabulary), size=(queries, 4), p=weights)
    texts = [" ".join(vocabulary[w] for w in row) for row in query_words]
    vectors = rng.normal(size=(queries, 384)).astype(np.float32)

    class Fixed:
        name = "synthetic"
        dimension = 384

        def __init__(self) -> None:
            self.memo = {t: Vector(v) for t, v in zip(texts, vectors, strict=True)}

        def embed_documents(self, items: Sequence[str]) -> list[Embedding]:
            raise NotImplementedError

        def embed_query(self, text: str) -> Embedding:
            return self.memo[text]

    embedder = Fixed()
    out: dict[str, Any] = {"chunks": size, "store": kind, "load_seconds": round(load_seconds, 1)}
    for mode in ("vector", "keyword", "hybrid"):
        options = SearchOptions(mode=mode)  # type: ignore[arg-type]
        for text in texts[:3]:
            search(store, embedder, text, options)  # type: ignore[arg-type]
        samples = [timed(lambda t=t, o=options: search(store, embedder, t, o))  # type: ignore[arg-type]
                   for t in texts]
        out[mode] = percentiles(samples)
    close = getattr(store, "close", None)
    if callable(close):
        close()
    return out


# ------------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--store", choices=("sqlite", "memory"), default="sqlite")
    parser.add_argument("--explore", action="store_true", help="also measure alternatives")
    parser.add_argument("--limit-queries", type=int, default=None)
    parser.add_argument("--synthetic-size", type=int, default=100_000)
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS / "retrieval_scifact.json")
    args = parser.parse_args()

    dataset = load_beir(args.data)
    embedder, chunker, cached = cached_embedder(dataset)
    settings = f"{chunker.settings_key()}|{embedder.name}"
    report: dict[str, Any] = {"dataset": dataset.name, "embedder": embedder.name,
                              "splitter": settings, "store": args.store}
    with tempfile.TemporaryDirectory(prefix="ragloom-bench-") as folder:
        texts = [c.text for d in dataset.documents() for c in chunker.split(d)]
        started = time.perf_counter()
        fresh = cached.warm(texts, progress=lambda a, b: log(f"embedded {a}/{b}"))
        report["embed_seconds"] = round(time.perf_counter() - started, 1)
        report["embedded_now"] = fresh
        store = make_store(args.store, folder, "scifact")
        started = time.perf_counter()
        report["chunks"] = ingest_dataset(dataset, store, cached, chunker, name="scifact")
        report["ingest_seconds_cached_embeddings"] = round(time.perf_counter() - started, 1)
        report["documents"] = len(dataset.corpus)
        log(f"ingested {report['chunks']} chunks in {report['ingest_seconds_cached_embeddings']}s")

        configs = default_configs()
        if args.explore:
            configs += explore_configs()
        rows = evaluate(dataset, store, cached, configs, limit_queries=args.limit_queries)
        report["quality"] = [row.to_dict() for row in rows]
        if args.explore:
            report["document_level_fusion"] = document_level_fusion(
                dataset, store, cached,
                [("doc-level rrf k=60", {"ranker": "rrf"}),
                 ("doc-level weighted minmax a=0.5", {"ranker": "weighted"}),
                 ("doc-level weighted zscore a=0.5",
                  {"ranker": "weighted", "normalization": "zscore"})],
                args.limit_queries)
        queries = [text for _, text in dataset.judged_queries(100)]
        report["latency"] = latency(store, embedder, queries)
        close = getattr(store, "close", None)
        if callable(close):
            close()
        if not args.skip_synthetic:
            log(f"building the {args.synthetic_size:,}-chunk synthetic collection...")
            report["synthetic"] = synthetic(args.store, folder, args.synthetic_size)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print_table(report)


def print_table(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    quality = Table(title=f"SciFact ({report['documents']:,} docs, {report['chunks']:,} chunks, "
                          f"{report['embedder']}, {report['store']})")
    for column in ("search", "nDCG@10", "Recall@100", "MRR@10"):
        quality.add_column(column, justify="left" if column == "search" else "right")
    for row in report["quality"] + report.get("document_level_fusion", []):
        quality.add_row(row["config"], f"{row['ndcg@10']:.4f}", f"{row['recall@100']:.4f}",
                        f"{row['mrr@10']:.4f}")
    console.print(quality)
    timing = Table(title="query latency, default SearchOptions (100 SciFact queries)")
    for column in ("mode", "retrieval p50", "p95", "with embedding p50", "p95"):
        timing.add_column(column, justify="left" if column == "mode" else "right")
    for mode, values in report["latency"].items():
        timing.add_row(mode, f"{values['retrieval']['p50_ms']:.2f} ms",
                       f"{values['retrieval']['p95_ms']:.2f} ms",
                       f"{values['with_embedding']['p50_ms']:.2f} ms",
                       f"{values['with_embedding']['p95_ms']:.2f} ms")
    if "synthetic" in report:
        synth = report["synthetic"]
        for mode in ("vector", "keyword", "hybrid"):
            timing.add_row(f"{synth['chunks'] // 1000}k synthetic {mode}",
                           f"{synth[mode]['p50_ms']:.2f} ms", f"{synth[mode]['p95_ms']:.2f} ms",
                           "", "")
    console.print(timing)


if __name__ == "__main__":
    main()

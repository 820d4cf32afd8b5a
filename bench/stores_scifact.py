"""SciFact on every store: SQLite, PostgreSQL/pgvector and Milvus Lite, one run.

    .venv/bin/python bench/stores_scifact.py [--stores sqlite,pgvector,milvus]
                                             [--limit-queries N]

Each store gets SciFact (5,183 documents) through the eval path
(:func:`ragloom.evaluation.runner.ingest_dataset` and ``evaluate``: the default
splitter, the bundled all-MiniLM-L6-v2, documents ranked by their best chunk) and
reports nDCG@10 and Recall@100 for vector, keyword and hybrid (RRF, weighted)
search, the ingest time (chunk embeddings come from the bench cache in
bench/results/cache/, shared with retrieval_scifact.py, so the time is the store's
writing, chunking and bookkeeping, not the model) and query latency p50/p95 for 10
results per mode (query embeddings precomputed: the store's part only). PostgreSQL
is a throwaway server started by ``pgserver``; Milvus Lite runs in process.
Results go to bench/results/stores_scifact.json (all three stores) or
stores_scifact_<store>[_<store>].json (a subset), with the machine's load average
before and after each store (other work on the machine inflates times).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from _scifact import DATA, RESULTS, Precomputed, cached_embedder, log
from ragloom.evaluation.beir import load_beir
from ragloom.evaluation.runner import default_configs, evaluate, ingest_dataset
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import search


def open_stores(kinds: list[str], folder: Path) -> dict[str, Any]:
    stores: dict[str, Any] = {}
    for kind in kinds:
        if kind == "sqlite":
            from ragloom.stores.sqlite import SqliteVectorStore

            stores[kind] = SqliteVectorStore(folder / "scifact.db", collection="scifact")
        elif kind == "pgvector":
            import pgserver  # type: ignore[import-not-found]

            from ragloom.stores.pgvector import PgVectorStore

            # pgserver runs PostgreSQL as its own user when started as root, so the
            # data folder's parents must be traversable.
            folder.chmod(0o755)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                server = pgserver.get_server(folder / "pgdata", cleanup_mode="stop")
            stores[kind] = PgVectorStore(server.get_uri(), "scifact")
        elif kind == "milvus":
            from ragloom.stores.milvus import MilvusStore

            stores[kind] = MilvusStore(str(folder / "milvus.db"), "scifact")
        else:
            raise SystemExit(f"unknown store {kind!r}")
    return stores


def latency(store: Any, embedder: Any, queries: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in ("vector", "keyword", "hybrid"):
        options = SearchOptions(mode=mode, top_k=10)  # type: ignore[arg-type]
        search(store, embedder, queries[0], options)  # warm-up
        times = []
        for query in queries:
            started = time.perf_counter()
            search(store, embedder, query, options)
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        out[mode] = {"p50_ms": round(statistics.median(times), 2),
                     "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--stores", default="sqlite,pgvector,milvus")
    parser.add_argument("--limit-queries", type=int, default=None)
    parser.add_argument("--latency-queries", type=int, default=100)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    kinds = args.stores.split(",")
    if args.out is None:
        suffix = "" if sorted(kinds) == ["milvus", "pgvector", "sqlite"] else "_" + "_".join(kinds)
        args.out = RESULTS / f"stores_scifact{suffix}.json"

    dataset = load_beir(args.data)
    embedder, chunker, cached = cached_embedder(dataset)
    texts = [c.text for d in dataset.documents() for c in chunker.split(d)]
    cached.warm(texts, progress=lambda a, b: log(f"embedded {a}/{b}"))
    queries = [text for _, text in dataset.judged_queries(args.limit_queries)]
    fast = Precomputed(cached, queries)
    report: dict[str, Any] = {"dataset": dataset.name, "embedder": embedder.name,
                              "documents": len(dataset.corpus), "queries": len(queries),
                              "stores": {}}
    with tempfile.TemporaryDirectory(prefix="ragloom-stores-") as folder:
        stores = open_stores(kinds, Path(folder))
        for kind, store in stores.items():
            load_before = os.getloadavg()[0]
            log(f"{kind}: ingesting (load average {load_before:.1f})...")
            started = time.perf_counter()
            chunks = ingest_dataset(dataset, store, fast, chunker, name="scifact")
            ingest = time.perf_counter() - started
            log(f"{kind}: {chunks} chunks in {ingest:.1f} s; evaluating...")
            rows = evaluate(dataset, store, fast, default_configs(),
                            limit_queries=args.limit_queries)
            report["stores"][kind] = {
                "chunks": chunks, "ingest_seconds": round(ingest, 1),
                "quality": [row.to_dict() for row in rows],
                "latency": latency(store, fast, queries[: args.latency_queries]),
                "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)]}
            store.close()
            # Written after each store, so a long run keeps what it measured.
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print_table(report)


def print_table(report: dict[str, Any]) -> None:
    header = (f"SciFact ({report['documents']:,} docs, {report['queries']} queries, "
              f"{report['embedder']})")
    print(header)
    print(f"{'store':<9} {'search':<16} {'nDCG@10':>8} {'R@100':>7} {'ingest s':>9} "
          f"{'p50 ms':>7} {'p95 ms':>7}")
    for kind, data in report["stores"].items():
        for row in data["quality"]:
            mode = row["mode"]
            lat = data["latency"].get(mode, {}) if row["config"] != "hybrid/rrf" else {}
            p50, p95 = lat.get("p50_ms", float("nan")), lat.get("p95_ms", float("nan"))
            print(f"{kind:<9} {row['config']:<16} {row['ndcg@10']:>8.4f} "
                  f"{row['recall@100']:>7.4f} {data['ingest_seconds']:>9.1f} "
                  f"{p50:>7.2f} {p95:>7.2f}")


if __name__ == "__main__":
    main()

"""The whole hybrid query on the embedded store at scale, query embedding included.

Fills a SQLite store (its defaults: HNSW sidecar past 50k vectors, in-memory keyword
index) with N chunks: texts of 50 Zipf-distributed words (the generator of
``bench/filtered_search.py``), metadata ``group`` = n % 100, and clustered 384-d
unit vectors (the generator of ``bench/ann_scale.py``) bound to the default
embedder. Queries are 8 words of a stored text, embedded by the bundled default
embedder on every query, as ``ragloom search`` does. Reports the fill, the sidecar
build and keyword index build, resident memory, and p50/p95 of the query embedding
alone, vector, keyword and hybrid search (through ``ragloom.retrieval.search.search``,
the path the CLI and the server take), without and with a 1 %-selective filter. Hybrid
is timed three ways in the same run: as ``search`` decides (``hybrid``), forced onto
one thread and forced to embed the query on a worker beside the keyword ranking (see
``ragloom.retrieval.overlap``), which is how its size threshold was chosen.

    python bench/hybrid_scale.py --n 1000000 [--repeats 100]

Prints a table and writes ``bench/results/hybrid_scale_<N>.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ann_libraries import clustered
from filtered_search import timed
from ragloom.filters import parse_filters
from ragloom.registry import make_embedder
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.overlap import HybridOverlap
from ragloom.retrieval.search import search
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.types import TextChunk, TextDocument, Vector, VectorEntry

RESULTS = Path(__file__).resolve().parent / "results"
EMBEDDER = "local:all-MiniLM-L6-v2-int8"


def rss_mb() -> float:
    return round(float(psutil.Process().memory_info().rss) / 2**20, 1)


def fill(store: SqliteVectorStore, n: int, dimension: int) -> list[str]:
    rng = np.random.default_rng(1)
    vocabulary = [f"w{i}" for i in range(5000)]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    texts: list[str] = []
    started = time.perf_counter()
    for start in range(0, n, 50_000):
        vectors = clustered(min(50_000, n - start), dimension, seed=start + 1)
        for part in range(0, len(vectors), 5000):
            batch = []
            for offset in range(part, min(len(vectors), part + 5000)):
                i = start + offset
                text = " ".join(rng.choice(vocabulary, size=50, p=weights))
                texts.append(text)
                doc = TextDocument.create(text, source=f"doc{i}.txt", metadata={"group": i % 100})
                chunk = TextChunk.create(doc, text, index=0, start=0, end=len(text))
                batch.append(VectorEntry(chunk=chunk,
                                         embedding=Vector(vectors[offset].tolist())))
            store.add(batch)
        print(f"  {start + len(vectors)} chunks, {time.perf_counter() - started:.0f} s",
              flush=True)
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--folder", type=Path, default=None,
                        help="keep the database here and reuse it on the next run "
                             "(default: a temporary folder)")
    args = parser.parse_args()
    embedder = make_embedder(EMBEDDER)
    embedder.embed_query("warm up")
    load_before = psutil.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.folder or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        store = SqliteVectorStore(folder / f"hybrid_{args.n}.db")
        store.bind_embedder(embedder.name, embedder.dimension)
        started = time.perf_counter()
        if store.count() == args.n:  # --folder kept an earlier run's fill: time queries only
            with store.reading() as (conn, _):
                texts = [row[0] for row in conn.execute(
                    "SELECT text FROM chunks ORDER BY random() LIMIT 1000")]
            print(f"reusing the {args.n} chunks in {folder}", flush=True)
        else:
            texts = fill(store, args.n, embedder.dimension)
        fill_s = time.perf_counter() - started
        rss_filled = rss_mb()

        started = time.perf_counter()
        store.query(embedder.embed_query("first query"), top_k=10)  # loads the vectors
        matrix = store._matrix  # the sidecar builds in the background: wait for it
        # (below the sidecar's threshold the search stays exact: nothing to wait for)
        deadline = time.perf_counter() + (1800 if args.n >= store.ann_settings.threshold else 0)
        while (matrix is not None and not getattr(matrix, "approximate", True)
               and time.perf_counter() < deadline):
            time.sleep(2.0)
            store.query(embedder.embed_query("first query"), top_k=10)
        vectors_s = time.perf_counter() - started
        started = time.perf_counter()
        store.warm_keyword_index()
        keyword_s = time.perf_counter() - started
        rss_ready = rss_mb()
        print(f"filled {args.n} in {fill_s:.0f} s; vectors + sidecar {vectors_s:.0f} s; "
              f"keyword index {keyword_s:.0f} s; RSS {rss_filled} -> {rss_ready} MB", flush=True)

        rng = np.random.default_rng(2)
        queries = [" ".join(texts[int(i)].split()[:8]) for i in rng.integers(0, len(texts), 50)]
        del texts
        turn = iter(range(10**9))

        def query() -> str:
            return queries[next(turn) % len(queries)]

        selective = parse_filters({"key": "group", "op": "==", "value": 7})
        rows: list[dict[str, Any]] = [
            {"mode": "query embedding alone", "filter": "",
             **timed(lambda: embedder.embed_query(query()), args.repeats)}]
        ways: list[tuple[str, str, HybridOverlap | None]] = [
            ("vector", "vector", None), ("keyword", "keyword", None),
            ("hybrid", "hybrid", None),
            ("hybrid", "hybrid, one thread", HybridOverlap(min_chunks=2**62)),
            ("hybrid", "hybrid, embed beside", HybridOverlap(min_chunks=0))]
        for mode, name, overlap in ways:
            for label, filters in (("none", None), ("group == 7 (1 %)", selective)):
                options = SearchOptions(mode=mode, top_k=10, filters=filters)  # type: ignore[arg-type]
                figures = timed(lambda o=options, v=overlap: search(
                    store, embedder, query(), o, overlap=v), args.repeats)
                rows.append({"mode": name, "filter": label, **figures})
                print(f"{name} {label}: p50 {figures['p50_ms']} ms", flush=True)
        sidecar = bool(matrix is not None and getattr(matrix, "approximate", False))
        store.close()
    print(f"{'n':>8} {'mode':22} {'filter':18} {'p50 ms':>8} {'p95 ms':>8}")
    for row in rows:
        print(f"{args.n:>8} {row['mode']:22} {row['filter']:18} {row['p50_ms']:>8} "
              f"{row['p95_ms']:>8}")
    load = psutil.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"hybrid_scale_{args.n}.json"
    out.write_text(json.dumps({
        "n": args.n, "embedder": embedder.name, "fill_s": round(fill_s, 1),
        "vectors_and_sidecar_s": round(vectors_s, 1), "keyword_index_s": round(keyword_s, 1),
        "rss_filled_mb": rss_filled, "rss_ready_mb": rss_ready, "sidecar": sidecar,
        "load_avg_before": load_before, "load_avg_after": load, "rows": rows}, indent=2))
    print(f"load average {load[0]:.1f}; wrote {out}")


if __name__ == "__main__":
    main()

"""Filtered search on the embedded store: the metadata index against json_extract.

Fills a SQLite store with N synthetic chunks (Zipf-distributed words, 384-d vectors
from the hashing embedder, metadata ``group`` = n % 100, so ``group == 7`` keeps 1 %),
then times vector, keyword and hybrid queries with and without that filter through
``ragloom.retrieval.search.search`` (the path the CLI and the server take), and the
old ``json_extract`` filter SQL for the same filter in the same run. Prints a table
and writes ``bench/results/filtered_search_<N>.json``.

    python bench/filtered_search.py --n 100000
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ragloom.filters import parse_filters
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import search
from ragloom.stores.sqlite import SqliteVectorStore, filtered_ids_sql
from ragloom.stores.sqlite_filters import compile_filters
from ragloom.testing import HashingEmbedder
from ragloom.types import TextChunk, TextDocument, VectorEntry

RESULTS = Path(__file__).resolve().parent / "results"


def fill(store: SqliteVectorStore, embedder: HashingEmbedder, n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{i}" for i in range(5000)]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    store.bind_embedder(embedder.name, embedder.dimension)
    texts: list[str] = []
    for start in range(0, n, 2000):
        batch = []
        for i in range(start, min(n, start + 2000)):
            text = " ".join(rng.choice(vocabulary, size=50, p=weights))
            texts.append(text)
            doc = TextDocument.create(text, source=f"doc{i}.txt",
                                      metadata={"group": i % 100, "year": 2000 + i % 25})
            chunk = TextChunk.create(doc, text, index=0, start=0, end=len(text))
            batch.append(VectorEntry(chunk=chunk, embedding=embedder.embed_query(text)))
        store.add(batch)
    return texts


def timed(fn: Any, repeats: int) -> dict[str, float]:
    fn()  # warm caches (vectors, keyword copy) once
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {"p50_ms": round(statistics.median(times), 2),
            "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    embedder = HashingEmbedder(384)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "kb.db"
        store = SqliteVectorStore(db, ann="off")
        started = time.perf_counter()
        texts = fill(store, embedder, args.n, seed=1)
        fill_s = time.perf_counter() - started
        rng = np.random.default_rng(2)
        queries = [" ".join(texts[int(i)].split()[:8]) for i in rng.integers(0, len(texts), 20)]
        selective = parse_filters({"key": "group", "op": "==", "value": 7})
        turn = iter(range(10**9))

        def query() -> str:
            return queries[next(turn) % len(queries)]

        for mode in ("vector", "keyword", "hybrid"):
            for label, filters in (("none", None), ("group == 7 (1 %)", selective)):
                options = SearchOptions(mode=mode, top_k=10, filters=filters)  # type: ignore[arg-type]
                figures = timed(lambda o=options: search(store, embedder, query(), o),
                                args.repeats)
                rows.append({"n": args.n, "mode": mode, "filter": label, **figures})
        with store.reading() as (_, cid):
            assert cid is not None
        conn = sqlite3.connect(db)
        old_where, old_params = compile_filters(selective)
        before = (f"SELECT id FROM chunks WHERE collection_id = ? AND {old_where}",
                  [cid, *old_params])
        # The SQL the store's filtered queries run, from the store's own function.
        index = filtered_ids_sql(conn, cid, selective)
        for label, (sql, params) in (("json_extract (before)", before),
                                     ("chunk_meta index", index)):
            figures = timed(lambda s=sql, p=params: conn.execute(s, p).fetchall(), args.repeats)
            rows.append({"n": args.n, "mode": "filter only", "filter": label, **figures})
        conn.close()
        store.close()
    print(f"filled {args.n} chunks in {fill_s:.1f} s")
    print(f"{'mode':12} {'filter':24} {'p50 ms':>8} {'p95 ms':>8}")
    for row in rows:
        print(f"{row['mode']:12} {row['filter']:24} {row['p50_ms']:>8} {row['p95_ms']:>8}")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"filtered_search_{args.n}.json"
    out.write_text(json.dumps({"fill_s": round(fill_s, 1), "rows": rows}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

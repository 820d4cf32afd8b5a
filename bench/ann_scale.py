"""The embedded store's vector search at scale: exact matrix against the HNSW sidecar.

N clustered 384-d unit vectors (the generator of ``bench/ann_libraries.py``), the
classes the SQLite store uses (``DenseMatrix`` for exact search, ``HnswSidecar``),
one search thread. Reports build time, index memory, recall@10 against exact search
and query p50/p95 for exact search and for the sidecar at several ``ef`` values.
Prints a table and writes ``bench/results/ann_scale_<N>.json``.

    python bench/ann_scale.py --n 1000000 --queries 300
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ann_libraries import clustered
from ragloom.stores.ann import AnnSettings, HnswSidecar
from ragloom.stores.exact import DenseMatrix

RESULTS = Path(__file__).resolve().parent / "results"


def rss_mb() -> float:
    return float(psutil.Process().memory_info().rss) / 2**20


def percentiles(times: list[float]) -> tuple[float, float]:
    ms = np.array(times) * 1000
    return round(float(np.percentile(ms, 50)), 3), round(float(np.percentile(ms, 95)), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--ef", type=int, nargs="+", default=[32, 64, 128, 256])
    parser.add_argument("--m", type=int, default=AnnSettings.m)
    parser.add_argument("--ef-construction", type=int, default=AnnSettings.ef_construction)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    started = time.perf_counter()
    data = clustered(args.n, 384, seed=1)
    queries = clustered(args.queries, 384, seed=2)
    ids = [f"c{i}" for i in range(args.n)]
    print(f"generated {args.n} vectors in {time.perf_counter() - started:.1f} s", flush=True)

    exact = DenseMatrix("dot", 384)
    exact.upsert(zip(ids, data, strict=True))
    truth: list[set[str]] = []
    times: list[float] = []
    with threadpool_limits(1):
        for query in queries:
            t0 = time.perf_counter()
            hits = exact.search(query, 10)
            times.append(time.perf_counter() - t0)
            truth.append({item for item, _, _ in hits})
    rows: list[dict[str, Any]] = []
    p50, p95 = percentiles(times)
    rows.append(dict(index="exact (numpy)", n=args.n, ef="", build_s=0.0,
                     memory_mb=round(data.nbytes / 2**20, 1), recall_at_10=1.0,
                     p50_ms=p50, p95_ms=p95))
    print(f"exact: p50 {p50} ms", flush=True)
    del exact
    gc.collect()

    settings = AnnSettings(m=args.m, ef_construction=args.ef_construction,
                           build_threads=args.threads)
    before = rss_mb()
    sidecar = HnswSidecar(384, settings)
    started = time.perf_counter()
    sidecar.build(ids, data, stamp="bench")
    build_s = time.perf_counter() - started
    memory = rss_mb() - before
    print(f"hnsw build {build_s:.1f} s, +{memory:.0f} MB", flush=True)
    for ef in args.ef:
        sidecar.settings = AnnSettings(m=args.m, ef_construction=args.ef_construction,
                                       ef_search=ef)
        hits_total = 0
        times = []
        for n, query in enumerate(queries):
            t0 = time.perf_counter()
            found = sidecar.search(query, 10) or []
            times.append(time.perf_counter() - t0)
            hits_total += len({item for item, _ in found} & truth[n])
        p50, p95 = percentiles(times)
        rows.append(dict(index=f"hnsw m={args.m} efc={args.ef_construction}", n=args.n, ef=ef,
                         build_s=round(build_s, 1), memory_mb=round(memory, 1),
                         recall_at_10=round(hits_total / (10 * len(queries)), 4),
                         p50_ms=p50, p95_ms=p95))
    print(f"{'index':24} {'n':>8} {'ef':>4} {'build s':>8} {'mem MB':>8} {'recall@10':>9} "
          f"{'p50 ms':>7} {'p95 ms':>7}")
    for row in rows:
        print(f"{row['index']:24} {row['n']:>8} {row['ef']!s:>4} {row['build_s']:>8} "
              f"{row['memory_mb']:>8} {row['recall_at_10']:>9} {row['p50_ms']:>7} "
              f"{row['p95_ms']:>7}")
    load = psutil.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"ann_scale_{args.n}.json"
    out.write_text(json.dumps({"args": vars(args), "load_avg": load, "rows": rows}, indent=2))
    print(f"load average {load[0]:.1f}; wrote {out}")


if __name__ == "__main__":
    main()

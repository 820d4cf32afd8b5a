"""Vector search at scale in the server-backed stores: pgvector HNSW and Milvus Lite.

The same N clustered 384-d unit vectors and queries as ``bench/ann_scale.py`` (the
generator of ``bench/ann_libraries.py``), so the rows sit beside the exact matrix and
the HNSW sidecar. For each engine: load time, index build time, index memory,
recall@10 against exact search (numpy, same run) and query p50/p95, one query at a
time from one client thread.

- **pgvector**: a PostgreSQL started here by ``pgserver``; a table of the same shape
  as the store's vector column, loaded with ``COPY``; the HNSW index the store builds
  (``vector_ip_ops``, its default ``m``/``ef_construction``), built with 2 workers and
  enough ``maintenance_work_mem`` to hold the graph; the query is the store's
  ``ORDER BY embedding <#> q LIMIT k`` at several ``hnsw.ef_search``. Memory is the
  index's size on disk (what PostgreSQL keeps in shared buffers when it is hot).
- **Milvus Lite** (``milvus-lite``): it offers FLAT and IVF_FLAT only (no HNSW), so
  the rows are FLAT (exact) and IVF_FLAT at several ``nprobe``. Memory is the growth
  of the resident set of this process and its children while the collection is
  loaded and indexed (Milvus Lite runs inside the client process).

    python bench/ann_scale_servers.py --n 1000000 --queries 300 [--engines pgvector milvus]

Prints a table and writes ``bench/results/ann_scale_servers_<N>.json``.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ann_libraries import clustered, exact_top
from ann_scale import percentiles

RESULTS = Path(__file__).resolve().parent / "results"
Matrix = npt.NDArray[np.float32]


def recall(found: list[list[int]], truth: npt.NDArray[np.int64]) -> float:
    hits = sum(len(set(row) & set(truth[n].tolist())) for n, row in enumerate(found))
    return round(hits / truth.size, 4)


def vector_literal(vector: Matrix) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"


def bench_pgvector(data: Matrix, queries: Matrix, truth: npt.NDArray[np.int64],
                   ef_values: list[int], m: int, ef_construction: int) -> list[dict[str, Any]]:
    import pgserver  # type: ignore[import-not-found]
    import psycopg

    folder = Path(tempfile.mkdtemp(prefix="ragloom-bench-pg-"))
    folder.chmod(0o755)  # pgserver runs PostgreSQL as its own user when started as root
    rows: list[dict[str, Any]] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = pgserver.get_server(folder / "pgdata", cleanup_mode="stop")
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("CREATE TABLE bench_vectors (id bigint PRIMARY KEY, "
                         f"embedding vector({data.shape[1]}) NOT NULL)")
            started = time.perf_counter()
            with conn.cursor() as cur:
                for start in range(0, len(data), 50_000):
                    buffer = io.StringIO()
                    for offset, vector in enumerate(data[start:start + 50_000]):
                        buffer.write(f"{start + offset}\t{vector_literal(vector)}\n")
                    buffer.seek(0)
                    with cur.copy("COPY bench_vectors (id, embedding) FROM STDIN") as copy:
                        while chunk := buffer.read(1 << 20):
                            copy.write(chunk)
            load_s = time.perf_counter() - started
            print(f"pgvector: loaded {len(data)} vectors in {load_s:.1f} s", flush=True)
            conn.execute("SET maintenance_work_mem = '4GB'")
            conn.execute("SET max_parallel_maintenance_workers = 1")  # 2 processes in all
            started = time.perf_counter()
            conn.execute("CREATE INDEX bench_hnsw ON bench_vectors USING hnsw "
                         f"(embedding vector_ip_ops) WITH (m = {m}, "
                         f"ef_construction = {ef_construction})")
            build_s = time.perf_counter() - started
            size = conn.execute("SELECT pg_relation_size('bench_hnsw')").fetchone()
            memory_mb = round(float(size[0] if size else 0) / 2**20, 1)
            print(f"pgvector: hnsw built in {build_s:.1f} s, {memory_mb} MB", flush=True)
            literals = [vector_literal(q) for q in queries]
            for ef in ef_values:
                conn.execute(f"SET hnsw.ef_search = {int(ef)}")
                for literal in literals[:20]:  # warm the buffers
                    conn.execute("SELECT id FROM bench_vectors ORDER BY embedding <#> %s::vector "
                                 "LIMIT 10", (literal,)).fetchall()
                times: list[float] = []
                found: list[list[int]] = []
                for literal in literals:
                    t0 = time.perf_counter()
                    result = conn.execute("SELECT id FROM bench_vectors ORDER BY embedding <#> "
                                          "%s::vector LIMIT 10", (literal,)).fetchall()
                    times.append(time.perf_counter() - t0)
                    found.append([int(r[0]) for r in result])
                p50, p95 = percentiles(times)
                rows.append(dict(index=f"pgvector hnsw m={m} efc={ef_construction}",
                                 n=len(data), ef=ef, load_s=round(load_s, 1),
                                 build_s=round(build_s, 1), memory_mb=memory_mb,
                                 recall_at_10=recall(found, truth), p50_ms=p50, p95_ms=p95))
                print(f"pgvector ef={ef}: recall {rows[-1]['recall_at_10']} p50 {p50} ms "
                      f"p95 {p95} ms", flush=True)
        server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def tree_rss_mb() -> float:
    """This process and its children: Milvus Lite may run in-process or beside it."""
    me = psutil.Process()
    total = float(me.memory_info().rss)
    for child in me.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            continue
    return total / 2**20


def bench_milvus(data: Matrix, queries: Matrix, truth: npt.NDArray[np.int64],
                 nprobe_values: list[int], nlist: int, flat_queries: int) -> list[dict[str, Any]]:
    from pymilvus import DataType, MilvusClient

    folder = Path(tempfile.mkdtemp(prefix="ragloom-bench-milvus-"))
    rows: list[dict[str, Any]] = []
    name = "bench_vectors"
    try:
        client = MilvusClient(str(folder / "bench.db"))
        schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("embedding", DataType.FLOAT_VECTOR, dim=data.shape[1])
        client.create_collection(name, schema=schema)
        before = tree_rss_mb()
        started = time.perf_counter()
        for start in range(0, len(data), 10_000):
            part = data[start:start + 10_000]
            client.insert(name, [{"id": start + i, "embedding": v}
                                 for i, v in enumerate(part.tolist())])
        client.flush(name)
        load_s = time.perf_counter() - started
        print(f"milvus: inserted {len(data)} vectors in {load_s:.1f} s", flush=True)
        # One insert, then each index in turn: inserting a million rows twice would
        # double the run for the same data.
        for kind in ("FLAT", "IVF_FLAT"):
            index = client.prepare_index_params()
            params = {"nlist": nlist} if kind == "IVF_FLAT" else {}
            index.add_index("embedding", index_type=kind, metric_type="IP", params=params)
            started = time.perf_counter()
            client.create_index(name, index)
            client.load_collection(name)
            build_s = time.perf_counter() - started
            memory_mb = round(tree_rss_mb() - before, 1)
            print(f"milvus {kind}: index+load {build_s:.1f} s, +{memory_mb} MB", flush=True)
            # Exact search scans every vector (seconds a query at 1M): fewer queries.
            asked = queries[:flat_queries] if kind == "FLAT" else queries
            for nprobe in (nprobe_values if kind == "IVF_FLAT" else [0]):
                search_params = {"metric_type": "IP",
                                 "params": {"nprobe": nprobe} if nprobe else {}}
                for q in asked[:5]:
                    client.search(name, [q.tolist()], limit=10, search_params=search_params)
                times: list[float] = []
                found: list[list[int]] = []
                for q in asked:
                    t0 = time.perf_counter()
                    result = client.search(name, [q.tolist()], limit=10,
                                           search_params=search_params)
                    times.append(time.perf_counter() - t0)
                    found.append([int(hit["id"]) for hit in result[0]])
                p50, p95 = percentiles(times)
                label = f"milvus-lite {kind}" + (f" nlist={nlist}" if nprobe else "")
                rows.append(dict(index=label, n=len(data), ef=nprobe or "",
                                 load_s=round(load_s, 1), build_s=round(build_s, 1),
                                 memory_mb=memory_mb,
                                 recall_at_10=recall(found, truth[:len(asked)]),
                                 p50_ms=p50, p95_ms=p95, queries=len(asked)))
                print(f"milvus {kind} nprobe={nprobe}: recall {rows[-1]['recall_at_10']} "
                      f"p50 {p50} ms p95 {p95} ms", flush=True)
            client.release_collection(name)
            client.drop_index(name, "embedding")
        client.drop_collection(name)
        gc.collect()
        client.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--engines", nargs="+", default=["pgvector", "milvus"],
                        choices=["pgvector", "milvus"])
    parser.add_argument("--ef", type=int, nargs="+", default=[40, 100, 200, 400, 800])
    parser.add_argument("--m", type=int, default=16, help="the PgVectorStore default")
    parser.add_argument("--ef-construction", type=int, default=64,
                        help="the PgVectorStore default")
    parser.add_argument("--nprobe", type=int, nargs="+", default=[8, 32, 128])
    parser.add_argument("--nlist", type=int, default=1024)
    parser.add_argument("--flat-queries", type=int, default=50,
                        help="queries for Milvus FLAT (exact: seconds each at 1M)")
    args = parser.parse_args()

    started = time.perf_counter()
    data = clustered(args.n, 384, seed=1)
    queries = clustered(args.queries, 384, seed=2)
    truth = exact_top(data, queries, 10)
    print(f"generated {args.n} vectors and the exact top-10 in "
          f"{time.perf_counter() - started:.1f} s", flush=True)
    load_before = psutil.getloadavg()
    rows: list[dict[str, Any]] = []
    out = RESULTS / f"ann_scale_servers_{args.n}.json"

    def save() -> None:
        # After each engine: a long run that is stopped keeps what it measured.
        RESULTS.mkdir(exist_ok=True)
        out.write_text(json.dumps({"args": vars(args), "load_avg_before": load_before,
                                   "load_avg_after": psutil.getloadavg(), "rows": rows},
                                  indent=2))

    if "pgvector" in args.engines:
        rows += bench_pgvector(data, queries, truth, args.ef, args.m, args.ef_construction)
        save()
    if "milvus" in args.engines:
        rows += bench_milvus(data, queries, truth, args.nprobe, args.nlist, args.flat_queries)
        save()
    print(f"{'index':34} {'n':>8} {'ef':>4} {'load s':>7} {'build s':>8} {'mem MB':>8} "
          f"{'recall@10':>9} {'p50 ms':>7} {'p95 ms':>7}")
    for row in rows:
        print(f"{row['index']:34} {row['n']:>8} {row['ef']!s:>4} {row['load_s']:>7} "
              f"{row['build_s']:>8} {row['memory_mb']:>8} {row['recall_at_10']:>9} "
              f"{row['p50_ms']:>7} {row['p95_ms']:>7}")
    load = psutil.getloadavg()
    print(f"load average {load[0]:.1f}; wrote {out}")


if __name__ == "__main__":
    main()

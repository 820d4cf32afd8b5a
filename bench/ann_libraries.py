"""Pick the HNSW library for the embedded store's approximate index by measurement.

Builds an HNSW index over clustered 384-d unit vectors with usearch, hnswlib and
faiss-cpu (whichever are installed), then measures build time, index memory,
recall@10 against exact search and single-thread query latency at a few ``ef``
values. Prints a table and writes ``bench/results/ann_libraries.json``.

    python bench/ann_libraries.py --n 100000 --queries 500
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import psutil

RESULTS = Path(__file__).resolve().parent / "results"
Matrix = npt.NDArray[np.float32]


def clustered(n: int, dim: int, seed: int, centres: int = 1000, rank: int = 24) -> Matrix:
    """Unit vectors around random centres, each cluster spread along a few directions.

    Sentence embeddings have a low intrinsic dimension: isotropic noise in all 384
    dimensions (the hardest case for any graph index) is not what a store holds.
    The generator is fixed (same seed, same world) for every library compared.
    """
    world = np.random.default_rng(0)
    middle = world.standard_normal((centres, dim)).astype(np.float32)
    basis = world.standard_normal((centres, rank, dim)).astype(np.float32) / np.sqrt(rank)
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, centres, n)
    data = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 50_000):
        part = labels[start:start + 50_000]
        weights = rng.standard_normal((len(part), rank)).astype(np.float32)
        spread = np.einsum("nr,nrd->nd", weights, basis[part])
        noise = 0.15 * rng.standard_normal((len(part), dim)).astype(np.float32)
        data[start:start + 50_000] = middle[part] + 1.2 * spread + noise
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    return data


def exact_top(data: Matrix, queries: Matrix, k: int) -> npt.NDArray[np.int64]:
    out = np.empty((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), 64):
        sims = queries[start:start + 64] @ data.T
        part = np.argpartition(-sims, k, axis=1)[:, :k]
        order = np.take_along_axis(sims, part, axis=1).argsort(axis=1)[:, ::-1]
        out[start:start + 64] = np.take_along_axis(part, order, axis=1)
    return out


def rss_mb() -> float:
    return float(psutil.Process().memory_info().rss) / 2**20


class Library:
    name = ""

    def build(self, data: Matrix, m: int, ef_construction: int, threads: int) -> None: ...
    def set_ef(self, ef: int) -> None: ...
    def search(self, query: Matrix, k: int) -> list[int]: ...


class Usearch(Library):
    name = "usearch"

    def build(self, data: Matrix, m: int, ef_construction: int, threads: int) -> None:
        from usearch.index import Index

        self.index = Index(ndim=data.shape[1], metric="ip", dtype="f32", connectivity=m,
                           expansion_add=ef_construction)
        self.index.add(np.arange(len(data)), data, threads=threads)

    def set_ef(self, ef: int) -> None:
        self.index.expansion_search = ef

    def search(self, query: Matrix, k: int) -> list[int]:
        return [int(x) for x in self.index.search(query, k, threads=1).keys]


class Hnswlib(Library):
    name = "hnswlib"

    def build(self, data: Matrix, m: int, ef_construction: int, threads: int) -> None:
        import hnswlib

        self.index = hnswlib.Index(space="ip", dim=data.shape[1])
        self.index.init_index(max_elements=len(data), M=m, ef_construction=ef_construction)
        self.index.set_num_threads(threads)
        self.index.add_items(data, np.arange(len(data)))
        self.index.set_num_threads(1)

    def set_ef(self, ef: int) -> None:
        self.index.set_ef(ef)

    def search(self, query: Matrix, k: int) -> list[int]:
        labels, _ = self.index.knn_query(query, k=k)
        return [int(x) for x in labels[0]]


class Faiss(Library):
    name = "faiss"

    def build(self, data: Matrix, m: int, ef_construction: int, threads: int) -> None:
        import faiss

        faiss.omp_set_num_threads(threads)
        self.index = faiss.IndexHNSWFlat(data.shape[1], m, faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = ef_construction
        self.index.add(data)
        faiss.omp_set_num_threads(1)

    def set_ef(self, ef: int) -> None:
        self.index.hnsw.efSearch = ef

    def search(self, query: Matrix, k: int) -> list[int]:
        _, labels = self.index.search(query.reshape(1, -1), k)
        return [int(x) for x in labels[0]]


def available() -> list[Library]:
    found: list[Library] = []
    for cls, module in ((Usearch, "usearch"), (Hnswlib, "hnswlib"), (Faiss, "faiss")):
        try:
            __import__(module)
        except ImportError:
            continue
        found.append(cls())
    return found


def measure(lib: Library, data: Matrix, queries: Matrix, truth: npt.NDArray[np.int64],
            args: argparse.Namespace) -> list[dict[str, Any]]:
    before = rss_mb()
    started = time.perf_counter()
    lib.build(data, args.m, args.ef_construction, args.threads)
    build_s = time.perf_counter() - started
    memory = rss_mb() - before
    rows: list[dict[str, Any]] = []
    for ef in args.ef:
        lib.set_ef(ef)
        hits = 0
        times: list[float] = []
        for i, query in enumerate(queries):
            t0 = time.perf_counter()
            found = lib.search(query, 10)
            times.append(time.perf_counter() - t0)
            hits += len(set(found) & set(truth[i].tolist()))
        ms = np.array(times) * 1000
        rows.append(dict(library=lib.name, n=len(data), m=args.m,
                         ef_construction=args.ef_construction, ef=ef,
                         build_s=round(build_s, 1), memory_mb=round(memory, 1),
                         recall_at_10=round(hits / (10 * len(queries)), 4),
                         p50_ms=round(float(np.percentile(ms, 50)), 3),
                         p95_ms=round(float(np.percentile(ms, 95)), 3)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=128)
    parser.add_argument("--ef", type=int, nargs="+", default=[32, 64, 128, 256])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--libraries", nargs="*", default=None)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    data = clustered(args.n, args.dim, seed=1)
    queries = clustered(args.queries, args.dim, seed=2)
    truth = exact_top(data, queries, 10)
    rows: list[dict[str, Any]] = []
    libraries: list[Library] = available()
    if args.libraries:
        libraries = [lib for lib in libraries if lib.name in args.libraries]
    for lib in libraries:
        rows.extend(measure(lib, data, queries, truth, args))
    header = f"{'library':8} {'n':>8} {'ef':>4} {'build s':>8} {'mem MB':>7} " \
             f"{'recall@10':>9} {'p50 ms':>7} {'p95 ms':>7}"
    print(header)
    for row in rows:
        print(f"{row['library']:8} {row['n']:>8} {row['ef']:>4} {row['build_s']:>8} "
              f"{row['memory_mb']:>7} {row['recall_at_10']:>9} {row['p50_ms']:>7} "
              f"{row['p95_ms']:>7}")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"ann_libraries_{args.n}.json"
    out.write_text(json.dumps({"args": vars(args), "rows": rows}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

"""Memory and build time of the in-memory keyword index (the SQLite store's copy).

    .venv/bin/python bench/keyword_memory.py [--chunks 100000] [--scifact PATH]

Builds a :class:`~ragloom.stores.bm25.BM25Index` over the synthetic collection of
``bench/retrieval_scifact.py`` (random 60-word chunks over a 20,000-word Zipf
vocabulary; 100,000 chunks by default) and, when the data is there, over SciFact's
abstracts; reports the memory it holds (tracemalloc: Python objects and NumPy
buffers), the peak during the build, the process RSS growth, the build time and
the p50 of keyword queries. Then it replaces 1% of the chunks (remove + add), as a
writer would, and times that. Results go to bench/results/keyword_memory.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

from ragloom.stores.bm25 import BM25Index

HERE = Path(__file__).resolve().parent
SCIFACT = HERE.parent.parent / "shared" / "data" / "beir" / "scifact"


def synthetic(size: int) -> tuple[list[tuple[str, str]], list[str]]:
    rng = np.random.default_rng(7)
    vocabulary = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=int(n)))
                  for n in rng.integers(3, 10, size=20_000)]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    words = rng.choice(len(vocabulary), size=(size, 60), p=weights)
    items = [(f"{n:032x}", " ".join(vocabulary[w] for w in row)) for n, row in enumerate(words)]
    queries = [" ".join(vocabulary[w] for w in row)
               for row in rng.choice(len(vocabulary), size=(50, 4), p=weights)]
    return items, queries


def scifact(folder: Path) -> tuple[list[tuple[str, str]], list[str]]:
    items = []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            items.append((f"{doc['_id']:0>32}", f"{doc['title']}\n\n{doc['text']}"))
    with (folder / "queries.jsonl").open(encoding="utf-8") as lines:
        queries = [json.loads(line)["text"] for line in lines][:100]
    return items, queries


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(name: str, items: list[tuple[str, str]], queries: list[str]) -> dict[str, Any]:
    gc.collect()
    rss_before = rss_mib()
    tracemalloc.start()
    started = time.perf_counter()
    index = BM25Index()
    index.add(items)
    build = time.perf_counter() - started
    gc.collect()
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_growth = rss_mib() - rss_before
    for query in queries[:5]:
        index.search(query, 10)
    samples = []
    for query in queries:
        started = time.perf_counter()
        index.search(query, 10)
        samples.append(time.perf_counter() - started)
    changed = items[: max(1, len(items) // 100)]
    started = time.perf_counter()
    index.remove(item_id for item_id, _ in changed)
    index.add(changed)
    update = time.perf_counter() - started
    text_mib = sum(len(text.encode()) for _, text in items) / 2**20
    return {"collection": name, "chunks": len(items), "text_mib": round(text_mib, 1),
            "held_mib": round(held / 2**20, 1), "peak_mib": round(peak / 2**20, 1),
            "max_rss_growth_mib": round(rss_growth, 1), "build_seconds": round(build, 2),
            "query_p50_ms": round(1000 * statistics.median(samples), 3),
            "replace_1pct_seconds": round(update, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--scifact", type=Path, default=SCIFACT)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "keyword_memory.json")
    args = parser.parse_args()
    rows = [measure(f"synthetic {args.chunks:,}", *synthetic(args.chunks))]
    if (args.scifact / "corpus.jsonl").exists():
        rows.append(measure("SciFact abstracts", *scifact(args.scifact)))
    else:
        print(f"no SciFact at {args.scifact}; synthetic only", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    columns = list(rows[0])
    print(" | ".join(columns))
    for row in rows:
        print(" | ".join(str(row[column]) for column in columns))


if __name__ == "__main__":
    main()

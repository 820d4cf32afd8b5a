"""Peak memory of an ingest as the collection grows: 1k, 5k and 10k documents.

    .venv/bin/python bench/ingest_memory.py [--sizes 1000 5000 10000]

Each size is generated as small text files (about 1-3 KB, several chunks each) and
ingested by ``IngestionPipeline.run_paths`` with the fast hashing embedder in a fresh
child process, which reports its peak RSS (``resource.getrusage``). Streaming means
the peak should stay flat as the folder grows: the pipeline holds one batch of
chunks and a few parsed files, not the collection. Prints a table and writes
bench/results/ingest_memory.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "ingest_memory.json"
WORDS = ["river", "stone", "cloud", "bike", "lunch", "holiday", "warranty", "frame", "brake",
         "chain", "wheel", "policy", "staff", "request", "notice", "battery", "motor", "charge",
         "ride", "road"]


def generate(folder: Path, count: int) -> None:
    rng = random.Random(count)
    for i in range(count):
        sub = folder / f"part{i // 500:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        paragraphs = ["\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20)))
                                for _ in range(4)) for _ in range(rng.randint(2, 6))]
        (sub / f"doc{i}.txt").write_text(f"Document {i}\n\n" + "\n\n".join(paragraphs))


def child(folder: str, db: str) -> None:
    import resource

    from ragloom.ingestion import ParseOptions
    from ragloom.knowledge_base import VectorKnowledgeBase
    from ragloom.stores.sqlite import SqliteVectorStore
    from ragloom.testing import HashingEmbedder

    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    with SqliteVectorStore(db, collection="default") as store:
        kb = VectorKnowledgeBase(store, HashingEmbedder(256), batch_size=256)
        report = kb.pipeline().run_paths([folder], parsing=ParseOptions())
        chunks = store.count()
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"documents": len(report.new), "chunks": chunks, "seconds": seconds,
                      "baseline_mb": baseline / 1024, "peak_mb": peak / 1024,
                      "skipped": len(report.skipped)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 10000])
    parser.add_argument("--child", nargs=2, metavar=("FOLDER", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    rows = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="ragloom-ingest-memory-") as tmp:
            folder, db = Path(tmp) / "docs", Path(tmp) / "kb.db"
            generate(folder, size)
            done = subprocess.run([sys.executable, __file__, "--child", str(folder), str(db)],
                                  capture_output=True, text=True, check=True)
            row = json.loads(done.stdout)
            # The SQLite store keeps every vector in memory for exact search (float32).
            row["store_vectors_mb"] = row["chunks"] * 256 * 4 / 2**20
            row["db_mb"] = sum(os.path.getsize(p) for p in Path(tmp).glob("kb.db*")) / 1e6
            rows.append(row)
            print(f"{size}: done in {row['seconds']:.1f} s", flush=True)
    print(f"{'documents':>9} {'chunks':>7} {'seconds':>8} {'docs/s':>7} {'start MB':>9} "
          f"{'peak MB':>8} {'growth MB':>10} {'vectors MB':>11} {'DB MB':>7}")
    for row in rows:
        print(f"{row['documents']:>9} {row['chunks']:>7} {row['seconds']:>8.1f} "
              f"{row['documents'] / row['seconds']:>7.0f} {row['baseline_mb']:>9.1f} "
              f"{row['peak_mb']:>8.1f} {row['peak_mb'] - row['baseline_mb']:>10.1f} "
              f"{row['store_vectors_mb']:>11.1f} "
              f"{row['db_mb']:>7.1f}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"embedder": "fake:hashing-256", "rows": rows}, indent=2)
                       + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

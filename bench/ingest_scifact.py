"""End-to-end ingest throughput on SciFact, against raw embedding throughput.

    .venv/bin/python bench/ingest_scifact.py [--limit N] [--embedder PROVIDER:MODEL]
                                             [--data BEIR_FOLDER]

Writes the SciFact corpus (one .txt file per document: title, blank line, text) to
a temporary folder, then measures in one process:

1. raw: ``embedder.embed_documents`` over every chunk text (the same splitter and
   model as the pipeline; no files, no store);
2. end to end: ``IngestionPipeline.run_paths`` on the folder (hash, parse (plain
   text in-process), split on the reader thread, embed, store in SQLite while the
   next batch embeds), then one search to show it is searchable;
3. re-run on the unchanged folder.

Prints a table and writes bench/results/ingest_scifact.json.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

# The shared SciFact copy sits beside the repository: <repo>/../shared/data/beir/scifact.
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir" / "scifact"
RESULTS = Path(__file__).resolve().parent / "results" / "ingest_scifact.json"


def write_corpus(folder: Path, limit: int | None, data: Path = DATA) -> list[str]:
    paths: list[str] = []
    with (data / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if limit is not None and len(paths) >= limit:
                break
            record = json.loads(line)
            path = folder / f"{record['_id']}.txt"
            path.write_text(f"{record.get('title', '')}\n\n{record.get('text', '')}",
                            encoding="utf-8")
            paths.append(str(path))
    return paths


def backend_of(embedder: Any) -> str:
    for attribute in ("backend", "_backend"):
        value = getattr(embedder, attribute, None)
        if isinstance(value, str):
            return value
    return f"{type(embedder).__module__}.{type(embedder).__name__}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="documents (default: all)")
    from ragloom.registry import DEFAULT_EMBEDDER

    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--data", type=Path, default=DATA,
                        help="BEIR SciFact folder (default: ../shared/data/beir/scifact "
                             "beside the repository)")
    args = parser.parse_args()

    from ragloom.ingestion import ParseOptions
    from ragloom.knowledge_base import VectorKnowledgeBase, default_chunker
    from ragloom.loaders import load_file
    from ragloom.registry import make_embedder
    from ragloom.stores.sqlite import SqliteVectorStore

    embedder = make_embedder(args.embedder)
    chunker = default_chunker(embedder)
    with tempfile.TemporaryDirectory(prefix="ragloom-ingest-bench-") as tmp:
        folder = Path(tmp) / "scifact"
        folder.mkdir()
        paths = write_corpus(folder, args.limit, args.data)
        texts = []
        for path in paths:
            for result in load_file(path):
                if result.document is not None:
                    texts.extend(c.text for c in chunker.split(result.document))
        embedder.embed_documents(texts[:16])  # load the model outside the timings
        backend = backend_of(embedder)
        print(f"{len(paths)} documents, {len(texts)} chunks; embedder {embedder.name} "
              f"({backend}), batch {args.batch_size}", flush=True)

        started = time.perf_counter()
        for start in range(0, len(texts), args.batch_size):
            embedder.embed_documents(texts[start:start + args.batch_size])
        raw_seconds = time.perf_counter() - started
        print(f"raw embedding: {raw_seconds:.1f} s", flush=True)

        db = Path(tmp) / "db" / "ragloom.db"
        db.parent.mkdir()
        with SqliteVectorStore(db, collection="default") as store:
            kb = VectorKnowledgeBase(store, embedder, chunker)
            pipeline = kb.pipeline(batch_size=args.batch_size)
            started = time.perf_counter()
            first = pipeline.run_paths([str(folder)], parsing=ParseOptions())
            hits = kb.retrieve("vitamin D deficiency and bone fractures")
            e2e_seconds = time.perf_counter() - started
            print(f"end to end: {e2e_seconds:.1f} s", flush=True)
            started = time.perf_counter()
            second = kb.pipeline(batch_size=args.batch_size).run_paths(
                [str(folder)], parsing=ParseOptions())
            rerun_seconds = time.perf_counter() - started
            chunks = store.count()
        db_bytes = sum(os.path.getsize(p) for p in db.parent.iterdir())

    result = {
        "documents": len(paths), "chunks": chunks, "chunk_texts": len(texts),
        "embedder": embedder.name, "backend": backend, "batch_size": args.batch_size,
        "raw_seconds": round(raw_seconds, 2),
        "raw_chunks_per_s": round(len(texts) / raw_seconds, 1),
        "e2e_seconds": round(e2e_seconds, 2),
        "e2e_documents_per_s": round(len(first.new) / e2e_seconds, 1),
        "e2e_chunks_per_s": round(first.chunks_written / e2e_seconds, 1),
        "e2e_over_raw": round(raw_seconds / e2e_seconds, 3),
        "rerun_seconds": round(rerun_seconds, 2),
        "rerun_fraction": round(rerun_seconds / e2e_seconds, 4),
        "rerun_embedded": second.texts_embedded, "rerun_unchanged": len(second.unchanged),
        "skipped": len(first.skipped), "searchable": bool(hits),
        "db_mb": round(db_bytes / 1e6, 1),
        "cores": os.cpu_count(),
    }
    rows = [
        ("documents / chunks", f"{result['documents']} / {result['chunks']}"),
        ("embedder (backend)", f"{result['embedder']} ({backend})"),
        ("raw embedding", f"{raw_seconds:.1f} s, {result['raw_chunks_per_s']} chunks/s"),
        ("end to end", f"{e2e_seconds:.1f} s, {result['e2e_documents_per_s']} docs/s, "
                       f"{result['e2e_chunks_per_s']} chunks/s"),
        ("end-to-end / raw throughput", f"{result['e2e_over_raw']:.3f} (target >= 0.90)"),
        ("re-run, unchanged folder", f"{rerun_seconds:.2f} s = "
                                     f"{100 * result['rerun_fraction']:.1f} % of first run "
                                     f"(target < 10 %), {second.texts_embedded} embedded"),
        ("database size", f"{result['db_mb']} MB"),
        ("searchable", str(result["searchable"])),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

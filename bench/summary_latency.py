"""How long a summary of a 20-page document takes, with the models loaded.

    .venv/bin/python bench/summary_latency.py [--runs 3] [--pages 20]

Builds one long Markdown document from the public texts in the repository (the
SQuAD 2.0 "Normans" article in ../shared/data/squad2 when present, and the text
documents of bench/qa/dev), cut to ``--pages`` pages of about 500 words each, ingests
it into a scratch knowledge base with the bundled embedder, then asks "What are the
main points of <title>?" through ``NaiveRag`` with the bundled model, ``--runs``
times after one warm-up. Prints the wall time (p50, max), the points and citations,
the machine's load average, and writes bench/results/summary_latency.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "summary_latency.json"
WORDS_PER_PAGE = 500


def _sections() -> list[tuple[str, str]]:
    sections: list[tuple[str, str]] = []
    squad = ROOT.parent / "shared" / "data" / "squad2" / "normans-dev-v2.0.json"
    if squad.exists():
        data = json.loads(squad.read_text(encoding="utf-8"))
        article = data["data"][0] if "data" in data else data
        for number, paragraph in enumerate(article["paragraphs"], start=1):
            sections.append((f"{article['title']}, part {number}", paragraph["context"]))
    for path in sorted((ROOT / "bench" / "qa" / "dev" / "docs").glob("*")):
        if path.suffix in (".md", ".txt"):
            sections.append((path.stem.replace("-", " ").title(),
                             path.read_text(encoding="utf-8")))
    return sections


def build_document(pages: int) -> str:
    budget = pages * WORDS_PER_PAGE
    parts = ["# A long report\n"]
    used = 0
    while used < budget:
        for title, text in _sections():
            if used >= budget:
                break
            body = text.replace("\n# ", "\n### ").replace("\n## ", "\n### ")
            parts.append(f"\n## {title}\n\n{body.strip()}\n")
            used += len(body.split())
    return "".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pages", type=int, default=20)
    args = parser.parse_args()

    from ragloom.knowledge_base import VectorKnowledgeBase
    from ragloom.rag import NaiveRag
    from ragloom.registry import DEFAULT_EMBEDDER, DEFAULT_MODEL, make_embedder, make_model
    from ragloom.stores.sqlite import SqliteVectorStore
    from ragloom.types import TextDocument

    text = build_document(args.pages)
    words = len(text.split())
    with tempfile.TemporaryDirectory() as scratch:
        store = SqliteVectorStore(Path(scratch) / "ragloom.db", collection="report")
        kb = VectorKnowledgeBase(store, make_embedder(DEFAULT_EMBEDDER), name="report")
        started = time.perf_counter()
        kb.ingest([TextDocument.create(text, source="long-report.md")])
        ingest_s = time.perf_counter() - started
        rag = NaiveRag(kb, make_model(DEFAULT_MODEL))
        question = "What are the main points of the long report?"
        rag.query(question)  # warm-up: models loaded, caches filled
        times: list[float] = []
        answer = None
        for _ in range(args.runs):
            started = time.perf_counter()
            answer = rag.query(question)
            times.append(time.perf_counter() - started)
    assert answer is not None
    load = os.getloadavg()
    result = {
        "pages": args.pages, "words": words, "chunks_ingest_s": round(ingest_s, 2),
        "runs": args.runs, "p50_s": round(statistics.median(times), 3),
        "max_s": round(max(times), 3), "kind": answer.kind, "points": len(answer.points),
        "citations": answer.citations, "load_average": [round(x, 2) for x in load],
        "python": sys.version.split()[0],
    }
    print("| document | words | warm summary p50 | max | points | load average |")
    print("|---|---|---|---|---|---|")
    print(f"| {args.pages} pages | {words} | {result['p50_s']:.2f} s | {result['max_s']:.2f} s "
          f"| {result['points']} | {load[0]:.1f} |")
    print()
    print(answer.answer)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

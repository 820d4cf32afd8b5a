"""Answer quality on the bench/qa sources, per source, split and kind.

    .venv/bin/python bench/qa_eval.py [--split dev|test|all] [--source NAME ...]
        [--limit N] [--llm local:smollm2] [--pipeline before|after] [--quiet] [--no-save]

Each source is a folder of bench/qa/ with a questions.jsonl and its documents
(``docs/``, or the folder named by ``"docs"`` in its ``source.json``): ``squad2``
(SQuAD 2.0, Normans), ``answers72`` (the 72 questions of bench/answers), ``dev``,
``fresh`` (batch d, dev) and ``test`` (the new documents; see bench/qa/README.md).
Each source's documents go into their own scratch SQLite knowledge base (as
``ragloom ingest`` does), and its questions of the chosen split are asked the way
``ragloom ask`` does (hybrid search, top 5). Prints a table per source and one per kind, and writes
bench/results/qa_eval_<split>.json (not with --limit or --no-save).

The default split is ``dev``. The ``test`` split is locked: run it only for the
final report, never while tuning.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from answers_eval import kind_table, open_rag, printer, split_table
from ragloom.errors import InvalidInputError
from ragloom.evaluation.answers import (
    KINDS,
    AnswerQuestion,
    AnswerReport,
    evaluate_answers,
    filter_split,
    load_questions,
)
from ragloom.registry import DEFAULT_EMBEDDER, DEFAULT_MODEL, make_model

HERE = Path(__file__).resolve().parent
QA = HERE / "qa"
SOURCES = ("squad2", "answers72", "dev", "fresh", "test")
RESULTS = HERE / "results"


def source_docs(folder: Path) -> Path:
    """The documents folder of a source: ``docs/`` or ``source.json``'s ``docs``."""
    meta = folder / "source.json"
    if meta.is_file():
        return (folder / json.loads(meta.read_text())["docs"]).resolve()
    return folder / "docs"


def source_questions(name: str, split: str) -> list[AnswerQuestion]:
    """The questions of one source in ``split`` (``all``: every one); [] when none."""
    path = QA / name / "questions.jsonl"
    if not path.is_file():
        return []
    try:
        return filter_split(load_questions(path), split)
    except InvalidInputError as exc:
        if "no question is in" in str(exc):
            return []
        raise


def counts_table(sources: list[str]) -> str:
    """A Markdown table of how many questions each source has per split and kind."""
    rows: dict[tuple[str, str], dict[str, int]] = {}
    for name in sources:
        for question in source_questions(name, "all"):
            row = rows.setdefault((name, question.split or "-"), {})
            row[question.kind or "-"] = row.get(question.kind or "-", 0) + 1
    kinds = [k for k in KINDS if any(k in row for row in rows.values())]
    lines = ["| source | split | documents | questions | " + " | ".join(kinds) + " |",
             "|---|---|---|---|" + "---|" * len(kinds)]
    for (name, split), row in rows.items():
        docs = source_docs(QA / name)
        count = sum(1 for p in docs.iterdir() if p.is_file()) if docs.is_dir() else 0
        lines.append(f"| {name} | {split} | {count} | {sum(row.values())} | "
                     + " | ".join(str(row.get(k, 0)) for k in kinds) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test", "all"), default="dev")
    parser.add_argument("--source", action="append", choices=SOURCES, default=None,
                        help="a source to run (repeatable; default: every one)")
    parser.add_argument("--limit", type=int, default=None,
                        help="ask only the first N questions of each source")
    parser.add_argument("--llm", default=DEFAULT_MODEL)
    parser.add_argument("--pipeline", choices=("before", "after"), default="after")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--no-save", action="store_true")
    parser.add_argument("--counts", action="store_true",
                        help="only count the questions per source, split and kind (asks "
                        "nothing, shows no question)")
    args = parser.parse_args()
    if args.counts:
        print(counts_table(args.source or list(SOURCES)))
        return

    model = make_model(args.llm)
    results: dict[str, Any] = {}
    every: list[Any] = []
    for name in args.source or SOURCES:
        questions = source_questions(name, args.split)[: args.limit]
        if not questions:
            print(f"{name}: no questions in split {args.split}", flush=True)
            continue
        docs = source_docs(QA / name)
        print(f"{name}: {len(questions)} questions, documents in {docs}", flush=True)
        with tempfile.TemporaryDirectory(prefix=f"ragloom-qa-{name}-") as scratch:
            rag, knowledge_base, ingest_seconds = open_rag(
                docs, Path(scratch) / "qa.db", args.llm, grounded=args.pipeline == "after",
                model=model)
            try:
                report = evaluate_answers(rag.query, questions, progress=printer(args.quiet))
            finally:
                knowledge_base.store.close()
        every.extend(report.scores)
        results[name] = {"docs": str(docs.relative_to(HERE.parent)) if docs.is_relative_to(
            HERE.parent) else str(docs), "ingest_seconds": round(ingest_seconds, 2),
            **report.to_dict()}
        print(kind_table(f"{name}, per kind", results[name]["summary"]["by_kind"]), flush=True)
    if not results:
        raise SystemExit(f"no questions in split {args.split}")
    overall = AnswerReport(every).summary()
    summaries = {name: r["summary"] for name, r in results.items()}
    print(split_table(f"split {args.split}, pipeline {args.pipeline}, {args.llm}",
                      {**summaries, "all sources": overall}))
    print(kind_table("all sources, per kind", overall["by_kind"]))
    if args.no_save or args.limit:
        return
    path = RESULTS / f"qa_eval_{args.split}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"split": args.split, "llm": args.llm, "embedder": DEFAULT_EMBEDDER,
            "pipeline": args.pipeline, "python": sys.version.split()[0],
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "summary": overall, "sources": results}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    print(f"saved to {path}")


if __name__ == "__main__":
    main()

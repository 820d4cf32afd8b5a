"""Answer quality of `ragloom ask` on documents the project has never seen.

    .venv/bin/python bench/answers_eval.py [--pipeline before|after] [--split dev|test|all]
        [--llm local:smollm2] [--limit N]

Ingests bench/answers/docs/ (11 documents: policies, a manual, FAQs, CSV, XLSX, PDF,
PPTX, DOCX) into a scratch knowledge base with the default embedder, then asks the
72 questions of bench/answers/questions.jsonl (60 answerable, 12 not) the way
`ragloom ask` does (hybrid search, top 5 passages). ``before`` is the pipeline as
it was before grounding (whole passages, free generation: ``NaiveRag(grounded=False)``),
``after`` the default. Prints a table per split (``dev`` was used for tuning,
``test`` was not) and merges the results into bench/results/answers_eval.json.
The helpers (:func:`open_rag`, :func:`printer`, :func:`split_table`,
:func:`kind_table`) are shared with bench/qa_eval.py.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ragloom.evaluation.answers import (
    AnswerScore,
    evaluate_answers,
    filter_split,
    ingest_folder,
    load_questions,
)
from ragloom.rag import NaiveRag
from ragloom.registry import DEFAULT_EMBEDDER, DEFAULT_MODEL, make_model
from ragloom.retrieval.options import SearchOptions

HERE = Path(__file__).resolve().parent
DOCS = HERE / "answers" / "docs"
QUESTIONS = HERE / "answers" / "questions.jsonl"
RESULTS = HERE / "results" / "answers_eval.json"

COLUMNS = ("answer_accuracy", "citation_accuracy", "correct_refusals",
           "answers_with_unsupported_numbers", "unsupported_claims", "false_refusals",
           "seconds_p50")


def split_table(title: str, summaries: dict[str, dict[str, Any]]) -> str:
    """A Markdown table, one row per summary (split or source)."""
    lines = [title, "| split | questions | answer acc | citation acc | refusals ok | "
             "refusal precision | unanswerable answered | unsupported-number answers | "
             "unsupported claims | false refusals | p50 s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, row in summaries.items():
        lines.append(
            f"| {name} | {row['questions']} | {row['answer_accuracy']:.1%} | "
            f"{row['citation_accuracy']:.1%} | {row['correct_refusals']:.1%} | "
            f"{row['refusal_precision']:.1%} | {row['unanswerable_answered']} | "
            f"{row['answers_with_unsupported_numbers']} | {row['unsupported_claims']} | "
            f"{row['false_refusals']} | {row['seconds_p50']:.2f} |")
    return "\n".join(lines)


def kind_table(title: str, by_kind: dict[str, dict[str, Any]]) -> str:
    """A Markdown table of the share right per kind (unanswerable: refused)."""
    lines = [title, "| kind | questions | right | accuracy | refused |", "|---|---|---|---|---|"]
    for kind, row in by_kind.items():
        lines.append(f"| {kind} | {row['questions']} | {row['right']} | "
                     f"{row['accuracy']:.1%} | {row['refused']} |")
    return "\n".join(lines)


def open_rag(docs: Path, db_path: Path, llm: str, *, grounded: bool = True,
             model: Any = None) -> tuple[NaiveRag, Any, float]:
    """Ingest ``docs`` into the SQLite file ``db_path`` and build the `ragloom ask`
    pipeline (hybrid search, top 5): (rag, knowledge base, ingest seconds)."""
    started = time.perf_counter()
    knowledge_base = ingest_folder(docs, db_path, embedder=DEFAULT_EMBEDDER)
    ingest_seconds = time.perf_counter() - started
    rag = NaiveRag(knowledge_base, model if model is not None else make_model(llm),
                   search=SearchOptions(mode="hybrid", top_k=5), grounded=grounded)
    return rag, knowledge_base, ingest_seconds


def printer(quiet: bool) -> Any:
    """A progress callback printing one line per answer (or nothing when ``quiet``)."""
    def show(score: AnswerScore) -> None:
        if quiet:
            return
        mark = ("ok " if score.correct else "BAD") if score.question.answerable else (
            "ref" if score.refused else "INV")
        print(f"{mark} {score.question.id:11} {score.question.kind:12} {score.seconds:5.1f}s "
              f"{score.answer[:110]!r} cited={score.cited} unsup={score.unsupported}",
              flush=True)
    return show


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline", choices=("before", "after"), default="after")
    parser.add_argument("--split", choices=("dev", "test", "all"), default=None)
    parser.add_argument("--llm", default=DEFAULT_MODEL)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--every", type=int, default=1,
                        help="Ask every Nth question only (a spread-out sample; the "
                        "pipeline before grounding writes up to 256 tokens per answer).")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args()

    questions = filter_split(load_questions(QUESTIONS), args.split)
    questions = questions[:: args.every]
    questions = questions[: args.limit] if args.limit else questions
    with tempfile.TemporaryDirectory(prefix="ragloom-answers-") as scratch:
        rag, knowledge_base, ingest_seconds = open_rag(
            DOCS, Path(scratch) / "answers.db", args.llm, grounded=args.pipeline == "after")
        rag.query("warm-up: how long is the lunch break?")
        report = evaluate_answers(rag.query, questions, progress=printer(args.quiet))
        knowledge_base.store.close()
    data = report.to_dict()
    summaries = {"all": data["summary"], **data["splits"]}
    print(split_table(f"pipeline {args.pipeline}, {args.llm}", summaries))
    print(kind_table("per kind", data["summary"]["by_kind"]))
    if args.no_save or args.limit or args.split:
        return
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    saved[args.pipeline] = {"llm": args.llm, "embedder": DEFAULT_EMBEDDER, "every": args.every,
                            "ingest_seconds": round(ingest_seconds, 2),
                            "python": sys.version.split()[0], **data}
    RESULTS.write_text(json.dumps(saved, indent=2, ensure_ascii=False) + "\n")
    print(f"saved to {RESULTS}")


if __name__ == "__main__":
    main()

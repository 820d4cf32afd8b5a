"""``ragloom eval --answers FILE``: answer accuracy, citations, support and refusals."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from rich.table import Table

from ragloom.cli.common import (
    console,
    open_knowledge_base,
    open_model,
    out,
    print_json,
)
from ragloom.errors import InvalidInputError


def run_answer_eval(questions_file: Path, *, docs: Path | None, db: str | None,
                    kb: str | None, llm: str | None, embedder: str,
                    json_output: bool, top_k: int = 3, split: str | None = None,
                    squad: bool = False) -> None:
    """Ask every question the way ``ragloom ask`` does and print the scores
    (only the ``split`` ones, when given; with SQuAD's normalisation when ``squad``)."""
    from ragloom.evaluation.answers import (
        AnswerScore,
        evaluate_answers,
        filter_split,
        ingest_folder,
        load_questions,
    )
    from ragloom.rag import NaiveRag
    from ragloom.retrieval.options import SearchOptions

    questions = filter_split(load_questions(questions_file), split)
    model = open_model(llm, None)
    if model is None:
        raise InvalidInputError("--answers needs a language model; --llm none only retrieves")

    def show(score: AnswerScore) -> None:
        if json_output:
            return
        q = score.question
        mark = ("right" if score.correct else "wrong") if q.answerable else (
            "refused" if score.refused else "answered")
        console.print(f"{mark:8} {q.question}", markup=False, highlight=False)

    with tempfile.TemporaryDirectory(prefix="ragloom-answers-") as scratch:
        if docs is not None:
            if not json_output:
                console.print(f"ingesting {docs} with {embedder}...", markup=False)
            knowledge_base = ingest_folder(docs, Path(scratch) / "answers.db",
                                           embedder=embedder)
        else:
            knowledge_base = open_knowledge_base(db, kb, None, create=False)
        try:
            rag = NaiveRag(knowledge_base, model,
                           search=SearchOptions(mode="hybrid", top_k=top_k))
            report = evaluate_answers(rag.query, questions, progress=show,
                                      matching="squad" if squad else None)
        finally:
            knowledge_base.store.close()
    data: dict[str, Any] = {"questions_file": str(questions_file), "llm": model.name,
                            "split": split or "all",
                            "matching": "squad" if squad else "per question",
                            **report.to_dict()}
    if json_output:
        print_json(data)
        return
    _print_summary(data["summary"])
    _print_kinds(data["summary"]["by_kind"])


def _print_summary(summary: dict[str, Any]) -> None:
    table = Table(title=f"{summary['questions']} questions "
                        f"({summary['answerable']} answerable, {summary['unanswerable']} not)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    rows = [
        ("answer accuracy", f"{summary['answer_accuracy']:.1%}"),
        ("citation accuracy", f"{summary['citation_accuracy']:.1%} of {summary['answered']}"),
        ("unanswerable refused (refusal recall)", f"{summary['refusal_recall']:.1%}"),
        ("refusal precision", f"{summary['refusal_precision']:.1%}"),
        ("answerable refused", str(summary["false_refusals"])),
        ("unanswerable answered", str(summary["unanswerable_answered"])),
        ("answers with an unsupported number", str(summary["answers_with_unsupported_numbers"])),
        ("unsupported claims", str(summary["unsupported_claims"])),
        ("seconds per question (p50)", f"{summary['seconds_p50']:.2f}"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    out.print(table)


def _print_kinds(by_kind: dict[str, dict[str, Any]]) -> None:
    table = Table(title="per kind (unanswerable: right when refused)")
    for name, justify in (("kind", "left"), ("questions", "right"), ("right", "right"),
                          ("accuracy", "right"), ("refused", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for kind, row in by_kind.items():
        table.add_row(kind, str(row["questions"]), str(row["right"]),
                      f"{row['accuracy']:.1%}", str(row["refused"]))
    out.print(table)

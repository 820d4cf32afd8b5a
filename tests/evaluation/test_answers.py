"""Answer evaluation: loading question sets, scoring answers, and ``eval --answers``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragloom.errors import InvalidInputError
from ragloom.evaluation.answers import (
    AnswerQuestion,
    contains_answer,
    evaluate_answers,
    load_questions,
    normalise,
    score_answer,
)
from ragloom.rag import RagAnswer
from ragloom.types import QueryMatch, TextChunk, TextDocument
from tests.evaluation.test_eval_cmd import app


def source(text: str, name: str) -> QueryMatch:
    document = TextDocument.create(text, source=f"/docs/{name}")
    return QueryMatch(chunk=TextChunk.create(document, text, index=0, start=0, end=len(text)),
                      score=1.0)


LUNCH = AnswerQuestion(question="How long is lunch?", answers=("30 minutes",),
                       source="handbook.md")
SECRET = AnswerQuestion(question="What is the password?", answerable=False)
SOURCES = [source("Parking is free.", "faq.md"), source("Lunch is 30 minutes.", "handbook.md")]


def test_normalised_matching_is_on_word_boundaries() -> None:
    assert normalise("It costs £3.40 [1].") == "it costs £ 3.4 1"
    assert contains_answer("Lunch lasts 30 minutes.", ["30 minutes"])
    assert contains_answer("Open 12:00-16:00", ["12:00"])
    assert not contains_answer("It is 16 weeks", ["6"])


def test_a_right_cited_answer_scores_on_every_measure() -> None:
    answer = RagAnswer(question=LUNCH.question, answer="Lunch is 30 minutes. [2]",
                       sources=SOURCES, citations=[2], quote="Lunch is 30 minutes.")
    score = score_answer(LUNCH, answer)
    assert score.correct and score.citation_correct and not score.unsupported
    assert score.cited == ["handbook.md"]


def test_wrong_citations_invented_numbers_and_refusals_are_counted() -> None:
    wrong = RagAnswer(question=LUNCH.question, answer="Lunch is 45 minutes [1].",
                      sources=SOURCES)
    score = score_answer(LUNCH, wrong)
    assert not score.correct and not score.citation_correct and score.unsupported == ["45"]
    refusal = RagAnswer(question=SECRET.question, answer="I could not find the answer in "
                        "the documents.", sources=SOURCES, refused=True)
    report = evaluate_answers(lambda q: refusal if q == SECRET.question else wrong,
                              [LUNCH, SECRET])
    summary = report.summary()
    assert summary["answer_accuracy"] == 0.0 and summary["correct_refusals"] == 1.0
    assert summary["answers_with_unsupported_numbers"] == 1
    assert report.to_dict()["answers"][1]["refused"] is True


def test_a_malformed_question_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "a?", "answers": ["x"]}\n{"question": "b?"}\n')
    with pytest.raises(InvalidInputError, match="line 2"):
        load_questions(path)
    path.write_text('{"question": "a?", "answerable": false, "split": "dev"}\n')
    assert load_questions(path)[0] == AnswerQuestion(question="a?", answerable=False, id="q1",
                                                     split="dev", kind="unanswerable")


def test_eval_answers_command_on_a_docs_folder(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "handbook.md").write_text("The unpaid lunch break is 30 minutes.\n\n"
                                      "Parking at the shop is free for staff.\n")
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"question": "How long is the unpaid lunch break?",
                    "answers": ["30 minutes"], "source": "handbook.md"}) + "\n"
        + json.dumps({"question": "What is the pension contribution rate?",
                      "answerable": False}) + "\n")
    result = CliRunner().invoke(app(), [
        "eval", "--answers", str(questions), "--docs", str(docs), "--llm", "fake:echo",
        "--embedder", "fake:hashing-64", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    summary = report["summary"]
    assert summary["questions"] == 2 and summary["correct_refusals"] == 1.0
    assert summary["answer_accuracy"] == 1.0 and summary["citation_accuracy"] == 1.0
    table = CliRunner().invoke(app(), [
        "eval", "--answers", str(questions), "--docs", str(docs), "--llm", "fake:echo",
        "--embedder", "fake:hashing-64"])
    assert table.exit_code == 0 and "answer accuracy" in table.stdout
    nothing = CliRunner().invoke(app(), ["eval", "--embedder", "fake:hashing-64"])
    assert nothing.exit_code != 0 and "--answers" in nothing.output

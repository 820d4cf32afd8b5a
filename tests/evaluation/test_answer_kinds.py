"""Question kinds, list and key-point answers, SQuAD matching, splits and refusal
precision/recall of the answer evaluation (fake answers; fast)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragloom.errors import InvalidInputError
from ragloom.evaluation.answers import (
    AnswerQuestion,
    evaluate_answers,
    filter_split,
    load_questions,
    question_from_dict,
    score_answer,
)
from ragloom.evaluation.matching import contains_answer, hits, normalise_squad
from ragloom.rag import RagAnswer
from tests.evaluation.test_answers import source

SOURCES = [source("The pool is open 7:00-21:00.", "timetable.md"),
           source("Ports: USB-C, HDMI 2.1 and Ethernet.", "manual.pdf")]


def reply(text: str, refused: bool = False) -> RagAnswer:
    return RagAnswer(question="q", answer=text, sources=SOURCES, citations=[2],
                     refused=refused)


def test_squad_normalisation_drops_punctuation_and_articles() -> None:
    assert normalise_squad("The Normans, of  Normandy (an area)!") == "normans of normandy area"
    gold = ["the Denmark, Iceland and Norway"]
    assert contains_answer("From Denmark, Iceland and Norway.", gold, "squad")
    assert not contains_answer("From Denmark, Iceland and Norway.", gold)
    assert not contains_answer("In 1066 or so", ["106"], "squad")


def test_units_against_numbers_are_split_off() -> None:
    assert contains_answer("South: £1.90m (target £2.10m)", ["2.1"])
    assert contains_answer("It costs 50p a page", ["50 p"])
    assert not contains_answer("It costs 150p a page", ["50p"])
    assert contains_answer("the Brightwell KX200", ["kx200"])


def test_alternatives_and_hits() -> None:
    assert contains_answer("It takes half an hour.", ["30 minutes|half an hour"])
    assert not contains_answer("It takes an hour.", ["30 minutes|half an hour"])
    assert hits("USB-C and HDMI", ["usb-c", "hdmi|hdmi 2.1", "ethernet"]) == 2


def test_all_of_needs_every_item() -> None:
    question = question_from_dict({"question": "what ports does it have",
                                   "all_of": ["USB-C", "HDMI", "Ethernet"], "kind": "list",
                                   "source": "manual.pdf"})
    assert score_answer(question, reply("USB-C, HDMI 2.1 and Ethernet [2]")).correct
    partly = score_answer(question, reply("USB-C and HDMI 2.1 [2]"))
    assert not partly.correct and partly.citation_correct
    assert partly.to_dict()["all_of"] is True


def test_min_hits_counts_key_points() -> None:
    question = question_from_dict({
        "question": "summarise the minutes", "kind": "summary", "min_hits": 2,
        "answers": ["new bins|wheelie bins", "£4,000", "april"]})
    assert score_answer(question, reply("They agreed new wheelie bins costing £4000.")).correct
    assert not score_answer(question, reply("They agreed new bins.")).correct
    assert not score_answer(question, reply("new bins, £4,000", refused=True)).correct


def test_squad_matching_comes_from_the_question_or_the_caller() -> None:
    question = question_from_dict({"question": "who", "answers": ["the Franks"],
                                   "match": "squad"})
    assert score_answer(question, reply("Franks did.")).correct
    plain = AnswerQuestion(question="who", answers=("the Franks",))
    assert not score_answer(plain, reply("Franks did.")).correct
    assert score_answer(plain, reply("Franks did."), matching="squad").correct
    with pytest.raises(InvalidInputError, match="matching"):
        score_answer(plain, reply("x"), matching="fuzzy")


def test_several_gold_sources_any_cited_counts() -> None:
    question = question_from_dict({"question": "when are bins collected at the pool",
                                   "answers": ["tuesday"], "kind": "two-step",
                                   "source": ["bins.csv", "manual.pdf"]})
    assert question.sources == ["bins.csv", "manual.pdf"]
    assert score_answer(question, reply("Tuesday [2]")).citation_correct


@pytest.mark.parametrize(("row", "message"), [
    ({"question": "q", "answers": ["a"], "kind": "trivia"}, "unknown kind"),
    ({"question": "q", "answers": ["a"], "all_of": ["b"]}, "all_of"),
    ({"question": "q", "answers": ["a"], "min_hits": 2}, "min_hits"),
    ({"question": "q", "answers": ["a"], "kind": "unanswerable"}, "unanswerable"),
    ({"question": "q", "answers": "a"}, "list of strings"),
    ({"question": "q", "answers": ["a"], "match": "fuzzy"}, "unknown match"),
    ({"question": "q", "answerable": "no"}, "true or false"),
])
def test_bad_questions_say_what_is_wrong(tmp_path: Path, row: dict[str, Any],
                                         message: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"question": "fine", "answers": ["x"]}) + "\n"
                    + json.dumps(row) + "\n")
    with pytest.raises(InvalidInputError, match=f"line 2.*{message}"):
        load_questions(path)


def test_per_kind_table_and_refusal_precision_recall() -> None:
    rows = [
        {"question": "pool hours", "answers": ["7:00"], "kind": "lookup", "split": "dev"},
        {"question": "gym hours", "answers": ["6:00"], "kind": "lookup", "split": "dev"},
        {"question": "ports", "all_of": ["usb-c", "hdmi"], "kind": "list", "split": "test"},
        {"question": "sauna price", "answerable": False, "split": "dev"},
        {"question": "old model weight", "answerable": False, "split": "test"},
    ]
    questions = [question_from_dict(r, f"q{i}") for i, r in enumerate(rows)]
    replies = {"pool hours": reply("7:00 to 21:00 [1]"),
               "gym hours": reply("I could not find the answer in the documents.", True),
               "ports": reply("USB-C and HDMI [2]"),
               "sauna price": reply("I could not find the answer in the documents.", True),
               "old model weight": reply("It weighs 2 kg [2]")}
    report = evaluate_answers(lambda q: replies[q], questions)
    summary = report.summary()
    assert summary["false_refusals"] == 1 and summary["unanswerable_answered"] == 1
    assert summary["refusal_precision"] == 0.5 and summary["refusal_recall"] == 0.5
    assert summary["right"] == 3 and summary["accuracy"] == 0.6
    by_kind = summary["by_kind"]
    assert list(by_kind) == ["lookup", "list", "unanswerable"]
    assert by_kind["lookup"] == {"questions": 2, "right": 1, "accuracy": 0.5, "refused": 1}
    assert by_kind["list"]["right"] == 1 and by_kind["unanswerable"]["right"] == 1
    dev = report.to_dict()["splits"]["dev"]
    assert dev["questions"] == 3 and dev["refusal_precision"] == 0.5


def test_filter_split() -> None:
    questions = [AnswerQuestion("a", ("x",), split="dev"),
                 AnswerQuestion("b", ("y",), split="test")]
    assert [q.question for q in filter_split(questions, "test")] == ["b"]
    assert filter_split(questions, "all") == questions
    with pytest.raises(InvalidInputError, match="unknown split"):
        filter_split(questions, "train")
    with pytest.raises(InvalidInputError, match="no question"):
        filter_split(questions[:1], "test")


def test_eval_answers_command_split_squad_and_kind_table(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tests.evaluation.test_eval_cmd import app

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "handbook.md").write_text("The unpaid lunch break is 30 minutes.\n\n"
                                      "Parking at the shop is free for staff.\n")
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in [
        {"question": "How long is the unpaid lunch break?", "answers": ["the 30 minutes"],
         "kind": "number", "source": "handbook.md", "split": "dev"},
        {"question": "What is the pension contribution rate?", "answerable": False,
         "split": "test"},
    ]))
    base = ["eval", "--answers", str(questions), "--docs", str(docs), "--llm", "fake:echo",
            "--embedder", "fake:hashing-64"]
    plain = CliRunner().invoke(app(), [*base, "--split", "dev", "--json"])
    assert plain.exit_code == 0, plain.output
    report = json.loads(plain.stdout)
    assert report["split"] == "dev" and report["summary"]["questions"] == 1
    assert report["summary"]["answer_accuracy"] == 0.0  # "the" is kept without --squad
    assert set(report["summary"]["by_kind"]) == {"number"}
    squad = json.loads(CliRunner().invoke(app(), [*base, "--split", "dev", "--squad",
                                                  "--json"]).stdout)
    assert squad["summary"]["answer_accuracy"] == 1.0
    assert "refusal_precision" in squad["summary"] and "by_kind" in squad["summary"]
    table = CliRunner().invoke(app(), base)
    assert table.exit_code == 0, table.output
    assert "per kind" in table.stdout and "refusal precision" in table.stdout
    assert "unanswerable" in table.stdout
    bad = CliRunner().invoke(app(), [*base, "--split", "train"])
    assert bad.exit_code != 0 and "unknown split" in bad.output
    assert "Traceback" not in bad.output


def _squad_module() -> Any:
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "bench" / "qa" / "squad2.py"
    spec = importlib.util.spec_from_file_location("squad2_converter", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_squad2_converter_writes_the_document_and_questions(tmp_path: Path) -> None:
    squad = _squad_module()
    data = {"version": "v2.0", "data": [
        {"title": "Other", "paragraphs": [{"context": "x", "qas": []}]},
        {"title": "Steam_engine", "paragraphs": [
            {"context": "Watt improved it in 1769.", "qas": [
                {"id": "a", "question": "Who improved it?", "is_impossible": False,
                 "answers": [{"text": "Watt", "answer_start": 0},
                             {"text": "Watt", "answer_start": 0}]},
                {"id": "b", "question": "When?", "is_impossible": False,
                 "answers": [{"text": "1769", "answer_start": 20}]}]},
            {"context": "It had 2 cylinders.", "qas": [
                {"id": "c", "question": "Who broke it?", "is_impossible": True,
                 "answers": [], "plausible_answers": [{"text": "Watt", "answer_start": 0}]},
                {"id": "d", "question": "How many cylinders?", "is_impossible": False,
                 "answers": [{"text": "2", "answer_start": 7}]}]}]}]}
    path = tmp_path / "in.json"
    path.write_text(json.dumps(data))
    squad.main([str(path), "--article", "Steam engine", "--out", str(tmp_path / "out")])
    text = (tmp_path / "out" / "docs" / "steam-engine.txt").read_text()
    assert text == "Steam engine\n\nWatt improved it in 1769.\n\nIt had 2 cylinders.\n"
    questions = load_questions(tmp_path / "out" / "questions.jsonl")
    assert [(q.id, q.kind, q.answerable) for q in questions] == [
        ("a", "lookup", True), ("b", "date", True), ("c", "unanswerable", False),
        ("d", "number", True)]
    assert questions[0].answers == ("Watt",) and questions[0].match == "squad"
    assert {q.split for q in questions} == {"dev"} and questions[0].source == "steam-engine.txt"
    assert squad.guess_kind(["911"], "When was the Duchy founded?") == "date"
    assert squad.guess_kind(["911"], "How many ships?") == "number"
    assert squad.guess_kind(["the 11th"], "In what century was it?") == "date"
    with pytest.raises(SystemExit, match="no article titled"):
        squad.main([str(path), "--article", "Nope", "--out", str(tmp_path / "x")])

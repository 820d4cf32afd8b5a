"""The bench/qa question sets hold together: every question loads, names files that
exist in its own split, every kind is in both new splits, the test split is big
enough, and every document parses. (Counts and structure only; fast.)"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from ragloom.evaluation.answers import KINDS, load_questions
from ragloom.loaders.files import load_file

REPO = Path(__file__).resolve().parents[2]
QA = REPO / "bench" / "qa"
SOURCES = {"squad2": "dev", "answers72": "dev", "dev": "dev", "fresh": "dev", "test": "test"}
NEW_DEV = ("dev", "fresh")  # the new documents of the dev split (batch d is in fresh/)
FORMATS = {".html", ".pdf", ".docx", ".xlsx", ".pptx", ".csv", ".json", ".md", ".txt"}


def docs_of(name: str) -> Path:
    meta = QA / name / "source.json"
    if meta.is_file():
        return (QA / name / json.loads(meta.read_text())["docs"]).resolve()
    return QA / name / "docs"


def raw_rows(name: str) -> list[dict[str, object]]:
    lines = (QA / name / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.mark.parametrize("name", list(SOURCES))
def test_every_question_loads_and_names_files_of_its_own_split(name: str) -> None:
    questions = load_questions(QA / name / "questions.jsonl")
    files = {p.name for p in docs_of(name).iterdir() if p.is_file()}
    assert files
    for question in questions:
        assert question.split == SOURCES[name], question.id
        assert question.kind in KINDS, question.id
        assert set(question.sources) <= files, (question.id, question.sources)
        if question.answerable:
            assert question.sources, question.id
    for row in raw_rows(name):
        assert row.get("near", next(iter(files))) in files, row["id"]


def test_ids_are_unique_and_the_set_is_large_enough() -> None:
    ids = [q.id for name in SOURCES for q in load_questions(QA / name / "questions.jsonl")]
    assert len(ids) == len(set(ids)) and len(ids) >= 300
    documents = sum(len(list(docs_of(name).iterdir())) for name in SOURCES)
    assert documents >= 40


def test_new_splits_have_every_kind_distractors_and_a_third_in_test() -> None:
    dev = [q for name in NEW_DEV for q in load_questions(QA / name / "questions.jsonl")]
    test = load_questions(QA / "test" / "questions.jsonl")
    for questions, names in ((dev, NEW_DEV), (test, ("test",))):
        kinds = Counter(q.kind for q in questions)
        assert set(kinds) == set(KINDS)
        assert 0.15 <= kinds["unanswerable"] / len(questions) <= 0.3
        assert sum(q.kind == "two-step" and len(q.sources) >= 2 for q in questions) >= 3
        near = [r for name in names for r in raw_rows(name) if r.get("near")]
        assert len(near) >= 10
    assert len(test) * 3 >= len(dev) + len(test) and len(dev) + len(test) >= 200
    dev_docs = [p for name in NEW_DEV for p in (QA / name / "docs").iterdir()]
    test_docs = list((QA / "test" / "docs").iterdir())
    assert len(test_docs) * 3 >= len(dev_docs) + len(test_docs) >= 30
    for docs in (dev_docs, test_docs):
        assert {p.suffix for p in docs} == FORMATS


@pytest.mark.parametrize("split", ["dev", "fresh", "test"])
def test_every_new_document_parses(split: str) -> None:
    for path in sorted((QA / split / "docs").iterdir()):
        results = load_file(path)
        assert results and all(r.ok for r in results), (path.name, [r.reason for r in results])
        text = "\n".join(r.document.text for r in results if r.document is not None)
        assert len(text) > 300, path.name


def test_qa_eval_counts_runs_without_models() -> None:
    result = subprocess.run([sys.executable, str(REPO / "bench" / "qa_eval.py"), "--counts"],
                            capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    assert [line.split("|")[1].strip() for line in lines[1:]] == list(SOURCES)
    files = sum(1 for p in docs_of("test").iterdir() if p.is_file())
    asked = len(load_questions(QA / "test" / "questions.jsonl"))
    assert f"| test | test | {files} | {asked} |" in result.stdout

"""``ragloom eval --answers`` with the real bundled embedder and model, through the
real ``ragloom`` entry point: a split filter, SQuAD matching, kinds and refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli

pytestmark = pytest.mark.integration


def test_eval_answers_split_kinds_and_refusals_with_bundled_models(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "db")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "staff-handbook.md").write_text(
        "# Staff handbook\n\nThe unpaid lunch break is 30 minutes.\n\n"
        "Parking at the shop is free for staff.\n")
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(row) + "\n" for row in [
        {"id": "lunch", "question": "how long is the unpaid lunch break",
         "answers": ["the 30 minutes|half an hour"], "kind": "number",
         "source": "staff-handbook.md", "split": "dev"},
        {"id": "pension", "question": "what is the pension contribution rate",
         "answerable": False, "split": "dev"},
        {"id": "other", "question": "is parking free", "answers": ["free"],
         "kind": "lookup", "source": "staff-handbook.md", "split": "test"},
    ]))
    result = cli("eval", "--answers", str(questions), "--docs", str(docs),
                 "--split", "dev", "--squad", "--json")
    report = json.loads(result.stdout)
    summary = report["summary"]
    assert report["split"] == "dev" and summary["questions"] == 2
    assert [a["id"] for a in report["answers"]] == ["lunch", "pension"]
    lunch = report["answers"][0]
    assert lunch["kind"] == "number" and "30" in lunch["answer"]
    assert lunch["right"] is True  # "the 30 minutes" matches only with SQuAD's rules
    assert summary["refusal_recall"] == 1.0 and summary["unanswerable_answered"] == 0
    assert summary["by_kind"]["unanswerable"]["right"] == 1
    assert set(summary["by_kind"]) == {"number", "unanswerable"}

"""``ragloom eval`` on a tiny BEIR folder with the hashing embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from ragloom.cli.eval_cmd import eval_command
from tests.evaluation.test_runner import write_beir

pytest.importorskip("ragloom.stores.sqlite")


def app() -> typer.Typer:
    application = typer.Typer()
    application.command("eval")(eval_command)

    @application.command("other")
    def other() -> None:  # a second command keeps "eval" a sub-command
        """Unused."""

    return application


def test_eval_json_reports_every_mode(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tiny")
    result = CliRunner().invoke(app(), ["eval", str(folder), "--embedder", "fake:hashing-64",
                                        "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [r["config"] for r in report["results"]] == [
        "vector", "keyword", "hybrid/rrf", "hybrid/weighted"]
    assert report["documents"] == 4 and report["chunks"] >= 4
    assert report["results"][1]["ndcg@10"] == pytest.approx(1.0)


def test_eval_table_with_chosen_modes_and_reused_db(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tiny")
    db = tmp_path / "kb.db"
    args = ["eval", str(folder), "--embedder", "fake:hashing-64", "--mode", "keyword",
            "--mode", "hybrid", "--ranker", "rrf", "--db", str(db), "--limit-queries", "2"]
    first = CliRunner().invoke(app(), args)
    assert first.exit_code == 0, first.output
    assert "hybrid/rrf" in first.stdout and "weighted" not in first.stdout
    assert db.exists()
    again = CliRunner().invoke(app(), args)
    assert again.exit_code == 0 and "keyword" in again.stdout


def test_eval_refuses_unknown_modes_and_missing_folders(tmp_path: Path) -> None:
    bad = CliRunner().invoke(app(), ["eval", str(write_beir(tmp_path / "t")), "--mode", "fuzzy",
                                     "--embedder", "fake:hashing-64"])
    assert bad.exit_code == 2 and "unknown mode fuzzy" in bad.output
    missing = CliRunner().invoke(app(), ["eval", str(tmp_path / "nope"),
                                         "--embedder", "fake:hashing-64"])
    assert missing.exit_code == 2 and "corpus.jsonl" in missing.output

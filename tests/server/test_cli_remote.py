"""``ragloom ingest/search/ask --server URL``: the same output as against a local database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragloom.cli.app import app
from tests.server.conftest import LiveServer

DOCS = {
    "lunch.md": "# Lunch\n\nThe unpaid lunch break is 30 minutes long.",
    "travel.md": "# Travel\n\nTrain tickets are refunded in second class.",
    "leave.txt": "Annual leave is 25 days per year, plus public holidays.",
}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text)
    (docs / "broken.bin").write_bytes(bytes(range(256)) * 4)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGLOOM_EMBEDDER", "fake:hashing-64")
    monkeypatch.setenv("RAGLOOM_LLM", "fake:echo")
    monkeypatch.delenv("RAGLOOM_SERVER", raising=False)
    return docs


def run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_remote_commands_print_what_local_ones_do(live: LiveServer, folder: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    local = ["--db", "local-db", "--kb", "cli"]
    run("ingest", "docs", *local)
    remote_report = json.loads(run("ingest", "docs", "--kb", "cli", "--server", live.url,
                                   "--json"))
    assert sorted(remote_report["new"]) == sorted(f"docs/{n}" for n in DOCS)
    assert [s["source"] for s in remote_report["skipped"]] == ["docs/broken.bin"]
    again = json.loads(run("ingest", "docs", "--kb", "cli", "--server", live.url, "--json"))
    assert sorted(again["unchanged"]) == sorted(remote_report["new"])

    query = ["search", "how long is the lunch break", "--kb", "cli", "--top-k", "3"]
    local_json = json.loads(run(*query, "--db", "local-db", "--json"))
    remote_json = json.loads(run(*query, "--server", live.url, "--json"))
    assert [(m["text"], round(m["score"], 6)) for m in remote_json["matches"]] == \
        [(m["text"], round(m["score"], 6)) for m in local_json["matches"]]
    # The table shows paths relative to the working folder on both sides.
    assert run(*query, "--db", "local-db") == run(*query, "--server", live.url)

    monkeypatch.setenv("RAGLOOM_SERVER", live.url)
    ask = ["ask", "How long is the unpaid lunch break?", "--kb", "cli"]
    remote_answer = run(*ask)
    monkeypatch.delenv("RAGLOOM_SERVER")
    assert remote_answer == run(*ask, "--db", "local-db")
    assert "lunch.md" in remote_answer

    missing = CliRunner().invoke(app, ["search", "x", "--kb", "nope", "--server", live.url])
    assert missing.exit_code == 1 and "nope" in missing.output

"""``ragloom kb`` and ``ragloom sessions``, run in-process with typer's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragloom.chat import SessionStore
from ragloom.cli.app import app

REPO = Path(__file__).resolve().parents[2]
FAKE = ["--embedder", "fake:hashing-256"]


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGLOOM_DB", raising=False)
    folder = tmp_path / "db"
    runner = CliRunner()
    for kb in ("shop", "other"):
        result = runner.invoke(app, ["ingest", str(REPO / "samples"), "--db", str(folder),
                                     "--kb", kb, *FAKE, "--no-cache"])
        assert result.exit_code == 0, result.output
    return folder


def _json(*args: str) -> object:
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_kb_remove_by_filter_clear_and_delete(db: Path) -> None:
    removed = _json("kb", "remove", "--filter", '{"file_name": "product-faq.md"}',
                    "--kb", "shop", "--db", str(db), "--yes")
    assert removed["chunks_removed"] > 0  # type: ignore[index]
    search = _json("search", "warranty", "--kb", "shop", "--db", str(db), "--mode", "keyword")
    assert all(m["metadata"]["file_name"] != "product-faq.md"
               for m in search["matches"])  # type: ignore[index]
    cleared = _json("kb", "clear", "shop", "--db", str(db), "--yes")
    assert cleared["chunks_removed"] > 0  # type: ignore[index]
    status = _json("status", "--db", str(db))
    counts = {k["name"]: k["chunks"] for k in status["knowledge_bases"]}  # type: ignore[index]
    assert counts["shop"] == 0 and counts["other"] > 0
    deleted = _json("kb", "delete", "other", "--db", str(db), "--yes")
    assert deleted["deleted"] is True  # type: ignore[index]
    names = [k["name"] for k in _json("status", "--db", str(db))["knowledge_bases"]]  # type: ignore[index]
    assert "other" not in names
    missing = CliRunner().invoke(app, ["kb", "delete", "nope", "--db", str(db), "--yes"])
    assert missing.exit_code != 0 and "no knowledge base named 'nope'" in missing.output
    unconfirmed = CliRunner().invoke(app, ["kb", "clear", "shop", "--db", str(db), "--json"])
    assert unconfirmed.exit_code == 2


def test_sessions_list_show_delete(db: Path) -> None:
    store = SessionStore(db)
    store.append("support", "user", "How long is the frame warranty?")
    store.append("support", "assistant", "For life [1].",
                 sources=[{"document": "product-faq.md"}], metadata={"queries": ["frame warranty"]})
    listed = _json("sessions", "list", "--db", str(db))
    assert [s["name"] for s in listed["sessions"]] == ["support"]  # type: ignore[index]
    shown = _json("sessions", "show", "support", "--db", str(db))
    assert shown["messages"][1]["sources"][0]["document"] == "product-faq.md"  # type: ignore[index]
    text = CliRunner().invoke(app, ["sessions", "show", "support", "--db", str(db)])
    assert "searched: frame warranty" in text.stdout and "[1] product-faq.md" in text.stdout
    assert _json("sessions", "delete", "support", "--db", str(db))["deleted"] is True  # type: ignore[index]
    gone = CliRunner().invoke(app, ["sessions", "show", "support", "--db", str(db)])
    assert gone.exit_code == 1 and "no chat session named 'support'" in gone.output

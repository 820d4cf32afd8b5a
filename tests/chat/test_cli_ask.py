"""``ragloom ask`` with --session, --agent and streaming, run in-process."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeservers import FakeServer, Recorded, Reply, Response, openai_api
from ragloom.cli.app import app

REPO = Path(__file__).resolve().parents[2]
FAKE = ["--embedder", "fake:hashing-256"]


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for var in ("RAGLOOM_DB", "RAGLOOM_LLM", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    folder = tmp_path / "db"
    result = CliRunner().invoke(app, ["ingest", str(REPO / "samples"), "--db", str(folder),
                                      *FAKE, "--no-cache"])
    assert result.exit_code == 0, result.output
    return folder


def _ask(db: Path, *args: str) -> Any:
    result = CliRunner().invoke(app, ["ask", *args, "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_session_keeps_history_and_compresses_the_follow_up(db: Path) -> None:
    first = _ask(db, "How long is the battery warranty?", "--session", "s", "--llm",
                 "fake:echo")
    assert first["queries"] == ["How long is the battery warranty?"]
    second = _ask(db, "And for the frame?", "--session", "s", "--llm", "fake:echo")
    query = second["queries"][0]
    assert "warranty" in query and "frame" in query
    assert second["sources"][0]["document"].endswith("product-faq.md")
    assert "lifetime warranty" in second["sources"][0]["text"]
    shown = CliRunner().invoke(app, ["sessions", "show", "s", "--db", str(db), "--json"])
    messages = json.loads(shown.stdout)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"] * 2
    assert messages[3]["metadata"]["queries"] == second["queries"]


def test_stream_prints_tokens_then_sources(db: Path) -> None:
    result = CliRunner().invoke(app, ["ask", "frame warranty", "--db", str(db), "--llm",
                                      "fake:echo", "--stream", "--session", "t"])
    assert result.exit_code == 0, result.output
    # grounded (the default): the checked answer, or the quote that supports it
    assert "lifetime warranty" in result.stdout
    assert result.stdout.index("lifetime warranty") < result.stdout.index("Sources")


def _agent_app(request: Recorded, reply: Reply) -> Response:
    messages = (request.body or {}).get("messages", [])
    results = [m["content"] for m in messages if m.get("role") == "tool"]
    if not results:
        reply = Reply(tool_calls=[("knowledge_search", {"query": "frame warranty"})])
    else:
        content = results[-1].split("Content: ", 1)[1].split("\nMetadata:", 1)[0]
        reply = Reply(text=f"The documents say: {content}")
    return openai_api.app(request, reply)


@pytest.mark.integration
def test_agent_over_the_openai_wire(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai")
    with FakeServer(_agent_app) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        answer = _ask(db, "How long is the frame warranty?", "--agent", "--llm",
                      "openai:gpt-test")
        text = CliRunner().invoke(app, ["ask", "How long is the frame warranty?", "--agent",
                                        "--llm", "openai:gpt-test", "--db", str(db)])
    assert "lifetime warranty" in answer["answer"]
    assert answer["searches"][0]["query"] == "frame warranty"
    assert "Searches" in text.stdout and "knowledge_search: frame warranty" in text.stdout


def test_agent_with_a_model_that_cannot_call_tools(db: Path) -> None:
    result = CliRunner().invoke(app, ["ask", "q", "--agent", "--llm", "local:smollm2",
                                      "--db", str(db)])
    assert result.exit_code == 2
    assert "cannot call tools" in result.output

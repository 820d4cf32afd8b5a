"""What the user sets reaches the model: ``ragloom ask`` flags, ``[generation]`` in
``ragloom.toml``, ``--session`` history, and ``NaiveRag``'s keyword arguments, checked
on the requests a local OpenAI-compatible server logged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeservers import FakeServer, Reply, openai_api

LUNCH = "The unpaid lunch break is 30 minutes long and is taken between noon and two."
TRAVEL = "Train tickets are refunded in second class only."
QUESTION = "How long is the unpaid lunch break?"
FAKE = ("--embedder", "fake:hashing-64")
SRC = Path(__file__).resolve().parents[2] / "src"  # this tree, whatever the cwd


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(openai_api.app) as fake:
        fake.default_reply = Reply(text="The unpaid lunch break is 30 minutes [1].")
        yield fake


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "lunch.md").write_text(LUNCH)
    (docs / "travel.txt").write_text(TRAVEL)
    return tmp_path


def ragloom(workdir: Path, server: FakeServer, *args: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, RAGLOOM_DB=str(workdir / "db"), COLUMNS="200", NO_COLOR="1",
               OPENAI_BASE_URL=server.url + "/v1", PYTHONPATH=path)
    env.pop("OPENAI_API_KEY", None)
    result = subprocess.run([sys.executable, "-m", "ragloom", *args], capture_output=True,
                            text=True, env=env, cwd=workdir, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def ask(workdir: Path, server: FakeServer, *args: str) -> dict[str, Any]:
    out = ragloom(workdir, server, "ask", *args, "--llm", "openai:some-model", "--json")
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def answer_requests(server: FakeServer) -> list[dict[str, Any]]:
    """The chat requests that asked for an answer (passages in the last message)."""
    return [r.body for r in server.requests if r.path == "/v1/chat/completions"
            and "lunch" in str(r.body["messages"][-1]["content"]).lower()
            and "30 minutes" in str(r.body["messages"][-1]["content"])]


@pytest.fixture
def ingested(workdir: Path, server: FakeServer) -> Path:
    ragloom(workdir, server, "ingest", str(workdir / "docs"), *FAKE)
    return workdir


def test_flags_reach_the_model(ingested: Path, server: FakeServer) -> None:
    data = ask(ingested, server, QUESTION, "--temperature", "0.7", "--max-tokens", "77",
               "--system-prompt", "You are the handbook bot.")
    sent = answer_requests(server)[-1]
    assert sent["temperature"] == 0.7
    assert sent["max_tokens"] == 77 or sent.get("max_completion_tokens") == 77
    assert sent["messages"][0] == {"role": "system", "content": "You are the handbook bot."}
    assert "30 minutes" in data["answer"] and not data["refused"]


def test_session_sends_the_earlier_turns(ingested: Path, server: FakeServer) -> None:
    first = ask(ingested, server, QUESTION, "--session", "s1")
    server.default_reply = Reply(text="It is taken between noon and two [1].")
    ask(ingested, server, "When is the lunch break taken?", "--session", "s1",
        "--temperature", "0.7")
    sent = answer_requests(server)[-1]
    assert sent["temperature"] == 0.7
    contents = [(m["role"], m["content"]) for m in sent["messages"]]
    assert ("user", QUESTION) in contents
    assert ("assistant", first["answer"]) in contents
    roles = [role for role, _ in contents]
    assert roles[0] == "system" and roles[-1] == "user"
    assert roles.index("assistant") < len(roles) - 1  # history before the question
    # --history 0 sends no earlier turn.
    ask(ingested, server, "When is the lunch break taken?", "--session", "s1",
        "--history", "0")
    assert [m["role"] for m in answer_requests(server)[-1]["messages"]] == ["system", "user"]


def test_grounding_check_flags_what_the_passages_do_not_say(ingested: Path,
                                                             server: FakeServer) -> None:
    server.default_reply = Reply(text="The unpaid lunch break is 45 minutes [1].")
    checked = ask(ingested, server, QUESTION, "--grounding", "check")
    assert "45" in checked["answer"] and "45" in " ".join(checked["unsupported"])
    strict = ask(ingested, server, QUESTION)
    assert "45" not in strict["answer"]


def test_generation_section_of_ragloom_toml(ingested: Path, server: FakeServer) -> None:
    (ingested / "ragloom.toml").write_text(
        '[generation]\nsystem_prompt = "From the toml."\ntemperature = 0.3\n')
    ask(ingested, server, QUESTION)
    sent = answer_requests(server)[-1]
    assert sent["messages"][0]["content"] == "From the toml."
    assert sent["temperature"] == 0.3
    ask(ingested, server, QUESTION, "--temperature", "0.9")  # a flag wins
    assert answer_requests(server)[-1]["temperature"] == 0.9


def test_naive_rag_settings_reach_the_model(server: FakeServer,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from ragloom.knowledge_base import VectorKnowledgeBase
    from ragloom.models.openai import OpenAIChatModel
    from ragloom.rag import NaiveRag
    from ragloom.stores.memory import InMemoryVectorStore
    from ragloom.testing import HashingEmbedder
    from ragloom.types import TextDocument

    kb = VectorKnowledgeBase(InMemoryVectorStore(), HashingEmbedder(64))
    kb.ingest([TextDocument.create(LUNCH, source="lunch.md", metadata={"team": "people"}),
               TextDocument.create(TRAVEL, source="travel.txt", metadata={"team": "finance"})])
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    model = OpenAIChatModel("some-model", base_url=server.url + "/v1")
    rag = NaiveRag(kb, model, temperature=0.4, metadata_keys=["team"],
                   system_prompt="Handbook only.")
    answer = rag.query(QUESTION)
    sent = answer_requests(server)[-1]
    assert sent["temperature"] == 0.4
    assert sent["messages"][0]["content"] == "Handbook only."
    assert "team: people" in sent["messages"][-1]["content"]
    assert "30 minutes" in answer.answer


def test_agent_final_answer_goes_through_the_engine(ingested: Path,
                                                    server: FakeServer) -> None:
    server.replies.extend([
        Reply(text="", tool_calls=[("knowledge_search", {"query": "lunch break"})]),
        Reply(text="The unpaid lunch break is 45 minutes [1]."),  # the loop's answer
        Reply(text="The unpaid lunch break is 45 minutes [1]."),  # asked by the engine
    ])
    data = ask(ingested, server, QUESTION, "--agent", "--temperature", "0.2")
    chats = [r.body for r in server.requests if r.path == "/v1/chat/completions"]
    assert chats[0].get("tools") and not chats[-1].get("tools")
    assert chats[-1]["temperature"] == 0.2
    assert data["searches"][0]["query"] == "lunch break"
    # Strict grounding: the made-up figure is not shown; the cited passage is.
    assert "45" not in data["answer"] and "30 minutes" in data["answer"]
    assert data["citations"] and not data["refused"]

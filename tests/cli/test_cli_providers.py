"""The CLI with hosted-model providers, against local servers that speak their wire format."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.cli.conftest import FAKE, Cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeservers import FakeServer, Reply, openai_api

pytestmark = pytest.mark.integration


def test_ask_with_an_openai_compatible_server(
    cli: Cli, sample_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("ingest", str(sample_dir), *FAKE)
    with FakeServer(openai_api.app) as server:
        server.default_reply = Reply(text="The unpaid lunch break is 30 minutes [1].")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        data = cli.json("ask", "How long is the unpaid lunch break?",
                        "--llm", "openai:some-model")
        shown = cli("ask", "How long is the unpaid lunch break?", "--llm", "openai:some-model",
                    "--verbose")
    # The grounded answerer keeps the model's supported answer (its citation placed
    # after the sentence).
    assert data["origin"] == "model"
    # A hosted model reads the passages; its answer keeps its own citation once the
    # numbers in it are found in the passage it cites.
    assert data["answer"] == "The unpaid lunch break is 30 minutes [1]."
    assert data["model"] == "openai:some-model"
    assert data["usage"]["input_tokens"] == 11 and data["usage"]["output_tokens"] == 7
    request = server.requests[0]
    assert request.path == "/v1/chat/completions" and request.body["model"] == "some-model"
    system, user = request.body["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    # Grounded: the model is given the supporting sentences, the quote among them,
    # and the quote comes from the cited source.
    assert data["quote"] and data["quote"] in user["content"]
    assert "lunch" in data["quote"].lower()
    assert data["quote"] in data["sources"][data["citations"][0] - 1]["text"]
    assert "30 minutes [1]." in shown.stdout and "Sources" in shown.stdout
    assert "11 tokens in, 7 out" in shown.stdout


def test_fallback_llm_answers_when_the_first_is_down(
    cli: Cli, sample_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("ingest", str(sample_dir), *FAKE)
    with FakeServer(openai_api.app) as server:
        dead = server.url
    monkeypatch.setenv("OPENAI_BASE_URL", dead + "/v1")
    data = cli.json("ask", "lunch break?", "--llm", "openai:first", "--fallback-llm", "fake:echo")
    assert data["answer"]
    assert data["model"] == "fake:echo"


def test_ask_degrades_to_keyword_search_when_the_embedder_is_down(
    cli: Cli, sample_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeServer(openai_api.app) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        cli("ingest", str(sample_dir), "--embedder", "openai:tiny-embedder")
        assert any(r.path == "/v1/embeddings" for r in server.requests)
    # The server is gone: the query embedding fails, keyword search answers.
    data = cli.json("ask", "How long is the unpaid lunch break?", "--llm", "fake:echo")
    assert data["degraded"] is True and "keyword" in data["notice"].lower()
    assert any("lunch" in s["text"].lower() for s in data["sources"])
    shown = cli("ask", "How long is the unpaid lunch break?", "--llm", "none")
    assert "keyword" in shown.stderr.lower()

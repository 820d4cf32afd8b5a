"""Bad input to the Llama Stack routes is a 400 naming what was wrong (never a 500),
and a turn's ``toolgroups`` complete its agent's ``builtin::rag``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server.conftest import LiveServer, start_server


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    server: LiveServer = start_server(tmp_path_factory.mktemp("lserr") / "ragloom.db",
                                      rate_limit=0)
    client = server.client()
    client.post("/v1/tool-runtime/rag-tool/insert", json={
        "vector_db_id": "kb", "chunk_size_in_tokens": 64,
        "documents": [{"document_id": "lunch.md", "content": "Lunch is 30 minutes."}]})
    yield client
    server.stop()


def agent(http: httpx.Client, **config: Any) -> str:
    body = {"model": "fake:echo", "instructions": "Be brief.", **config}
    response = http.post("/v1/agents", json={"agent_config": body})
    assert response.status_code == 200, response.text
    return str(response.json()["agent_id"])


@pytest.mark.parametrize(("path", "body", "param"), [
    ("/v1/vector-io/insert", {"vector_db_id": "kb", "chunks": []}, "chunks"),
    ("/v1/vector-io/insert", {"chunks": [{"content": "x"}]}, "vector_store_id"),
    ("/v1/vector-io/insert", {"vector_db_id": "kb", "chunks": [{"content": " "}]},
     "chunks[0].content"),
    ("/v1/vector-io/query", {"query": "x"}, "vector_store_id"),
    ("/v1/vector-io/query", {"vector_store_id": "kb", "query": "x",
                             "params": {"max_chunks": "many"}}, "params.max_chunks"),
    ("/v1/vector-dbs", {"vector_db_id": "kb", "embedding_model": "m",
                        "provider_id": "faiss"}, "provider_id"),
    ("/v1/tool-runtime/invoke", {"tool_name": "knowledge_search",
                                 "kwargs": {"query": "x", "vector_db_ids": ["kb"],
                                            "query_config": {"max_chunks": 0}}},
     "kwargs.query_config.max_chunks"),
    ("/v1/agents", {"agent_config": {"model": "fake:echo", "instructions": "x",
                                     "client_tools": [{"name": "f"}]}},
     "agent_config.client_tools"),
    ("/v1/agents", {"agent_config": {"model": "fake:echo", "instructions": "x",
                                     "max_infer_iters": 0}}, "agent_config.max_infer_iters"),
    ("/v1/conversations", {"items": [{"type": "image", "role": "user"}]}, "input[0]"),
])
def test_bad_input_is_a_400_naming_the_field(http: httpx.Client, path: str,
                                             body: dict[str, Any], param: str) -> None:
    response = http.post(path, json=body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == param


def test_bad_turns(http: httpx.Client) -> None:
    agent_id = agent(http)
    session = http.post(f"/v1/agents/{agent_id}/session",
                        json={"session_name": "s"}).json()["session_id"]
    turn = f"/v1/agents/{agent_id}/session/{session}/turn"
    for body, param in (
        ({"messages": [{"role": "assistant", "content": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": "x"}],
          "documents": [{"content": "d", "mime_type": "text/plain"}]}, "documents"),
        ({"messages": [{"role": "user", "content": "x"}],
          "toolgroups": ["builtin::code_interpreter"]}, "toolgroups[0]"),
    ):
        response = http.post(turn, json=body)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["param"] == param
    other = http.post(f"/v1/agents/{agent(http)}/session/{session}/turn",
                      json={"messages": [{"role": "user", "content": "x"}]})
    assert other.status_code == 404  # a session of another agent


def test_a_turns_toolgroups_complete_its_agents(http: httpx.Client) -> None:
    agent_id = agent(http, toolgroups=["builtin::rag"])
    session = http.post(f"/v1/agents/{agent_id}/session",
                        json={"session_name": "s"}).json()["session_id"]
    response = http.post(f"/v1/agents/{agent_id}/session/{session}/turn", json={
        "messages": [{"role": "user", "content": "How long is lunch?"}],
        "toolgroups": [{"name": "builtin::rag", "args": {"vector_db_ids": ["kb"]}}]})
    assert response.status_code == 200, response.text
    steps = response.json()["steps"]
    assert steps[0]["tool_responses"][0]["metadata"]["document_ids"] == ["lunch.md"]
    assert "30 minutes" in response.json()["output_message"]["content"]


def test_openai_alias_answers_like_v1(http: httpx.Client) -> None:
    direct = http.get("/v1/models").json()
    aliased = http.get("/v1/openai/v1/models")
    assert aliased.status_code == 200 and aliased.json() == direct
    missing = http.get("/v1/openai/v1/vector_stores/vs_nope")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert "/v1/openai/v1/{rest}" not in http.get("/openapi.json").json()["paths"]

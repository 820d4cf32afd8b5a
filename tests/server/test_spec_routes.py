"""The specifications' routes: Vector IO query and the RAG tool's insert and query."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from ragloom.testing import HashingEmbedder, ScriptedModel
from tests.server.openai_support import make_app, serve

DOCS = [
    {"document_id": "lunch", "content": "The unpaid lunch break is 30 minutes.",
     "metadata": {"dept": "hr"}},
    {"document_id": "vpn", "content": [{"type": "text", "text": "Use the VPN for payroll."}],
     "mime_type": "text/plain"},
    {"document_id": "leave", "content": {"uri": "data:text/plain;base64,"
                                                "QW5udWFsIGxlYXZlIGlzIDI1IGRheXMu"}},
]


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    app = make_app(tmp_path_factory.mktemp("spec"), HashingEmbedder(64),
                   ScriptedModel(["lunch break"], name="fake:q"))
    with serve(app) as url, httpx.Client(base_url=url,
                                         headers={"Authorization": "Bearer key-a"}) as client:
        inserted = client.post("/v1/tool-runtime/rag-tool/insert", json={
            "documents": DOCS, "vector_db_id": "handbook", "chunk_size_in_tokens": 64})
        assert inserted.status_code == 200, inserted.text
        yield client


def test_vector_io_query(http: httpx.Client) -> None:
    response = http.post("/v1/vector-io/query", json={
        "vector_db_id": "handbook", "query": "unpaid lunch break",
        "params": {"max_chunks": 2, "mode": "hybrid", "ranker": {"type": "rrf",
                                                                 "impact_factor": 60}}})
    assert response.status_code == 200, response.text
    body = response.json()
    assert len(body["chunks"]) == len(body["scores"]) == 2
    assert body["chunks"][0]["metadata"]["document_id"] == "lunch"
    assert body["chunks"][0]["content"] == "The unpaid lunch break is 30 minutes."
    assert all(0 <= s <= 1 for s in body["scores"])
    keyword = http.post("/v1/vector-io/query", json={
        "vector_db_id": "handbook", "query": "VPN", "params": {"mode": "keyword"}}).json()
    assert [c["metadata"]["document_id"] for c in keyword["chunks"]] == ["vpn"]


def test_rag_tool_query(http: httpx.Client) -> None:
    response = http.post("/v1/tool-runtime/rag-tool/query", json={
        "content": "How many days of annual leave?", "vector_db_ids": ["handbook"],
        "query_config": {"max_chunks": 2, "max_tokens_in_context": 500, "mode": "vector",
                         "chunk_template": "[{index}] {chunk.content} ({metadata[document_id]})\n",
                         "ranker": {"type": "weighted", "alpha": 0.7},
                         "query_generator_config": {"type": "default", "separator": " "}}})
    assert response.status_code == 200, response.text
    body = response.json()
    texts = [item["text"] for item in body["content"]]
    assert texts[0].startswith("knowledge_search tool found 2 chunks")
    assert texts[1] == "[1] Annual leave is 25 days. (leave)\n"
    assert body["metadata"]["document_ids"][0] == "leave"
    small = http.post("/v1/tool-runtime/rag-tool/query", json={
        "content": "leave", "vector_db_ids": ["handbook"],
        "query_config": {"max_tokens_in_context": 3}}).json()
    assert small["metadata"]["chunks"] == []  # nothing fits in three tokens


def test_rag_tool_llm_query_generator(http: httpx.Client) -> None:
    body = http.post("/v1/tool-runtime/rag-tool/query", json={
        "content": "hmm", "vector_db_ids": ["handbook"],
        "query_config": {"query_generator_config": {"type": "llm", "model": "fake:q",
                                                    "template": "Query for: {messages}"}}}
                     ).json()
    assert body["metadata"]["document_ids"][0] == "lunch"


def test_errors(http: httpx.Client) -> None:
    missing = http.post("/v1/vector-io/query", json={"vector_db_id": "nope", "query": "x"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    for path, body in (
        ("/v1/vector-io/query", {"vector_db_id": "handbook", "query": "x",
                                 "params": {"mode": "semantic"}}),
        ("/v1/tool-runtime/rag-tool/query", {"content": "x", "vector_db_ids": ["handbook"],
                                             "query_config": {"chunk_template": "{chunk._x}"}}),
        ("/v1/tool-runtime/rag-tool/query", {"content": "x", "vector_db_ids": []}),
        ("/v1/tool-runtime/rag-tool/insert", {"documents": [], "vector_db_id": "h",
                                              "chunk_size_in_tokens": 0}),
    ):
        response = http.post(path, json=body)
        assert response.status_code == 400, (path, body, response.text)
        assert set(response.json()["error"]) == {"message", "type", "param", "code"}
    other = httpx.post(f"{str(http.base_url).rstrip('/')}/v1/vector-io/query",
                       headers={"Authorization": "Bearer key-b"},
                       json={"vector_db_id": "handbook", "query": "lunch"})
    assert other.status_code == 404  # another tenant's knowledge base

"""The ``/v1`` routes inside the real server app (``create_app``): its keys and tenants,
its knowledge bases, its error handling, through the official client."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest

from tests.server.conftest import LiveServer, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = start_server(tmp_path_factory.mktemp("core") / "kb" / "ragloom.db")
    yield live
    live.stop()


@pytest.fixture(scope="module")
def keys(server: LiveServer) -> dict[str, str]:
    return {name: server.state.keys.create_key(name).key for name in ("alice", "bob")}


def client_for(server: LiveServer, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0)


def test_files_vector_stores_and_responses_in_the_real_app(
        server: LiveServer, keys: dict[str, str]) -> None:
    alice = client_for(server, keys["alice"])
    assert [m.id for m in alice.models.list()] == ["fake:echo", "fake:hashing-64"]
    vs = alice.vector_stores.create(name="handbook")
    fid = alice.files.create(file=("lunch.txt", b"The unpaid lunch break is 30 minutes."),
                             purpose="assistants").id
    attached = alice.vector_stores.files.create_and_poll(
        vector_store_id=vs.id, file_id=fid, attributes={"dept": "hr"}, poll_interval_ms=20)
    assert attached.status == "completed"
    hits = alice.vector_stores.search(vs.id, query="lunch break",
                                      filters={"type": "eq", "key": "dept", "value": "hr"})
    assert [h.file_id for h in hits.data] == [fid]
    response = alice.responses.create(
        model="fake:echo", input="lunch break?",
        tools=[{"type": "file_search", "vector_store_ids": [vs.id]}])
    annotations = response.output[1].content[0].annotations  # type: ignore[union-attr]
    assert annotations and annotations[0].file_id == fid  # type: ignore[union-attr]

    bob = client_for(server, keys["bob"])
    assert vs.id not in [v.id for v in bob.vector_stores.list()]
    with pytest.raises(openai.NotFoundError):
        bob.vector_stores.retrieve(vs.id)
    with pytest.raises(openai.NotFoundError):
        bob.files.content(fid)
    with pytest.raises(openai.AuthenticationError) as info:
        client_for(server, "rlk_not-a-key").vector_stores.list()
    assert set(info.value.body) == {"message", "type", "param", "code"}  # type: ignore[arg-type]


def test_spec_routes_and_chat_use_the_native_knowledge_bases(
        server: LiveServer, keys: dict[str, str]) -> None:
    headers = {"Authorization": f"Bearer {keys['alice']}"}
    with httpx.Client(base_url=server.url, headers=headers) as http:
        inserted = http.post("/v1/tool-runtime/rag-tool/insert", json={
            "vector_db_id": "policies", "chunk_size_in_tokens": 64, "documents": [
                {"document_id": "vpn", "content": "Use the VPN before opening payroll."}]})
        assert inserted.status_code == 200, inserted.text
        listed = http.get("/api/knowledge-bases").json()
        assert "policies" in str(listed)  # a native knowledge base of alice's
        found = http.post("/v1/vector-io/query", json={"vector_db_id": "policies",
                                                       "query": "VPN payroll"}).json()
        assert found["chunks"][0]["metadata"]["document_id"] == "vpn"
    alice = client_for(server, keys["alice"])
    completion = alice.chat.completions.create(
        model="fake:echo", messages=[{"role": "user", "content": "VPN?"}],
        extra_body={"knowledge_bases": ["policies"]})
    assert "Use the VPN before opening payroll." in (completion.choices[0].message.content
                                                     or "")
    bob = httpx.post(f"{server.url}/v1/vector-io/query",
                     headers={"Authorization": f"Bearer {keys['bob']}"},
                     json={"vector_db_id": "policies", "query": "VPN"})
    assert bob.status_code == 404

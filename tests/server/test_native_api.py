"""The native API over a real uvicorn: knowledge bases, documents as jobs, search, ask
(JSON and server-sent events), sessions, errors, operations endpoints."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from tests.server.conftest import LiveServer, sse_events, wait_batch

POLICY = ("Lunch policy.\n\nThe unpaid lunch break is 30 minutes long and is taken "
          "between noon and two.")
TRAVEL = "Travel policy.\n\nTrain tickets are refunded in second class only."


@pytest.fixture(scope="module")
def client(live: LiveServer) -> httpx.Client:
    return live.client()


@pytest.fixture(scope="module")
def handbook(client: httpx.Client) -> dict[str, Any]:
    kb = client.post("/api/knowledge-bases", json={
        "name": "handbook", "chunking": {"splitter": "paragraph"}}).json()
    files = [("files", ("lunch.md", POLICY.encode(), "text/markdown")),
             ("files", ("travel.txt", TRAVEL.encode(), "text/plain"))]
    response = client.post("/api/knowledge-bases/handbook/documents", files=files,
                           data={"metadata": json.dumps({"team": "hr", "year": 2024})})
    assert response.status_code == 202
    batch = response.json()
    assert batch["status"] in ("in_progress", "completed")
    done = wait_batch(client, batch["id"])
    assert done["status"] == "completed", done
    assert done["file_counts"] == {"in_progress": 0, "completed": 2, "failed": 0,
                                   "cancelled": 0, "total": 2}
    data: dict[str, Any] = kb
    return data


def test_knowledge_base_lifecycle(client: httpx.Client, handbook: dict[str, Any]) -> None:
    got = client.get(f"/api/knowledge-bases/{handbook['id']}").json()
    assert (got["name"], got["document_count"]) == ("handbook", 2)
    assert got["chunk_count"] >= 4  # the paragraph splitter: two per document
    assert client.get("/api/knowledge-bases/handbook").json()["id"] == handbook["id"]
    names = [kb["name"] for kb in client.get("/api/knowledge-bases").json()["data"]]
    assert "handbook" in names
    conflict = client.post("/api/knowledge-bases", json={"name": "handbook"})
    assert conflict.status_code == 409
    created = client.post("/api/knowledge-bases", json={"name": "scratch",
                                                        "embedder": "fake:hashing-32"}).json()
    assert created["embedder"] == "fake:hashing-32"
    deleted = client.delete("/api/knowledge-bases/scratch")
    assert deleted.json() == {"id": created["id"], "object": "knowledge_base.deleted",
                              "deleted": True}
    assert client.get("/api/knowledge-bases/scratch").status_code == 404


def test_documents_text_list_get_delete_and_filter(client: httpx.Client) -> None:
    client.post("/api/knowledge-bases", json={"name": "notes"})
    jobs = [client.post("/api/knowledge-bases/notes/documents/text?wait=10",
                        json={"text": f"note number {i} about topic {i % 2}",
                              "source": f"note-{i}", "metadata": {"n": i}}).json()
            for i in range(4)]
    assert all(j["status"] == "completed" for j in jobs), jobs
    assert jobs[0]["documents"][0]["outcome"] == "new"
    again = client.post("/api/knowledge-bases/notes/documents/text?wait=10",
                        json={"text": "note number 0 about topic 0", "source": "note-0",
                              "metadata": {"n": 0}}).json()
    assert again["documents"][0]["outcome"] == "unchanged"
    listed = client.get("/api/knowledge-bases/notes/documents").json()["data"]
    assert sorted(d["source"] for d in listed) == [f"note-{i}" for i in range(4)]
    # A page at a time: has_more and last lead to the next page, and the pages add up.
    pages, after = [], None
    while True:
        params = {"limit": 3, **({"after": after} if after else {})}
        page = client.get("/api/knowledge-bases/notes/documents", params=params).json()
        pages.append([d["source"] for d in page["data"]])
        if not page["has_more"]:
            break
        after = page["last"]
    assert pages == [["note-0", "note-1", "note-2"], ["note-3"]]
    first = listed[0]
    one = client.get(f"/api/knowledge-bases/notes/documents/{first['id']}").json()
    assert one == first and one["metadata"]["n"] == 0
    gone = client.post("/api/knowledge-bases/notes/documents/delete",
                       json={"filters": {"key": "n", "op": ">=", "value": 2}}).json()
    assert gone["deleted"] == 2
    assert client.delete(f"/api/knowledge-bases/notes/documents/{first['id']}").json()[
        "deleted"]
    left = [d["source"] for d in client.get("/api/knowledge-bases/notes/documents").json()[
        "data"]]
    assert left == ["note-1"]
    missing = client.get(f"/api/knowledge-bases/notes/documents/{first['id']}")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"


def test_failed_jobs_say_why(client: httpx.Client, handbook: dict[str, Any]) -> None:
    files = [("files", ("blob.bin", bytes(range(256)) * 8, "application/octet-stream")),
             ("files", ("empty.txt", b"   ", "text/plain"))]
    batch = client.post("/api/knowledge-bases/handbook/documents", files=files).json()
    done = wait_batch(client, batch["id"])
    reasons = {j["source"]: j["error"]["reason"] for j in done["jobs"]}
    assert done["status"] == "failed"
    assert reasons == {"blob.bin": "unsupported_file", "empty.txt": "invalid_file"}
    # The SSRF-safe loader refuses this machine's addresses: a failed job, not a fetch.
    job = client.post("/api/knowledge-bases/handbook/documents/url?wait=10",
                      json={"url": "http://127.0.0.1:1/secret"}).json()
    assert job["status"] == "failed" and "loopback" in job["error"]["message"]


def test_search_options_and_several_knowledge_bases(client: httpx.Client,
                                                    handbook: dict[str, Any]) -> None:
    body = {"query": "lunch break minutes", "knowledge_bases": ["handbook"], "top_k": 2}
    for mode in ("vector", "keyword", "hybrid"):
        for ranker in ("weighted", "rrf"):
            found = client.post("/api/search", json={**body, "mode": mode, "ranker": ranker})
            assert found.status_code == 200, found.text
            matches = found.json()["matches"]
            assert matches[0]["source"] == "lunch.md", (mode, ranker)
            assert all(0.0 <= m["score"] <= 1.0 for m in matches)
    filtered = client.post("/api/search", json={
        **body, "filters": {"key": "file_name", "op": "==", "value": "travel.txt"}}).json()
    assert {m["source"] for m in filtered["matches"]} == {"travel.txt"}
    high = client.post("/api/search", json={**body, "score_threshold": 1.0, "mode": "keyword",
                                            "top_k": 10}).json()
    assert len(high["matches"]) <= 1
    documents = client.post("/api/search", json={**body, "documents": True, "top_k": 5}).json()
    assert len({m["document_id"] for m in documents["matches"]}) == len(documents["matches"])
    client.post("/api/knowledge-bases", json={"name": "extra"})
    client.post("/api/knowledge-bases/extra/documents/text?wait=10",
                json={"text": "The lunch break menu has soup.", "source": "menu"})
    both = client.post("/api/search", json={**body, "knowledge_bases": ["handbook", "extra"],
                                            "top_k": 10}).json()
    assert {m["knowledge_base"] for m in both["matches"]} == {"handbook", "extra"}
    bad = client.post("/api/search", json={**body, "filters": {"key": "x", "op": "~"}})
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"


def test_ask_json_and_stream_sources_first(client: httpx.Client,
                                           handbook: dict[str, Any]) -> None:
    body = {"question": "How long is the unpaid lunch break?", "knowledge_bases": ["handbook"]}
    answer = client.post("/api/ask", json=body).json()
    assert answer["sources"][0]["source"] == "lunch.md"
    assert answer["answer"] and answer["usage"]["output_tokens"] >= 0
    assert isinstance(answer["citations"], list)
    with client.stream("POST", "/api/ask", json={**body, "stream": True}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        text = "".join(response.iter_text())
    events = sse_events(text)
    names = [name for name, _ in events]
    assert names[0] == "sources" and names[-1] == "done"
    assert "delta" in names and names.index("delta") > 0
    assert events[0][1]["sources"][0]["source"] == "lunch.md"
    done = events[-1][1]
    assert done["answer"] == "".join(d["text"] for n, d in events if n == "delta").strip()
    assert {"citations", "supporting_quotes", "usage"} <= set(done)


def test_stream_reports_a_failure_midway(live: LiveServer, client: httpx.Client,
                                         handbook: dict[str, Any]) -> None:
    from ragloom.errors import ProviderConnectionError
    from ragloom.types import ChatDelta

    class Failing:
        name = "fake:failing"

        def chat(self, *args: Any, **kwargs: Any) -> Any:
            raise ProviderConnectionError("unreachable", provider="fake")

        def stream(self, *args: Any, **kwargs: Any) -> Any:
            yield ChatDelta(text="Half")
            raise ProviderConnectionError("connection dropped", provider="fake")

    models = live.state.models
    saved = models._model
    models._model = (Failing(),)
    try:
        body = {"question": "lunch?", "knowledge_bases": ["handbook"], "stream": True}
        with client.stream("POST", "/api/ask", json=body) as response:
            events = sse_events("".join(response.iter_text()))
        assert events[0][0] == "sources" and events[-1][0] == "error"
        assert events[-1][1]["error"]["type"] == "provider_error"
        failed = client.post("/api/ask", json={**body, "stream": False})
        assert failed.status_code == 502
    finally:
        models._model = saved


def test_sessions_keep_history(client: httpx.Client, handbook: dict[str, Any]) -> None:
    session = client.post("/api/sessions", json={"knowledge_bases": ["handbook"],
                                                 "title": "hr"}).json()
    first = client.post(f"/api/sessions/{session['id']}/ask",
                        json={"question": "How long is the lunch break?"}).json()
    assert first["session_id"] == session["id"]
    with client.stream("POST", f"/api/sessions/{session['id']}/ask",
                       json={"question": "And when is it taken?", "stream": True}) as response:
        events = sse_events("".join(response.iter_text()))
    assert events[-1][0] == "done"
    # The follow-up retrieves with the previous question in mind.
    assert events[0][1]["sources"][0]["source"] == "lunch.md"
    detail = client.get(f"/api/sessions/{session['id']}").json()
    assert [m["role"] for m in detail["messages"]] == ["user", "assistant"] * 2
    assert detail["messages"][0]["content"] == "How long is the lunch break?"
    assert detail["messages"][1]["sources"]
    assert session["id"] in [s["id"] for s in client.get("/api/sessions").json()["data"]]
    assert client.delete(f"/api/sessions/{session['id']}").json()["deleted"]
    assert client.get(f"/api/sessions/{session['id']}").status_code == 404


def test_errors_have_one_shape(client: httpx.Client) -> None:
    for response in (client.get("/api/knowledge-bases/nope"), client.get("/api/jobs/job_x"),
                     client.post("/api/search", json={"query": ""}),
                     client.get("/api/no-such-route")):
        error = response.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert response.status_code in (400, 404)
    assert client.post("/api/search", json={"query": "x"}).status_code == 400
    blank = client.post("/api/search", json={"query": "   ", "knowledge_bases": ["handbook"]})
    assert blank.status_code == 400


def test_operations_endpoints(client: httpx.Client) -> None:
    assert client.get("/health").json() == {"status": "ok"}
    ready = client.get("/ready")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    response = client.get("/health", headers={"X-Request-ID": "abc-123"})
    assert response.headers["x-request-id"] == "abc-123"
    assert len(client.get("/health").headers["x-request-id"]) == 16
    metrics = client.get("/metrics").text
    assert 'ragloom_http_requests_total{method="GET",route="/health",status="200"}' in metrics
    assert "ragloom_ingestion_jobs_pending" in metrics
    schema = client.get("/openapi.json").json()
    assert "/api/search" in schema["paths"] and "/api/ask" in schema["paths"]
    assert client.get("/docs").status_code == 200


def test_log_lines_carry_request_id_and_time(live: LiveServer,
                                             caplog: pytest.LogCaptureFixture) -> None:
    from ragloom.server.observability import JsonFormatter, RequestIdFilter

    caplog.handler.addFilter(RequestIdFilter())
    with caplog.at_level("INFO", logger="ragloom.server.access"):
        live.client().get("/health", headers={"X-Request-ID": "trace-42"})
        # The line is written once the response is sent: the client may be faster.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            records = [r for r in caplog.records if r.name == "ragloom.server.access"
                       and getattr(r, "request_id", "") == "trace-42"]
            if records:
                break
            time.sleep(0.02)
    line = json.loads(JsonFormatter().format(records[-1]))
    assert line["request_id"] == "trace-42"
    assert line["path"] == "/health" and line["status"] == 200 and line["duration_ms"] >= 0


def test_blocked_model_calls_do_not_stall_searches(live: LiveServer, client: httpx.Client,
                                                   handbook: dict[str, Any]) -> None:
    import threading

    from ragloom.testing import ScriptedModel

    release = threading.Event()
    entered = threading.Semaphore(0)

    def blocked(messages: Any) -> str:
        entered.release()
        release.wait(30)
        return "The lunch break is 30 minutes [1]."

    models = live.state.models
    saved = models._model
    models._model = (ScriptedModel([blocked]),)
    answers: list[int] = []

    def ask() -> None:
        body = {"question": "How long is lunch?", "knowledge_bases": ["handbook"]}
        answers.append(live.client().post("/api/ask", json=body).status_code)

    askers = [threading.Thread(target=ask) for _ in range(4)]  # more than the model pool
    try:
        for thread in askers:
            thread.start()
        assert entered.acquire(timeout=30)  # a model call is in flight and held
        for _ in range(5):
            found = client.post("/api/search", json={"query": "lunch",
                                                     "knowledge_bases": ["handbook"]})
            assert found.status_code == 200
        assert client.get("/api/knowledge-bases/handbook").status_code == 200
        assert not answers  # every ask is still waiting for the model
    finally:
        release.set()
        for thread in askers:
            thread.join(30)
        models._model = saved
    assert answers == [200] * 4

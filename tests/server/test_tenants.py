"""Tenants: another tenant's object is a 404 on every route taking an id, lists show
only the caller's objects; keys are required once they exist; 429 and 413."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import LiveServer, start_server, wait_batch


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    from ragloom.server.auth import KeyStore
    from ragloom.server.db import ServerDatabase

    db_path = tmp_path_factory.mktemp("tenants") / "ragloom.db"
    database = ServerDatabase(db_path.parent / "server.db")
    keys = {name: KeyStore(database).create_key(name).key for name in ("alice", "bob", "carol")}
    database.close()
    server = start_server(db_path, rate_limit=600, max_upload_bytes=64 * 1024)
    yield server, keys
    server.stop()


@pytest.fixture(scope="module")
def alice_objects(keyed: tuple[LiveServer, dict[str, str]]) -> dict[str, str]:
    server, keys = keyed
    alice = server.client(keys["alice"])
    kb = alice.post("/api/knowledge-bases", json={"name": "secret"}).json()
    batch = alice.post("/api/knowledge-bases/secret/documents",
                       files=[("files", ("plan.txt", b"The launch is on Friday.", "text/plain"))]
                       ).json()
    done = wait_batch(alice, batch["id"])
    document = done["jobs"][0]["documents"][0]["id"]
    session = alice.post("/api/sessions", json={"knowledge_bases": ["secret"]}).json()
    return {"kb": kb["id"], "kb_name": "secret", "batch": batch["id"],
            "job": done["jobs"][0]["id"], "document": document, "session": session["id"]}


def test_keys_are_required_and_hashed(keyed: tuple[LiveServer, dict[str, str]]) -> None:
    server, keys = keyed
    anonymous = server.client()
    response = anonymous.get("/api/knowledge-bases")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "missing_api_key"
    wrong = server.client("rlk_not-a-key").get("/api/knowledge-bases")
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_api_key"
    assert server.client(keys["bob"]).get("/api/knowledge-bases").status_code == 200
    x_api_key = httpx.Client(base_url=server.url, headers={"X-API-Key": keys["bob"]})
    assert x_api_key.get("/api/knowledge-bases").status_code == 200
    stored = server.state.db.all("SELECT key_hash, prefix FROM api_keys")
    assert all(key not in str(stored) for key in keys.values())
    assert server.client().get("/health").status_code == 200  # operations need no key


def _routes(ids: dict[str, str]) -> list[tuple[str, str, str, dict[str, Any]]]:
    kb, doc = ids["kb"], ids["document"]
    body = {"knowledge_bases": [kb]}
    return [
        ("GET", "/api/knowledge-bases/{kb}", f"/api/knowledge-bases/{kb}", {}),
        ("GET", "/api/knowledge-bases/{kb}", f"/api/knowledge-bases/{ids['kb_name']}", {}),
        ("DELETE", "/api/knowledge-bases/{kb}", f"/api/knowledge-bases/{kb}", {}),
        ("GET", "/api/knowledge-bases/{kb}/documents", f"/api/knowledge-bases/{kb}/documents",
         {}),
        ("POST", "/api/knowledge-bases/{kb}/documents", f"/api/knowledge-bases/{kb}/documents",
         {"files": [("files", ("x.txt", b"hello", "text/plain"))]}),
        ("POST", "/api/knowledge-bases/{kb}/documents/text",
         f"/api/knowledge-bases/{kb}/documents/text", {"json": {"text": "hello"}}),
        ("POST", "/api/knowledge-bases/{kb}/documents/url",
         f"/api/knowledge-bases/{kb}/documents/url", {"json": {"url": "https://example.com"}}),
        ("POST", "/api/knowledge-bases/{kb}/documents/delete",
         f"/api/knowledge-bases/{kb}/documents/delete",
         {"json": {"filters": {"key": "source", "op": "!=", "value": ""}}}),
        ("GET", "/api/knowledge-bases/{kb}/documents/{document_id}",
         f"/api/knowledge-bases/{kb}/documents/{doc}", {}),
        ("DELETE", "/api/knowledge-bases/{kb}/documents/{document_id}",
         f"/api/knowledge-bases/{kb}/documents/{doc}", {}),
        ("GET", "/api/knowledge-bases/{kb}/graph", f"/api/knowledge-bases/{kb}/graph", {}),
        ("PUT", "/api/knowledge-bases/{kb}/graph", f"/api/knowledge-bases/{kb}/graph",
         {"json": {"enabled": False}}),
        ("GET", "/api/knowledge-bases/{kb}/graph/entities/{entity}",
         f"/api/knowledge-bases/{kb}/graph/entities/launch", {}),
        ("GET", "/api/jobs/{job_id}", f"/api/jobs/{ids['job']}", {}),
        ("GET", "/api/batches/{batch_id}", f"/api/batches/{ids['batch']}", {}),
        ("GET", "/api/sessions/{session_id}", f"/api/sessions/{ids['session']}", {}),
        ("DELETE", "/api/sessions/{session_id}", f"/api/sessions/{ids['session']}", {}),
        ("POST", "/api/sessions/{session_id}/ask", f"/api/sessions/{ids['session']}/ask",
         {"json": {"question": "when is the launch?"}}),
        ("POST", "/api/search", "/api/search", {"json": {**body, "query": "launch"}}),
        ("POST", "/api/ask", "/api/ask", {"json": {**body, "question": "launch?"}}),
        ("POST", "/api/sessions", "/api/sessions", {"json": body}),
    ]


def test_another_tenants_ids_are_404_everywhere(
        keyed: tuple[LiveServer, dict[str, str]], alice_objects: dict[str, str]) -> None:
    server, keys = keyed
    bob = server.client(keys["bob"])
    bob.post("/api/knowledge-bases", json={"name": "mine"})
    routes = _routes(alice_objects)
    for method, _template, path, options in routes:
        response = bob.request(method, path, **options)
        assert response.status_code == 404, (method, path, response.text)
        assert response.json()["error"]["type"] == "not_found_error"
    # Bob's own knowledge base with Alice's document id: still 404.
    own = bob.get(f"/api/knowledge-bases/mine/documents/{alice_objects['document']}")
    assert own.status_code == 404
    # Every native route with an id in its path is covered above.
    schema = server.client(keys["bob"]).get("/openapi.json").json()
    templated = {(method.upper(), path) for path, item in schema["paths"].items()
                 if path.startswith("/api/") and "{" in path for method in item}
    assert templated <= {(method, template) for method, template, _, _ in routes}
    # Nothing of Alice's was touched by Bob's attempts.
    alice = server.client(keys["alice"])
    assert alice.get(f"/api/knowledge-bases/{alice_objects['kb']}").json()[
        "document_count"] == 1
    assert alice.get(f"/api/sessions/{alice_objects['session']}").status_code == 200


def test_lists_show_only_the_callers_objects(
        keyed: tuple[LiveServer, dict[str, str]], alice_objects: dict[str, str]) -> None:
    server, keys = keyed
    bob = server.client(keys["bob"])
    for path in ("/api/knowledge-bases", "/api/jobs", "/api/sessions"):
        listed = bob.get(path).json()["data"]
        ids = {item["id"] for item in listed}
        assert not ids & set(alice_objects.values()), path
    alice = server.client(keys["alice"])
    assert alice_objects["kb"] in {kb["id"] for kb in alice.get("/api/knowledge-bases").json()[
        "data"]}
    # Two tenants may use the same name; each sees its own.
    bob.post("/api/knowledge-bases", json={"name": "secret"})
    bobs = bob.get("/api/knowledge-bases/secret").json()
    assert bobs["id"] != alice_objects["kb"] and bobs["document_count"] == 0
    found = bob.post("/api/search", json={"query": "launch Friday",
                                          "knowledge_bases": ["secret"]}).json()
    assert found["matches"] == []


def test_rate_limit_answers_429_with_retry_after(
        keyed: tuple[LiveServer, dict[str, str]]) -> None:
    from ragloom.server.auth import TokenBuckets

    server, keys = keyed
    carol = server.client(keys["carol"])
    saved = server.state.auth.buckets
    # 60 a minute: bursts of 6, one more a second, so 20 quick requests must hit it
    # even on a busy machine.
    server.state.auth.buckets = TokenBuckets(60)
    try:
        statuses = [carol.get("/api/knowledge-bases") for _ in range(20)]
        other = server.client(keys["bob"]).get("/api/knowledge-bases")
    finally:
        server.state.auth.buckets = saved
    limited = [r for r in statuses if r.status_code == 429]
    assert limited
    assert int(limited[0].headers["Retry-After"]) >= 1
    assert limited[0].json()["error"]["code"] == "rate_limit_exceeded"
    # Per key: another key is not limited by carol's burst.
    assert other.status_code == 200


def test_uploads_over_the_limit_get_413(keyed: tuple[LiveServer, dict[str, str]],
                                        tmp_path: Path) -> None:
    server, keys = keyed
    bob = server.client(keys["bob"])
    bob.post("/api/knowledge-bases", json={"name": "uploads"})
    big = b"word " * 20_000  # 100 kB, over the 64 kB limit
    response = bob.post("/api/knowledge-bases/uploads/documents",
                        files=[("files", ("big.txt", big, "text/plain"))])
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request_too_large"
    # Without Content-Length (chunked), the route counts what it reads.
    def chunks() -> Iterator[bytes]:
        boundary = b"--xyz\r\n"
        yield boundary + b'Content-Disposition: form-data; name="files"; filename="b.txt"\r\n'
        yield b"Content-Type: text/plain\r\n\r\n"
        for _ in range(10):
            yield b"x" * 10_000
        yield b"\r\n--xyz--\r\n"
    chunked = bob.post("/api/knowledge-bases/uploads/documents", content=chunks(),
                       headers={"Content-Type": "multipart/form-data; boundary=xyz"})
    assert chunked.status_code == 413
    small = bob.post("/api/knowledge-bases/uploads/documents",
                     files=[("files", ("small.txt", b"small file", "text/plain"))])
    assert small.status_code == 202


def count_lookups(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys the server looks up in its database from now on."""
    lookups: list[str] = []
    real = server.state.auth.keys.lookup

    def counting(key: str) -> Any:
        lookups.append(key)
        return real(key)

    monkeypatch.setattr(server.state.auth.keys, "lookup", counting)
    return lookups


def test_a_checked_key_is_remembered_briefly_and_a_revoked_one_stops(
        keyed: tuple[LiveServer, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from ragloom.server import auth

    server, _ = keyed
    keys = auth.KeyStore(server.state.db)
    created = keys.create_key("dave")
    monkeypatch.setattr(auth, "_KEY_CHECK_SECONDS", 0.5)
    lookups = count_lookups(server, monkeypatch)
    dave = server.client(created.key)
    assert dave.get("/api/knowledge-bases").status_code == 200
    assert dave.get("/api/knowledge-bases").status_code == 200
    assert lookups == [created.key]  # the second request read no database
    assert keys.revoke(created.key_id)
    time.sleep(0.6)
    response = dave.get("/api/knowledge-bases")
    assert response.status_code == 401 and response.json()["error"]["code"] == "invalid_api_key"


def test_a_key_sent_to_a_server_without_keys_is_looked_up_once_per_window(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The official OpenAI client always sends a key: on a keyless loopback server it
    is served as the default tenant, without a database read per request, until a
    first key exists."""
    import time

    from ragloom.server import auth

    monkeypatch.setattr(auth, "_KEY_CHECK_SECONDS", 0.5)
    server = start_server(tmp_path / "kb" / "ragloom.db")
    try:
        lookups = count_lookups(server, monkeypatch)
        anyone = server.client("sk-not-a-key")
        created = anyone.post("/api/knowledge-bases", json={"name": "mine"})
        assert created.status_code in (200, 201), created.text
        for _ in range(3):
            listed = anyone.get("/api/knowledge-bases")
            assert [kb["name"] for kb in listed.json()["data"]] == ["mine"]
        assert lookups == ["sk-not-a-key"]  # one read for four requests
        default = server.client()
        assert [kb["name"] for kb in default.get("/api/knowledge-bases").json()["data"]] == [
            "mine"]  # the same tenant as a request without a key

        auth.KeyStore(server.state.db).create_key("erin")
        time.sleep(0.6)
        refused = anyone.get("/api/knowledge-bases")
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "invalid_api_key"
    finally:
        server.stop()

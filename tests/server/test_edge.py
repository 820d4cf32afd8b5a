"""The edge policy, probed from outside against real servers on 127.0.0.1.

A real ``ragloom serve`` process (RSS measured with psutil) for the body limits,
raw sockets for chunked bodies (a generator of 1 MB pieces, never 300 MB in
memory), and uvicorn in a thread for the rest.
"""

from __future__ import annotations

import os
import select
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import LiveServer, start_server
from tests.serving import free_port, start_ragloom_serve

MB = 1024 * 1024
PIECE = b"x" * MB


def this_tree_env() -> dict[str, str]:
    """The environment for a ``ragloom serve`` child running this tree's code."""
    import ragloom

    source = str(Path(ragloom.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}


def chunked_post(port: int, path: str, total: int, headers: dict[str, str] | None = None,
                 content_type: str = "application/json", prefix: bytes = b""
                 ) -> tuple[int, int, bytes]:
    """POST ``total`` bytes as a chunked body (1 MB pieces) over a raw socket, stopping
    as soon as the server answers or stops reading; (status, bytes sent, body)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 256 * 1024)
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}",
             f"Content-Type: {content_type}", "Transfer-Encoding: chunked"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    if prefix:
        sock.sendall(b"%x\r\n" % len(prefix) + prefix + b"\r\n")
    sent = len(prefix)
    try:
        while sent < total:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
            sock.settimeout(2)
            try:
                sock.sendall(b"%x\r\n" % len(PIECE) + PIECE + b"\r\n")
            except TimeoutError:
                break  # the server stopped reading
            sent += len(PIECE)
    except (BrokenPipeError, ConnectionResetError):
        pass
    sock.settimeout(10)
    data = b""
    try:
        while b"\r\n\r\n" not in data or len(data) < data.index(b"\r\n\r\n") + 4 + _length(data):
            piece = sock.recv(65536)
            if not piece:
                break
            data += piece
    except (ConnectionResetError, TimeoutError):
        pass
    finally:
        sock.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    return status, sent, data.partition(b"\r\n\r\n")[2]


def _length(data: bytes) -> int:
    head = data.partition(b"\r\n\r\n")[0].lower()
    for line in head.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, Any]]:
    """A ``ragloom serve`` process with one API key: (port, key, psutil.Process)."""
    psutil = pytest.importorskip("psutil")
    from ragloom.server.auth import KeyStore
    from ragloom.server.db import ServerDatabase

    folder = tmp_path_factory.mktemp("edge")
    db = folder / "data" / "ragloom.db"
    db.parent.mkdir()
    database = ServerDatabase(db.parent / "server.db")
    key = KeyStore(database).create_key("acme").key
    database.close()
    port = free_port()
    process = start_ragloom_serve(db, port, folder / "serve.log", "--embedder",
                                  "fake:hashing-64", "--llm", "fake:echo", "--rate-limit", "0",
                                  "--max-upload-mb", "2", "--max-json-mb", "1",
                                  cwd=folder, env=this_tree_env())
    try:
        yield port, key, psutil.Process(process.pid)
    finally:
        process.terminate()
        process.wait(15)


def test_unauthenticated_chunked_upload_is_refused_before_it_is_read(
        served: tuple[int, str, Any]) -> None:
    port, _key, process = served
    before = process.memory_info().rss
    status, sent, body = chunked_post(port, "/api/knowledge-bases/kb/documents", 300 * MB,
                                      content_type=MULTIPART,
                                      prefix=FILE_PART.replace(b"FIELD", b"files"))
    after = process.memory_info().rss
    print(f"\nunauthenticated 300 MB chunked: {status}, {sent / MB:.1f} MB sent, "
          f"RSS {(after - before) / MB:+.1f} MB")
    assert status == 401, body
    assert b"API key" in body
    assert sent <= 16 * MB, f"the client could push {sent / MB:.0f} MB"
    assert after - before < 20 * MB, f"RSS grew {(after - before) / MB:.0f} MB"


MULTIPART = "multipart/form-data; boundary=XyZ"
FILE_PART = (b'--XyZ\r\nContent-Disposition: form-data; name="FIELD"; filename="big.txt"'
             b"\r\nContent-Type: text/plain\r\n\r\n")


@pytest.mark.parametrize(("path", "content_type", "prefix"), [
    ("/api/knowledge-bases/kb/documents/text", "application/json", b'{"text": "'),
    ("/api/knowledge-bases/kb/documents", MULTIPART, FILE_PART.replace(b"FIELD", b"files")),
    ("/v1/files", MULTIPART, FILE_PART.replace(b"FIELD", b"file")),
])
def test_authenticated_chunked_body_over_the_limit_is_413(
        served: tuple[int, str, Any], path: str, content_type: str, prefix: bytes) -> None:
    port, key, process = served
    before = process.memory_info().rss
    status, sent, body = chunked_post(port, path, 300 * MB, {"Authorization": f"Bearer {key}"},
                                      content_type=content_type, prefix=prefix)
    print(f"\n{path}: {status}, {sent / MB:.1f} MB sent, "
          f"RSS {(process.memory_info().rss - before) / MB:+.1f} MB")
    assert status == 413, body
    assert b"request_too_large" in body
    assert sent <= 24 * MB, f"the client could push {sent / MB:.0f} MB"
    assert process.memory_info().rss - before < 40 * MB


def test_content_length_over_the_json_limit_is_413_at_once(
        served: tuple[int, str, Any]) -> None:
    port, key, _process = served
    response = httpx.post(f"http://127.0.0.1:{port}/api/search", content=b"{" * (2 * MB),
                          headers={"Authorization": f"Bearer {key}",
                                   "Content-Type": "application/json"})
    assert response.status_code == 413
    small = httpx.post(f"http://127.0.0.1:{port}/api/knowledge-bases",
                       json={"name": "fine"}, headers={"Authorization": f"Bearer {key}"})
    assert small.status_code == 201, small.text


# ---------------------------------------------------------------- keyless mode


@pytest.fixture(scope="module")
def keyless(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = start_server(tmp_path_factory.mktemp("keyless") / "ragloom.db", rate_limit=0)
    yield server
    server.stop()


def test_foreign_host_is_refused_without_keys(keyless: LiveServer) -> None:
    with keyless.client() as client:
        rebound = client.get("/api/knowledge-bases", headers={"Host": "evil.example:8321"})
        assert rebound.status_code == 403
        assert "Host" in rebound.json()["error"]["message"]
        for host in ("localhost:8321", "127.0.0.1", "[::1]:9000"):
            assert client.get("/api/knowledge-bases", headers={"Host": host}).status_code == 200


def test_cross_origin_post_is_refused_without_keys(keyless: LiveServer) -> None:
    port = keyless.url.rsplit(":", 1)[1]
    with keyless.client() as client:
        for headers in ({"Origin": "https://evil.example"}, {"Origin": "null"},
                        {"Sec-Fetch-Site": "cross-site"},
                        {"Origin": f"http://localhost:{port}"}):  # another origin's name
            refused = client.post("/api/knowledge-bases", json={"name": "csrf"},
                                  headers=headers)
            assert refused.status_code == 403, headers
            assert refused.json()["error"]["code"] == "forbidden_origin"
        assert client.get("/api/knowledge-bases/csrf").status_code == 404
        same = client.post("/api/knowledge-bases", json={"name": "mine"}, headers={
            "Origin": keyless.url, "Sec-Fetch-Site": "same-origin"})
        assert same.status_code == 201, same.text
        # A client that sends neither header (curl, SDKs) is served.
        assert client.post("/api/knowledge-bases", json={"name": "cli"}).status_code == 201
        # Reading (GET) is not a change: a cross-site GET is answered (CORS keeps its
        # body from the page).
        assert client.get("/api/knowledge-bases",
                          headers={"Sec-Fetch-Site": "cross-site"}).status_code == 200


def test_web_page_still_loads_same_origin(keyless: LiveServer) -> None:
    with keyless.client() as client:
        page = client.get("/")
        assert page.status_code == 200 and "<html" in page.text.lower()


def test_keys_lift_the_host_check(tmp_path: Path) -> None:
    from ragloom.server.auth import KeyStore
    from ragloom.server.db import ServerDatabase

    db = tmp_path / "ragloom.db"
    database = ServerDatabase(tmp_path / "server.db")
    key = KeyStore(database).create_key("acme").key
    database.close()
    server = start_server(db, rate_limit=0)
    try:
        with server.client(key) as client:
            answer = client.get("/api/knowledge-bases", headers={"Host": "rag.example.com"})
            assert answer.status_code == 200
        with server.client() as anonymous:
            assert anonymous.get("/api/knowledge-bases").status_code == 401
    finally:
        server.stop()


# ---------------------------------------------------------------- allow-lists


@pytest.mark.parametrize("embedder", ["local:/etc", "hf:BAAI/bge-small-en-v1.5",
                                      "fake:hashing-16", "openai:text-embedding-3-small"])
def test_embedders_outside_the_allow_list_are_400(keyless: LiveServer, embedder: str) -> None:
    with keyless.client() as client:
        refused = client.post("/api/knowledge-bases", json={"name": "probe",
                                                            "embedder": embedder})
        assert refused.status_code == 400, refused.text
        error = refused.json()["error"]
        assert error["code"] == "model_not_allowed" and error["param"] == "embedder"
        assert "'fake:hashing-64'" in error["message"]  # the allowed ones are named
        assert "'fake:hashing-32'" in error["message"]
        assert client.get("/api/knowledge-bases/probe").status_code == 404
        vector_store = client.post("/v1/vector_stores", json={"name": "probe",
                                                              "embedding_model": embedder})
        assert vector_store.status_code == 400
        assert "fake:hashing-64" in vector_store.json()["error"]["message"]


def test_allowed_embedder_and_model_are_served(keyless: LiveServer) -> None:
    with keyless.client() as client:
        made = client.post("/api/knowledge-bases", json={"name": "allowed",
                                                         "embedder": "fake:hashing-32"})
        assert made.status_code == 201, made.text
        chat = client.post("/v1/chat/completions", json={
            "model": "fake:echo", "messages": [{"role": "user", "content": "hi"}]})
        assert chat.status_code == 200
        other = client.post("/v1/chat/completions", json={
            "model": "openai:gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
        assert other.status_code == 400
        assert "'fake:echo'" in other.json()["error"]["message"]


def test_per_tenant_allow_list(tmp_path: Path) -> None:
    from ragloom.server.auth import KeyStore
    from ragloom.server.db import ServerDatabase

    database = ServerDatabase(tmp_path / "server.db")
    keys = {name: KeyStore(database).create_key(name).key for name in ("acme", "other")}
    database.close()
    server = start_server(tmp_path / "ragloom.db", rate_limit=0,
                          tenant_models={"acme": ("fake:hashing-16", "fake:other")})
    try:
        body = {"name": "wide", "embedder": "fake:hashing-16"}
        chat = {"model": "fake:other", "messages": [{"role": "user", "content": "hi"}]}
        with server.client(keys["acme"]) as acme:
            assert acme.post("/api/knowledge-bases", json=body).status_code == 201
            answered = acme.post("/v1/chat/completions", json=chat)
            assert answered.status_code == 200, answered.text
            assert answered.json()["choices"][0]["message"]["content"] == "I don't know."
            assert "fake:other" in [m["id"] for m in acme.get("/v1/models").json()["data"]]
        with server.client(keys["other"]) as other:
            refused = other.post("/api/knowledge-bases", json=body)
            assert refused.status_code == 400
            assert "fake:hashing-16" not in refused.json()["error"]["message"].split(
                "allowed:")[1]
            assert other.post("/v1/chat/completions", json=chat).status_code == 400
            assert "fake:other" not in [m["id"] for m in other.get("/v1/models").json()["data"]]
    finally:
        server.stop()


# ---------------------------------------------------------------- bounds


def test_list_limits_are_bounded(keyless: LiveServer) -> None:
    with keyless.client() as client:
        assert client.get("/v1/files", params={"limit": 10_000}).status_code == 400
        assert client.get("/v1/files", params={"limit": 1000}).status_code == 200
        assert client.get("/api/jobs", params={"limit": 5000}).status_code == 400
        assert client.get("/api/knowledge-bases", params={"limit": 5000}).status_code == 400
        assert client.get("/api/sessions", params={"limit": 5000}).status_code == 400
        huge = client.post("/v1/vector-io/query", json={
            "vector_db_id": "x", "query": "q", "params": {"max_chunks": 100_000}})
        assert huge.status_code == 400
        assert huge.json()["error"]["param"] == "params.max_chunks"
        graph = client.get("/api/knowledge-bases/allowed/graph/entities/x",
                           params={"hops": 9, "fan_out": 100_000})
        assert graph.status_code == 400


def test_file_list_pages_with_cursor(keyless: LiveServer) -> None:
    with keyless.client() as client:
        ids = [client.post("/v1/files", files={"file": (f"f{i}.txt", b"text %d" % i)},
                           data={"purpose": "assistants"}).json()["id"] for i in range(5)]
        first = client.get("/v1/files", params={"limit": 2, "order": "asc"}).json()
        mine = [f["id"] for f in first["data"]]
        assert first["has_more"] is True and len(mine) == 2
        seen = list(mine)
        after = first["last_id"]
        while True:
            nxt = client.get("/v1/files", params={"limit": 2, "order": "asc",
                                                  "after": after}).json()
            seen += [f["id"] for f in nxt["data"]]
            if not nxt["has_more"]:
                break
            after = nxt["last_id"]
        assert [i for i in seen if i in ids] == ids
        newest = client.get("/v1/files", params={"limit": 1}).json()["data"][0]["id"]
        assert newest == ids[-1]


def test_chunk_template_format_spec_is_400(keyless: LiveServer) -> None:
    with keyless.client() as client:
        added = client.post("/api/knowledge-bases/allowed/documents/text?wait=10",
                            json={"text": "Annual leave is 25 days.", "source": "policy"})
        assert added.status_code in (200, 202), added.text
        fine = client.post("/v1/tool-runtime/rag-tool/query", json={
            "content": "annual leave", "vector_db_ids": ["allowed"], "query_config": {
                "chunk_template": "[{index}] {chunk.content} ({metadata[document_id]})"}})
        assert fine.status_code == 200, fine.text
        assert "(policy)" in str(fine.json()["content"])
        for template in ("{index:>2000000000}", "{metadata.values}", "{chunk.__class__}",
                         "{index!r}", "{0}"):
            refused = client.post("/v1/tool-runtime/rag-tool/query", json={
                "content": "q", "vector_db_ids": ["allowed"],
                "query_config": {"chunk_template": template + " {index} {chunk.content}"}})
            assert refused.status_code == 400, (template, refused.text)
            error = refused.json()["error"]
            assert error["param"] == "query_config.chunk_template"
            assert "chunk_template" in error["message"]


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip("RSS and socket buffers are measured on Linux")


def test_ready_and_health_need_no_key(served: tuple[int, str, Any]) -> None:
    port, _key, _process = served
    assert httpx.get(f"http://127.0.0.1:{port}/ready").status_code == 200
    assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200
    started = time.perf_counter()
    assert httpx.get(f"http://127.0.0.1:{port}/api/jobs").status_code == 401
    assert time.perf_counter() - started < 5


def test_server_table_of_ragloom_toml_and_flags(tmp_path: Path) -> None:
    from ragloom.cli.serve_cmd import edge_policy
    from ragloom.config import load_settings
    from ragloom.errors import ConfigurationError

    (tmp_path / "ragloom.toml").write_text(
        '[server]\nallowed_embedders = ["fake:hashing-32"]\nallowed_hosts = ["rag.lan"]\n'
        '[server.tenants.acme]\nallowed_llms = ["fake:other"]\n')
    settings = load_settings(env={}, cwd=tmp_path, user_config=tmp_path / "none.toml")
    policy = edge_policy(settings.server, ["fake:hashing-16"], [], [])
    assert policy["allowed_embedders"] == ("fake:hashing-32", "fake:hashing-16")
    assert policy["allowed_hosts"] == ("rag.lan",)
    assert policy["tenant_models"] == {"acme": ("fake:other",)}
    (tmp_path / "ragloom.toml").write_text('[server]\nallowed_embedder = ["x"]\n')
    with pytest.raises(ConfigurationError, match="allowed_embedder"):
        load_settings(env={}, cwd=tmp_path, user_config=tmp_path / "none.toml")


def test_edge_helpers() -> None:
    from ragloom.server.edge import host_name, is_upload_route, keyless_refusal, route_path

    assert route_path({"path": "/proxy/api/x", "root_path": "/proxy"}) == "/api/x"
    assert route_path({"path": "/api/x", "root_path": ""}) == "/api/x"
    assert [host_name(h) for h in ("LocalHost:80", "[::1]:9", "127.0.0.1", "[::1]")] == [
        "localhost", "[::1]", "127.0.0.1", "[::1]"]
    assert is_upload_route("POST", "/api/knowledge-bases/kb/documents")
    assert not is_upload_route("POST", "/api/knowledge-bases/kb/documents/text")
    assert is_upload_route("POST", "/v1/files") and not is_upload_route("GET", "/v1/files")
    local = {"host": "127.0.0.1:8321"}
    assert keyless_refusal("POST", local, frozenset()) is None
    assert keyless_refusal("POST", {**local, "origin": "http://127.0.0.1:8321"},
                           frozenset()) is None
    assert keyless_refusal("POST", {**local, "origin": "http://127.0.0.1:9999"}, frozenset())
    assert keyless_refusal("GET", {"host": "rag.lan"}, frozenset())
    assert keyless_refusal("GET", {"host": "rag.lan:80"}, frozenset({"rag.lan"})) is None


def test_document_list_is_bounded_and_read_with_limit(keyless: LiveServer) -> None:
    with keyless.client() as client:
        client.post("/api/knowledge-bases", json={"name": "many"})
        for i in range(3):
            job = client.post("/api/knowledge-bases/many/documents/text?wait=10",
                              json={"text": f"document number {i}", "source": f"s{i}"})
            assert job.status_code in (200, 202)
        listed = client.get("/api/knowledge-bases/many/documents", params={"limit": 2})
        assert [d["source"] for d in listed.json()["data"]] == ["s0", "s1"]
        assert client.get("/api/knowledge-bases/many/documents",
                          params={"limit": 5000}).status_code == 400

"""``/mcp`` over streamable HTTP: a real ``ragloom serve`` with API keys (401 without
a valid one, each tenant its own knowledge bases), the server in keyless mode and with
a rate limit, and ``ragloom mcp --transport http`` on its own."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("mcp.server.mcpserver")

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.mcp_server.conftest import (
    FAKE_EMBEDDER,
    FAKE_LLM,
    REPO,
    error_text,
    files,
    payload,
    run,
)
from tests.serving import free_port, start_ragloom_serve, wait_done

pytest.importorskip("fastapi")


def client(url: str, key: str | None = None) -> Client:
    """The SDK's client, sending ``Authorization: Bearer KEY`` when given a key."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers)))


async def _calls(mcp: Client, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async with mcp:
        return [await mcp.call_tool(name, args) for name, args in calls]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """A real ``ragloom serve`` with keys for alice and bob; alice has the knowledge base
    'secret' holding plan.txt."""
    from ragloom.server.auth import KeyStore
    from ragloom.server.db import ServerDatabase

    folder = tmp_path_factory.mktemp("serve")
    database = ServerDatabase(folder / "server.db")
    keys = {name: KeyStore(database).create_key(name).key for name in ("alice", "bob")}
    database.close()
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "src"), str(REPO)]))
    process = start_ragloom_serve(folder, port, folder / "serve.log", "--embedder",
                                  FAKE_EMBEDDER, "--llm", FAKE_LLM, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        alice = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {keys['alice']}"},
                             timeout=60)
        created = alice.post("/api/knowledge-bases", json={"name": "secret"})
        assert created.status_code == 201
        keys["secret_id"] = created.json()["id"]
        batch = alice.post("/api/knowledge-bases/secret/documents", files=[
            ("files", ("plan.txt", b"The launch is on Friday at the harbour.", "text/plain")),
            ("files", ("menu.txt", b"Lunch is soup and bread.", "text/plain"))]).json()
        assert wait_done(alice, f"/api/batches/{batch['id']}", 60)["status"] == "completed"
        yield url, keys
    finally:
        process.terminate()
        process.wait(15)


def test_serve_mcp_refuses_missing_and_invalid_keys(served: tuple[str, dict[str, str]]) -> None:
    url, _ = served
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, {"Authorization": "Bearer rlk_not-a-key"}, {"X-API-Key": "rlk_nope"},
                    {"Authorization": "Basic YWxpY2U6c2VjcmV0"}):
        response = httpx.post(f"{url}/mcp", json=body, headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["www-authenticate"].startswith("Bearer")
    with pytest.raises(Exception):  # noqa: B017 - the SDK's client cannot connect at all
        run(_calls, client(f"{url}/mcp"), [("list_knowledge_bases", {})])


def test_serve_mcp_is_tenant_scoped(served: tuple[str, dict[str, str]]) -> None:
    url, keys = served
    listed, found, answer = run(_calls, client(f"{url}/mcp", keys["alice"]), [
        ("list_knowledge_bases", {}),
        ("search", {"query": "when is the launch", "knowledge_base": "secret",
                    "mode": "keyword", "top_k": 1}),
        ("ask", {"question": "When is the launch?", "session": "planning"}),
    ])
    assert [b["name"] for b in payload(listed)["knowledge_bases"]] == ["secret"]
    assert files(payload(found)["passages"]) == ["plan.txt"]
    assert payload(answer)["citations"][0]["source"] == "plan.txt"
    sessions = httpx.get(f"{url}/api/sessions",
                         headers={"Authorization": f"Bearer {keys['alice']}"}).json()
    assert [s["title"] for s in sessions["data"]] == ["planning"]

    async def as_bob(mcp: Client) -> tuple[list[Any], str]:
        async with mcp:
            results = [await mcp.call_tool(name, args) for name, args in [
                ("list_knowledge_bases", {}),
                ("search", {"query": "launch", "knowledge_base": "secret"}),
                ("search", {"query": "launch", "knowledge_base": keys["secret_id"]}),
                ("ask", {"question": "When is the launch?"}),
            ]]
            resource = await mcp.read_resource("ragloom://knowledge-bases")
            return results, resource.contents[0].text

    (listed, by_name, by_id, asked), resource = run(as_bob, client(f"{url}/mcp", keys["bob"]))
    assert payload(listed)["knowledge_bases"] == []
    assert '"knowledge_bases": []' in resource
    for refused in (by_name, by_id, asked):
        assert "knowledge_base" in error_text(refused) and "Friday" not in error_text(refused)


def test_serve_mcp_has_no_write_tools(served: tuple[str, dict[str, str]]) -> None:
    url, keys = served

    async def names(mcp: Client) -> set[str]:
        async with mcp:
            return {t.name for t in (await mcp.list_tools()).tools}

    by_header = Client(streamable_http_client(f"{url}/mcp", http_client=httpx2.AsyncClient(
        headers={"X-API-Key": keys["alice"]})))  # the other header every route takes
    assert run(names, by_header) == {"search", "ask", "list_knowledge_bases"}


def test_keyless_server_serves_this_machine_and_keys_are_rate_limited(tmp_path: Path) -> None:
    from ragloom.server.auth import KeyStore
    from tests.server.conftest import start_server

    live = start_server(tmp_path / "kb" / "ragloom.db", rate_limit=60)
    try:
        for key in (None, "sk-anything"):  # keyless: any key is no key, as on /api
            listed = run(_calls, client(f"{live.url}/mcp", key), [("list_knowledge_bases", {})])
            assert payload(listed[0])["knowledge_bases"] == []  # the default tenant
        key = KeyStore(live.state.db).create_key("carol").key
        time.sleep(2.1)  # the server notices a first key within two seconds
        assert httpx.post(f"{live.url}/mcp", json={}).status_code == 401
        # The burst's own 429s are checked: a request after it may find a token
        # refilled when the machine is slow (60 a minute is one a second).
        responses = [httpx.post(f"{live.url}/mcp", json={},
                                headers={"Authorization": f"Bearer {key}"})
                     for _ in range(12)]
        statuses = [r.status_code for r in responses]
        assert 429 in statuses and 401 not in statuses
        limited = [r for r in responses if r.status_code == 429]
        assert all(int(r.headers["retry-after"]) >= 1 for r in limited)
    finally:
        live.stop()


def _wait_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "ragloom mcp --transport http exited"
        try:
            httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError("ragloom mcp --transport http did not start")


def test_ragloom_mcp_over_http(fake_db: Path) -> None:
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "src"), str(REPO)]))
    command = [sys.executable, "-m", "ragloom", "mcp", "--transport", "http", "--host",
               "127.0.0.1", "--port", str(port), "--db", str(fake_db), "--embedder",
               FAKE_EMBEDDER, "--llm", FAKE_LLM]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        _wait_port(port, process)
        found, bad = run(_calls, client(f"http://127.0.0.1:{port}/mcp"), [
            ("search", {"query": "unpaid lunch break", "mode": "keyword"}),
            ("search", {"query": "lunch", "mode": "fuzzy"}),
        ])
        assert files(payload(found)["passages"])[0] == "staff-handbook.md"
        assert "mode" in error_text(bad)
    finally:
        process.terminate()
        process.wait(15)


def test_ragloom_mcp_refuses_a_public_address(fake_db: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "ragloom", "mcp", "--transport", "http",
                             "--host", "0.0.0.0", "--db", str(fake_db)],
                            capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, COLUMNS="200"))
    assert result.returncode == 2
    assert "ragloom serve" in result.stderr and "0.0.0.0" in result.stderr


def test_the_documented_python_client_runs(served: tuple[str, dict[str, str]]) -> None:
    import re

    text = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S)
    assert code is not None, "docs/mcp.md lost its Python client"
    url, keys = served
    script = (code.group(1).replace("http://127.0.0.1:8321/mcp", f"{url}/mcp")
              .replace('"rlk_..."', repr(keys["alice"])))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "'name': 'secret'" in result.stdout

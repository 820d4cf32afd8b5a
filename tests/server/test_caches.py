"""The server's caches against a real server on 127.0.0.1: repeated searches are hits
(``/metrics`` counts them), writes through ``/api`` and ``/v1`` end them, tenants never
share them, the bounds hold; fallbacks are reported and logged, store failures logged
with the request id."""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragloom.server.caches import BoundedCache, CacheCounters, ServerCaches
from tests.server.conftest import LiveServer, start_server, wait_job


def metric(client: httpx.Client, name: str, cache: str) -> float:
    text = client.get("/metrics").text
    found = re.search(rf'^{name}{{cache="{cache}"}} ([0-9.e+]+)$', text, re.MULTILINE)
    assert found, f"{name} for {cache} not in /metrics"
    return float(found.group(1))


def add_text(client: httpx.Client, kb: str, text: str, source: str) -> None:
    job = client.post(f"/api/knowledge-bases/{kb}/documents/text",
                      json={"text": text, "source": source}).json()
    assert wait_job(client, job["id"])["status"] == "completed"


class Captured(logging.Handler):
    """Records of one logger, with the request id the server's log handler adds."""

    def __init__(self) -> None:
        super().__init__()
        from ragloom.server.observability import RequestIdFilter

        self.addFilter(RequestIdFilter())
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def captured() -> Iterator[Captured]:
    handler = Captured()
    logger = logging.getLogger("ragloom")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


# ------------------------------------------------------------------------ unit
def test_bounded_cache_keeps_each_tenant_within_its_entries_and_all_within_bytes() -> None:
    from ragloom.server.caches import _MISSING

    counters = CacheCounters()
    cache = BoundedCache("search", max_entries=3, max_bytes=1000, counters=counters)
    for n in range(5):
        cache.put("a", ("a", n), n, 10)
    assert cache.tenant_entries("a") == 3 and counters.evictions == 2
    assert cache.get(("a", 0)) is _MISSING and counters.misses == 1  # its oldest went
    assert cache.get(("a", 4)) == 4 and counters.hits == 1
    for n in range(1, 5):  # tenant b's fourth entry pushes out b's oldest, not a's
        cache.put("b", ("b", n), n, 240)
    assert cache.tenant_entries("a") == 3 and cache.tenant_entries("b") == 3
    assert cache.get(("b", 1)) is _MISSING and counters.evictions == 3
    cache.put("c", ("c", 0), 0, 240)
    assert cache.bytes == 30 + 3 * 240 + 240 <= 1000
    cache.put("c", ("c", 1), 1, 240)  # over 1000 bytes: the least recently used go
    assert cache.bytes == 960 and counters.evictions == 7
    assert cache.tenant_entries("a") == 0 and cache.get(("b", 2)) is _MISSING
    assert cache.get(("b", 3)) == 3 and cache.get(("c", 1)) == 1
    cache.put("c", ("c", 2), 2, 300)  # over a quarter of the bytes: not kept
    assert cache.get(("c", 2)) is _MISSING and len(cache) == 4


def test_generations_make_old_keys_unreachable() -> None:
    caches = ServerCaches(10)

    class Store:
        name = "kb_1"
        path = "/tmp/x.db"

    store = Store()
    before = caches.search_key("t", "k", [store], "q")
    assert before == caches.search_key("t", "k", [store], "q")
    caches.changed(store)
    assert before != caches.search_key("t", "k", [store], "q")
    assert ServerCaches(0).search_key("t", "k", [store], "q") is None  # off
    assert caches.search_key("t", "k", [object()], "q") is None  # no stable name


# ------------------------------------------------------------------------ live
@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    from ragloom.server.auth import KeyStore
    from ragloom.server.db import ServerDatabase

    db_path = tmp_path_factory.mktemp("caches") / "ragloom.db"
    database = ServerDatabase(db_path.parent / "server.db")
    keys = {name: KeyStore(database).create_key(name).key for name in ("alice", "bob")}
    database.close()
    server = start_server(db_path, cache_entries=8)
    yield server, keys
    server.stop()


def test_a_repeated_search_is_a_hit_and_an_upload_ends_it(
        keyed: tuple[LiveServer, dict[str, str]]) -> None:
    server, keys = keyed
    alice = server.client(keys["alice"])
    assert alice.post("/api/knowledge-bases", json={"name": "notes"}).status_code == 201
    add_text(alice, "notes", "The lunch break lasts one hour.", "lunch.md")
    body = {"query": "how long is the lunch break", "knowledge_bases": ["notes"]}
    hits = metric(alice, "ragloom_cache_hits_total", "search")
    misses = metric(alice, "ragloom_cache_misses_total", "search")
    first = alice.post("/api/search", json=body)
    second = alice.post("/api/search", json=body)
    assert first.status_code == 200 and second.content == first.content
    assert metric(alice, "ragloom_cache_hits_total", "search") == hits + 1
    assert metric(alice, "ragloom_cache_misses_total", "search") == misses + 1
    assert [m["source"] for m in first.json()["matches"]] == ["lunch.md"]

    add_text(alice, "notes", "The lunch break starts at noon; lunch is served hot.",
             "noon.md")
    third = alice.post("/api/search", json=body)
    assert metric(alice, "ragloom_cache_misses_total", "search") == misses + 2
    assert "noon.md" in [m["source"] for m in third.json()["matches"]]
    # A delete ends it too.
    documents = alice.get("/api/knowledge-bases/notes/documents").json()["data"]
    noon = next(d["id"] for d in documents if d["source"] == "noon.md")
    assert alice.delete(f"/api/knowledge-bases/notes/documents/{noon}").status_code == 200
    fourth = alice.post("/api/search", json=body).json()
    assert "noon.md" not in [m["source"] for m in fourth["matches"]]


def test_ask_retrieves_from_the_cache_when_nothing_changed(
        keyed: tuple[LiveServer, dict[str, str]]) -> None:
    server, keys = keyed
    alice = server.client(keys["alice"])
    body = {"question": "How long does the lunch break last?", "knowledge_bases": ["notes"]}
    hits = metric(alice, "ragloom_cache_hits_total", "search")
    first, second = (alice.post("/api/ask", json=body).json() for _ in range(2))
    assert first["sources"] == second["sources"] and first["sources"]
    assert metric(alice, "ragloom_cache_hits_total", "search") == hits + 1


def test_tenants_never_share_a_cached_search(keyed: tuple[LiveServer, dict[str, str]]) -> None:
    server, keys = keyed
    alice, bob = server.client(keys["alice"]), server.client(keys["bob"])
    for client, text in ((alice, "Alice's plan: the launch is on Friday."),
                         (bob, "Bob's plan: the launch is on Monday.")):
        assert client.post("/api/knowledge-bases", json={"name": "plans"}).status_code == 201
        add_text(client, "plans", text, "plan.md")
    body = {"query": "when is the launch", "knowledge_bases": ["plans"]}
    assert "Friday" in alice.post("/api/search", json=body).json()["matches"][0]["text"]
    hits = metric(bob, "ragloom_cache_hits_total", "search")
    for _ in range(2):
        found = bob.post("/api/search", json=body).json()["matches"]
        assert "Monday" in found[0]["text"] and "Friday" not in str(found)
    assert metric(bob, "ragloom_cache_hits_total", "search") == hits + 1  # bob's own


def test_the_cache_stays_within_its_bound(keyed: tuple[LiveServer, dict[str, str]]) -> None:
    server, keys = keyed
    bob = server.client(keys["bob"])
    evicted = metric(bob, "ragloom_cache_evictions_total", "search")
    for n in range(30):
        response = bob.post("/api/search", json={"query": f"launch day {n}",
                                                 "knowledge_bases": ["plans"]})
        assert response.status_code == 200
    assert server.state.caches.search.tenant_entries(_tenant_id(server, "bob")) <= 8
    assert metric(bob, "ragloom_cache_entries", "search") <= 8 * 2  # two tenants
    assert metric(bob, "ragloom_cache_evictions_total", "search") >= evicted + 22
    assert metric(bob, "ragloom_cache_entries", "embeddings") <= 8 * 2


def _tenant_id(server: LiveServer, name: str) -> str:
    row = server.state.db.one("SELECT id FROM tenants WHERE name = ?", (name,))
    return str(row[0])


def test_v1_search_is_cached_and_a_new_file_ends_it(
        keyed: tuple[LiveServer, dict[str, str]]) -> None:
    openai = pytest.importorskip("openai")
    server, keys = keyed
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=keys["alice"])
    first = client.files.create(file=("krill.txt", b"Krill feed on phytoplankton."),
                                purpose="assistants")
    store = client.vector_stores.create(name="ocean", file_ids=[first.id])
    _wait_files(server, keys["alice"], store.id)
    hits = metric(server.client(), "ragloom_cache_hits_total", "search")
    one = client.vector_stores.search(store.id, query="what do krill feed on")
    two = client.vector_stores.search(store.id, query="what do krill feed on")
    assert [r.filename for r in one.data] == [r.filename for r in two.data] == ["krill.txt"]
    assert getattr(one, "degraded", None) is False and getattr(one, "notice", None) == ""
    assert metric(server.client(), "ragloom_cache_hits_total", "search") == hits + 1
    second = client.files.create(file=("whales.txt", b"Whales feed on krill they filter."),
                                 purpose="assistants")
    client.vector_stores.files.create(store.id, file_id=second.id)
    _wait_files(server, keys["alice"], store.id)
    three = client.vector_stores.search(store.id, query="what do krill feed on")
    assert "whales.txt" in [r.filename for r in three.data]
    client.vector_stores.files.delete(second.id, vector_store_id=store.id)
    four = client.vector_stores.search(store.id, query="what do krill feed on")
    assert "whales.txt" not in [r.filename for r in four.data]


def _wait_files(server: LiveServer, key: str, vs_id: str) -> None:
    import time

    client = server.client(key)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        counts = client.get(f"/v1/vector_stores/{vs_id}").json()["file_counts"]
        if counts["in_progress"] == 0:
            assert counts["failed"] == 0
            return
        time.sleep(0.05)
    raise AssertionError("the vector store's files were not ingested in time")


def test_vector_io_insert_ends_a_cached_query(keyed: tuple[LiveServer, dict[str, str]]) -> None:
    server, keys = keyed
    alice = server.client(keys["alice"])
    query = {"vector_db_id": "facts", "query": "capital of France",
             "params": {"mode": "keyword"}}
    insert = {"vector_db_id": "facts", "chunks": [
        {"content": "Berlin is the capital of Germany.", "metadata": {"document_id": "de"}}]}
    assert alice.post("/v1/vector-io/insert", json=insert).status_code == 200
    before = alice.post("/v1/vector-io/query", json=query).json()
    assert alice.post("/v1/vector-io/query", json=query).json() == before
    insert["chunks"] = [{"content": "Paris is the capital of France.",
                         "metadata": {"document_id": "fr"}}]
    assert alice.post("/v1/vector-io/insert", json=insert).status_code == 200
    after = alice.post("/v1/vector-io/query", json=query).json()
    assert any("Paris" in c["content"] for c in after["chunks"])
    assert after["degraded"] is False


# ------------------------------------------------------------ fallbacks, failures
@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("failing") / "ragloom.db"
    server = start_server(db, embedder="fake:failing-query-64")
    yield server
    server.stop()


def test_an_embedder_failure_gives_degraded_keyword_results_and_a_log_line(
        failing: LiveServer, captured: Captured) -> None:
    client = failing.client()
    assert client.post("/api/knowledge-bases", json={"name": "kb"}).status_code == 201
    add_text(client, "kb", "Penguins live in the southern hemisphere.", "penguins.md")
    add_text(client, "kb", "Camels cross deserts.", "camels.md")
    body = {"query": "where do penguins live", "knowledge_bases": ["kb"], "mode": "hybrid"}
    for _ in range(2):  # not cached: the embedder may come back
        found = client.post("/api/search", json=body, headers={"X-Request-ID": "fallback-1"})
        assert found.status_code == 200
        result = found.json()
        assert result["degraded"] is True and "keyword" in result["notice"]
        assert result["matches"][0]["source"] == "penguins.md"
    lines = [r for r in captured.records if "fell back to keyword" in r.getMessage()]
    assert lines and lines[0].levelno == logging.WARNING
    assert getattr(lines[0], "request_id", None) == "fallback-1"

    upload = client.post("/v1/files", files={"file": ("p.txt", b"Penguins swim fast.")},
                         data={"purpose": "assistants"}).json()
    store = client.post("/v1/vector_stores", json={"file_ids": [upload["id"]]}).json()
    _wait_files(failing, "", store["id"])
    for mode in ("vector", "hybrid"):
        page = client.post(f"/v1/vector_stores/{store['id']}/search",
                           json={"query": "penguins swim", "search_mode": mode}).json()
        assert page["degraded"] is True and "keyword" in page["notice"], mode
        assert page["data"][0]["filename"] == "p.txt"


def test_a_store_failure_is_logged_with_the_request_id(
        keyed: tuple[LiveServer, dict[str, str]], captured: Captured,
        monkeypatch: pytest.MonkeyPatch) -> None:
    server, keys = keyed
    alice = server.client(keys["alice"])

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error at /secret/path.db")

    tenant = _tenant_id(server, "alice")
    from ragloom.server.auth import Tenant

    record = server.state.catalog.get(Tenant(id=tenant, name="alice"), "notes")
    store = server.state.catalog.open(record).store
    monkeypatch.setattr(store, "keyword_query", broken)
    response = alice.post("/api/search", json={"query": "a query never cached",
                                               "knowledge_bases": ["notes"], "mode": "keyword"},
                          headers={"X-Request-ID": "store-fail-7"})
    assert response.status_code == 500
    error = response.json()["error"]
    assert error["code"] == "store_error" and "secret" not in error["message"]
    lines = [r for r in captured.records if r.name == "ragloom.server.search"]
    assert lines and "store-fail-7" in lines[0].getMessage()
    assert getattr(lines[0], "request_id", None) == "store-fail-7"
    assert lines[0].levelno == logging.ERROR

    # The same on /v1 (Vector IO over the knowledge base the insert test made).
    facts = server.state.catalog.get(Tenant(id=tenant, name="alice"), "facts")
    monkeypatch.setattr(server.state.catalog.open(facts).store, "keyword_query", broken)
    response = alice.post("/v1/vector-io/query", json={
        "vector_db_id": "facts", "query": "never asked before", "params": {"mode": "keyword"}},
        headers={"X-Request-ID": "store-fail-8"})
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "store_error"
    assert "secret" not in response.text
    assert any("store-fail-8" in r.getMessage() and r.levelno == logging.ERROR
               for r in captured.records if r.name == "ragloom.server.search")


def test_cache_settings_from_flags_and_toml(tmp_path: Path) -> None:
    from ragloom.cli.serve_cmd import cache_settings
    from ragloom.errors import ConfigurationError

    assert cache_settings({}, None, None) == {"cache_entries": 1000,
                                              "cache_bytes": 64 * 1024 * 1024}
    assert cache_settings({"cache_entries": 5, "cache_mb": 1}, None, None) == {
        "cache_entries": 5, "cache_bytes": 1024 * 1024}
    assert cache_settings({"cache_entries": 5}, 0, 2.0)["cache_entries"] == 0
    with pytest.raises(ConfigurationError, match="cache_entries"):
        cache_settings({"cache_entries": "many"}, None, None)


def test_ragloom_serve_takes_cache_entries(tmp_path: Path) -> None:
    from tests.serving import free_port, start_ragloom_serve

    port = free_port()
    log = tmp_path / "serve.log"
    process = start_ragloom_serve(tmp_path / "db", port, log, "--embedder", "fake:hashing-64",
                                  "--llm", "fake:echo", "--cache-entries", "0")
    try:
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
        assert client.post("/api/knowledge-bases", json={"name": "kb"}).status_code == 201
        add_text(client, "kb", "Otters hold hands while they sleep.", "otters.md")
        body = {"query": "otters sleep", "knowledge_bases": ["kb"]}
        first = client.post("/api/search", json=body, headers={"X-Request-ID": "cli-1"})
        assert client.post("/api/search", json=body).content == first.content
        assert first.json()["matches"][0]["source"] == "otters.md"
        for cache in ("search", "embeddings"):  # off: nothing kept, nothing counted
            assert metric(client, "ragloom_cache_hits_total", cache) == 0
            assert metric(client, "ragloom_cache_entries", cache) == 0
    finally:
        process.terminate()
        process.wait(15)

"""Handles with a lifecycle and deletes that stay deleted, against a real server on
127.0.0.1 (uvicorn in this process, so psutil counts the server's file descriptors).

Findings of the review, each with its test:

* a knowledge base deleted while it ingests came back (the next write recreated it),
  with its uploads and HNSW sidecar left on disk ->
  ``test_a_knowledge_base_deleted_while_it_ingests_stays_deleted``;
* every knowledge base and vector store kept its handle, without bound, also after
  its delete -> ``test_150_knowledge_bases_and_150_vector_stores_stay_under_the_limit``
  and ``test_create_delete_cycles_keep_descriptors_and_memory_flat``;
* a store file's attributes updated while ``in_progress`` showed in ``files.list`` but
  search filtered on the old ones ->
  ``test_an_attribute_update_while_in_progress_is_what_search_filters_on``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragloom.stores.ann import sidecar_path
from ragloom.stores.sqlite import SqliteVectorStore
from tests.server.conftest import LiveServer, start_server, wait_job

psutil = pytest.importorskip("psutil")
openai = pytest.importorskip("openai")

LIMIT = 24


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = start_server(tmp_path_factory.mktemp("handles") / "kb" / "ragloom.db",
                          max_open_collections=LIMIT, rate_limit=0)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def delay(live: LiveServer) -> list[float]:
    """Seconds each embedding call of the server sleeps (0 unless a test sets it): a
    slow embedder keeps an ingestion in progress long enough to act during it."""
    embedder = live.state.models.embedder()
    original = embedder.embed_documents
    pause = [0.0]

    def slow(texts: Any) -> Any:
        time.sleep(pause[0])
        return original(texts)

    embedder.embed_documents = slow
    return pause


@pytest.fixture(scope="module")
def client(live: LiveServer) -> Iterator[httpx.Client]:
    with live.client() as http:
        yield http


@pytest.fixture(scope="module")
def oai(live: LiveServer) -> Any:
    return openai.OpenAI(base_url=f"{live.url}/v1", api_key="unused", max_retries=0)


def _fds() -> int:
    return int(psutil.Process().num_fds())


def _collections(live: LiveServer) -> set[str]:
    store = SqliteVectorStore(live.state.settings.db)
    try:
        return {c.name for c in store.list_collections()}
    finally:
        store.close()


def test_a_knowledge_base_deleted_while_it_ingests_stays_deleted(
        live: LiveServer, client: httpx.Client, delay: list[float]) -> None:
    kb = client.post("/api/knowledge-bases", json={"name": "doomed"}).json()
    kb_id = kb["id"]
    files = [("files", (f"part{n}.txt", f"Paragraph {n} about lighthouses.\n" * 40,
                        "text/plain")) for n in range(12)]
    settings = live.state.settings
    # A sidecar left by an earlier run of the collection (HNSW index and its labels).
    sidecar = sidecar_path(str(settings.db), kb_id)
    assert sidecar is not None
    sidecar.write_bytes(b"index")
    Path(f"{sidecar}.labels.json").write_text("[]")
    delay[0] = 0.3
    try:
        batch = client.post(f"/api/knowledge-bases/{kb_id}/documents", files=files).json()
        deadline = time.monotonic() + 20
        while live.state.worker.current_kb != kb_id and time.monotonic() < deadline:
            time.sleep(0.01)
        assert live.state.worker.current_kb == kb_id, "the ingestion never started"
        assert client.delete(f"/api/knowledge-bases/{kb_id}").status_code == 200
    finally:
        delay[0] = 0.0
    time.sleep(1.0)  # the worker had every chance to write again
    assert client.get(f"/api/knowledge-bases/{kb_id}").status_code == 404
    assert kb_id not in _collections(live)
    assert not list(settings.db.parent.glob(f"*{kb_id}*"))  # no sidecar, no labels
    jobs = [wait_job(client, job["id"]) for job in batch["jobs"]]
    assert {job["status"] for job in jobs} <= {"cancelled", "failed"}
    assert "completed" not in {job["status"] for job in jobs}
    uploads = settings.files_dir
    assert not [job for job in jobs if (uploads / job["id"]).exists()]
    # A new knowledge base still ingests normally.
    fresh = client.post("/api/knowledge-bases", json={"name": "fresh"}).json()
    job = client.post(f"/api/knowledge-bases/{fresh['id']}/documents/text?wait=10",
                      json={"text": "Fresh text about harbours.", "source": "a"}).json()
    assert job["status"] == "completed"


def _kb_with_text(client: httpx.Client, name: str) -> str:
    kb_id: str = client.post("/api/knowledge-bases", json={"name": name}).json()["id"]
    job = client.post(f"/api/knowledge-bases/{kb_id}/documents/text?wait=10",
                      json={"text": f"{name} keeps notes about ships.", "source": name}).json()
    assert job["status"] == "completed", job
    return kb_id


def _vs_with_file(oai: Any, name: str) -> str:
    store = oai.vector_stores.create(name=name)
    file = oai.files.create(file=(f"{name}.txt", f"{name} keeps notes about ships.".encode()),
                            purpose="assistants")
    done = oai.vector_stores.files.create_and_poll(vector_store_id=store.id, file_id=file.id,
                                                   poll_interval_ms=20)
    assert done.status == "completed", done.last_error
    return str(store.id)


def _search_all(client: httpx.Client, oai: Any, kbs: list[str], stores: list[str]) -> None:
    for kb_id in kbs:
        hits = client.post("/api/search", json={"query": "ships", "knowledge_bases": [kb_id],
                                                "mode": "keyword"}).json()
        assert hits["matches"], (kb_id, hits)
    for vs_id in stores:
        assert oai.vector_stores.search(vs_id, query="ships").data, vs_id


def test_150_knowledge_bases_and_150_vector_stores_stay_under_the_limit(
        live: LiveServer, client: httpx.Client, oai: Any) -> None:
    handles = live.state.catalog.handles
    # Warm up first: the pools' threads open their own connections to the server's
    # tables (bounded by the pool sizes, not by the collections), clients connect.
    for n in range(3):
        kb_id, vs_id = _kb_with_text(client, f"warm-{n}"), _vs_with_file(oai, f"warm-{n}")
        _search_all(client, oai, [kb_id], [vs_id])
        client.delete(f"/api/knowledge-bases/{kb_id}")
        oai.vector_stores.delete(vs_id)
    start = _fds()
    kbs = [_kb_with_text(client, f"many-{n}") for n in range(150)]
    stores = [_vs_with_file(oai, f"store-{n}") for n in range(150)]
    _search_all(client, oai, kbs, stores)
    assert len(handles) <= LIMIT
    assert handles.evictions >= 300 - LIMIT
    _search_all(client, oai, kbs[:3], stores[:3])  # closed ones reopen on use
    for kb_id in kbs:
        assert client.delete(f"/api/knowledge-bases/{kb_id}").status_code == 200
    for vs_id in stores:
        assert oai.vector_stores.delete(vs_id).deleted
    assert _fds() <= start + 20, (start, _fds())
    assert not [key for key in handles.names()
                if key in kbs or key.removeprefix("vs:") in stores]


def test_create_delete_cycles_keep_descriptors_and_memory_flat(
        live: LiveServer, client: httpx.Client, oai: Any) -> None:
    def cycle(n: int) -> None:
        kb_id = _kb_with_text(client, f"cycle-{n}")
        vs_id = _vs_with_file(oai, f"cycle-{n}")
        _search_all(client, oai, [kb_id], [vs_id])
        assert client.delete(f"/api/knowledge-bases/{kb_id}").status_code == 200
        assert oai.vector_stores.delete(vs_id).deleted

    for n in range(5):  # warm up: first-use allocations, caches, connections
        cycle(n)
    fds, rss = _fds(), psutil.Process().memory_info().rss
    for n in range(5, 35):
        cycle(n)
    assert _fds() <= fds + 5
    assert psutil.Process().memory_info().rss - rss < 40 * 1024 * 1024


def test_an_attribute_update_while_in_progress_is_what_search_filters_on(
        oai: Any, delay: list[float]) -> None:
    store = oai.vector_stores.create(name="attributes")
    file = oai.files.create(file=("notes.txt", b"Notes about the lighthouse keeper."),
                            purpose="assistants")
    delay[0] = 1.0
    try:
        first = oai.vector_stores.files.create(vector_store_id=store.id, file_id=file.id,
                                               attributes={"version": 1})
        assert first.status == "in_progress"
        updated = oai.vector_stores.files.update(file_id=file.id, vector_store_id=store.id,
                                                 attributes={"version": 2})
        assert updated.attributes == {"version": 2}
    finally:
        delay[0] = 0.0
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        listed = oai.vector_stores.files.list(vector_store_id=store.id).data
        if listed and listed[0].status != "in_progress":
            break
        time.sleep(0.05)
    assert listed[0].status == "completed"
    assert listed[0].attributes == {"version": 2}

    def found(version: int) -> int:
        return len(oai.vector_stores.search(
            store.id, query="lighthouse keeper",
            filters={"type": "eq", "key": "version", "value": version}).data)

    assert found(2) == 1
    assert found(1) == 0

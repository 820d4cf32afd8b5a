"""Deletes are jobs of the one job system, and an insert's deadline cuts into a batch.

Findings, each with its test:

* a delete dropped the chunks, sidecar files and uploads in the request itself: a
  kill after the record went but before the cleanup left them behind with nothing to
  finish it -> ``test_a_knowledge_base_delete_left_unfinished_is_finished_by_the_next_start``,
  ``test_a_vector_store_delete_left_unfinished_is_finished_by_the_next_start`` and
  ``test_file_deletes_left_unfinished_are_finished_by_the_next_start``;
* a delete job must not wait for other tenants' turns ->
  ``test_a_delete_job_is_claimed_before_any_tenants_turn``;
* an insert's deadline was looked at only between batches of 256 chunks, so a slow
  embedder ran a whole batch past it, and the stop could split a document ->
  ``test_an_insert_past_its_deadline_stops_within_a_sub_batch_and_splits_no_document``.
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from ragloom.server.db import ServerDatabase
from ragloom.server.jobs import Job, JobControl, JobQueue, Outcome
from ragloom.stores.ann import sidecar_path
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.types import Embedding
from tests.server.conftest import LiveServer, start_server
from tests.server.openai_support import make_app, serve


def _wait(check: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _collections(path: Path | str) -> set[str]:
    store = SqliteVectorStore(path)
    try:
        return {c.name for c in store.list_collections()}
    finally:
        store.close()


def _jobs(live: LiveServer, kind: str) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in live.state.db.all(
        "SELECT kb_id, status FROM jobs WHERE kind = ? ORDER BY created", (kind,))]


def test_a_knowledge_base_delete_left_unfinished_is_finished_by_the_next_start(
        tmp_path: Path) -> None:
    db = tmp_path / "kb" / "ragloom.db"
    live = start_server(db, delete_wait=0.3)
    settings = live.state.settings
    try:
        with live.client() as http:
            kb_id = http.post("/api/knowledge-bases", json={"name": "doomed"}).json()["id"]
            job = http.post(f"/api/knowledge-bases/{kb_id}/documents/text?wait=10",
                            json={"text": "Lighthouses guide ships.", "source": "a"}).json()
            assert job["status"] == "completed"
            sidecar = sidecar_path(str(settings.db), kb_id)
            assert sidecar is not None
            sidecar.write_bytes(b"index")
            live.state.worker.stop()  # the worker runs nothing from here on
            upload = http.post(f"/api/knowledge-bases/{kb_id}/documents",
                               files=[("files", ("b.txt", b"Harbours.", "text/plain"))]).json()
            waiting = settings.files_dir / upload["jobs"][0]["id"]
            assert waiting.exists()
            answer = http.delete(f"/api/knowledge-bases/{kb_id}")
            assert answer.status_code == 200
            assert answer.json() == {"id": kb_id, "object": "knowledge_base.deleted",
                                     "deleted": True}
            assert http.get(f"/api/knowledge-bases/{kb_id}").status_code == 404
            assert kb_id not in {kb["id"] for kb in http.get("/api/knowledge-bases").json()[
                "data"]}
        # The record is gone at once; the cleanup is a job the worker never ran.
        assert _jobs(live, "kb_delete") == [(kb_id, "in_progress")]
    finally:
        live.stop()
    again = start_server(db)
    try:
        _wait(lambda: _jobs(again, "kb_delete") == [(kb_id, "completed")])
        assert kb_id not in _collections(settings.db)
        assert not list(settings.db.parent.glob(f"*{kb_id}*"))  # no sidecar
        assert not waiting.exists()  # no upload
        with again.client() as http:
            hits = http.post("/api/search", json={"query": "lighthouses ships",
                                                  "mode": "keyword"}).json()
            assert not hits.get("matches")
    finally:
        again.stop()


def _vector_store(client: openai.OpenAI, text: bytes) -> tuple[str, str]:
    vs = client.vector_stores.create(name="docs")
    fid = client.files.create(file=("a.txt", text), purpose="assistants").id
    done = client.vector_stores.files.create_and_poll(vector_store_id=vs.id, file_id=fid,
                                                      poll_interval_ms=20)
    assert done.status == "completed"
    return vs.id, fid


def _sources(vectors: Path, vs_id: str) -> list[str]:
    if f"vs:{vs_id}" not in _collections(vectors):
        return []
    store = SqliteVectorStore(vectors, collection=f"vs:{vs_id}")
    try:
        return sorted(d.source for d in store.list_documents())
    finally:
        store.close()


def test_a_vector_store_delete_left_unfinished_is_finished_by_the_next_start(
        tmp_path: Path) -> None:
    db = tmp_path / "kb" / "ragloom.db"
    vectors = db.parent / "openai-vectors.sqlite"
    live = start_server(db, delete_wait=0.3)
    try:
        key = live.state.keys.create_key("alice").key
        client = openai.OpenAI(base_url=f"{live.url}/v1", api_key=key, max_retries=0)
        vs_id, _ = _vector_store(client, b"Walruses sleep on ice floes.")
        live.state.worker.stop()
        with live.client(key) as http:
            answer = http.delete(f"/v1/vector_stores/{vs_id}")
        assert answer.status_code == 200
        assert answer.json() == {"id": vs_id, "object": "vector_store.deleted",
                                 "deleted": True}
        with pytest.raises(openai.NotFoundError):
            client.vector_stores.retrieve(vs_id)
        assert vs_id not in {vs.id for vs in client.vector_stores.list()}
        assert _jobs(live, "vs_delete") == [(vs_id, "in_progress")]
        assert f"vs:{vs_id}" in _collections(vectors)  # the cleanup waits for a worker
    finally:
        live.stop()
    again = start_server(db)
    try:
        _wait(lambda: _jobs(again, "vs_delete") == [(vs_id, "completed")])
        assert f"vs:{vs_id}" not in _collections(vectors)
        # Stores never create a dropped collection again: an insert into it is a 404.
        with again.client(key) as http:
            insert = http.post("/v1/vector-io/insert", json={
                "vector_store_id": vs_id, "chunks": [{"content": "Seals eat fish.",
                                                      "metadata": {"document_id": "d"}}]})
            assert insert.status_code == 404, insert.text
        assert f"vs:{vs_id}" not in _collections(vectors)
    finally:
        again.stop()


def test_file_deletes_left_unfinished_are_finished_by_the_next_start(tmp_path: Path) -> None:
    db = tmp_path / "kb" / "ragloom.db"
    vectors = db.parent / "openai-vectors.sqlite"
    live = start_server(db, delete_wait=0.3)
    try:
        key = live.state.keys.create_key("alice").key
        client = openai.OpenAI(base_url=f"{live.url}/v1", api_key=key, max_retries=0)
        one, detached = _vector_store(client, b"Walruses sleep on ice floes.")
        two, deleted = _vector_store(client, b"Narwhals have one long tusk.")
        live.state.worker.stop()
        gone = client.vector_stores.files.delete(file_id=detached, vector_store_id=one)
        assert gone.deleted and gone.id == detached
        assert client.files.delete(deleted).deleted
        assert client.vector_stores.retrieve(one).file_counts.total == 0
        assert client.vector_stores.retrieve(two).file_counts.total == 0
        assert sorted(_jobs(live, "file_delete")) == sorted(
            [(one, "in_progress"), (two, "in_progress")])
        assert _sources(vectors, one) == [detached]  # the cleanup waits for a worker
    finally:
        live.stop()
    again = start_server(db)
    try:
        _wait(lambda: {s for _, s in _jobs(again, "file_delete")} == {"completed"})
        assert _sources(vectors, one) == [] and _sources(vectors, two) == []
        # The stores themselves stay, empty and usable.
        client = openai.OpenAI(base_url=f"{again.url}/v1", api_key=key, max_retries=0)
        assert not client.vector_stores.search(one, query="walruses ice").data
    finally:
        again.stop()


class _Quick:
    kinds: tuple[str, ...] = ("slow", "kb_delete")
    group_size = 1

    def __init__(self) -> None:
        self.ran: list[str] = []

    def run(self, jobs: Sequence[Job], control: JobControl) -> list[Outcome]:
        self.ran.extend(job.kind for job in jobs)
        return [(job, "completed", None, None, {}) for job in jobs]

    def failed(self, jobs: Sequence[Job], message: str) -> None:
        pass


def test_a_delete_job_is_claimed_before_any_tenants_turn(tmp_path: Path) -> None:
    database = ServerDatabase(tmp_path / "server.db")
    queue = JobQueue(database, tmp_path / "files")
    try:
        for tenant in ("alice", "bob", "carol"):
            queue.submit_work(tenant, f"kb_{tenant}", "slow", [{}] * 3)
        queue.submit_work("zed", "kb_zed", "kb_delete", [{"source": "kb_zed"}])
        first = queue.next_group(8, kinds=["slow", "kb_delete"])
        assert [job.kind for job in first] == ["kb_delete"]
        # The turns between tenants go on where they were.
        assert queue.next_group(8, kinds=["slow", "kb_delete"])[0].tenant_id == "alice"
    finally:
        database.close()


class _PerTextSlow(HashingEmbedder):
    """An embedder that takes ``seconds`` per text (a batch of 256: several seconds)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(64)
        self.seconds = seconds
        self.embedded = 0

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        time.sleep(self.seconds * len(texts))
        self.embedded += len(texts)
        return super().embed_documents(texts)


def test_an_insert_past_its_deadline_stops_within_a_sub_batch_and_splits_no_document(
        tmp_path: Path) -> None:
    slow = _PerTextSlow(0.02)
    app = make_app(tmp_path, slow, None, insert_deadline=0.3)
    # 100 documents of 3 chunks each: a batch of 64 takes 1.3 s, one of 256 takes 5 s.
    chunks = [{"content": f"Document {n // 3} fact {n % 3}.",
               "metadata": {"document_id": f"d{n // 3}"}} for n in range(300)]
    with serve(app) as url, httpx.Client(base_url=url, timeout=60,
                                         headers={"Authorization": "Bearer key-a"}) as http:
        answer = http.post("/v1/vector-io/insert", json={"vector_db_id": "kb1",
                                                         "chunks": chunks})
        assert answer.status_code == 504, answer.text
        assert answer.json()["error"]["code"] == "deadline_exceeded"
    # Checked between whole batches, the deadline let a batch of 64 (or 256) texts be
    # embedded first; checked between sub-batches of about 0.25 s it stops well before
    # (a count, not a time: the test holds on a loaded machine).
    assert 0 < slow.embedded < 64, f"{slow.embedded} texts embedded past the deadline"
    with sqlite3.connect(tmp_path / "kbs.sqlite") as conn:
        rows = conn.execute("SELECT document_id FROM chunks").fetchall()
    per_document = Counter(row[0] for row in rows)
    assert all(count == 3 for count in per_document.values()), per_document


def test_uploads_a_kill_left_without_a_running_job_are_removed_at_the_next_start(
        tmp_path: Path) -> None:
    # Found by the crash suite (kind kb_delete): a kill after an upload's files were
    # written but before its jobs were committed left their folders in server-files
    # for good (no job owns them), as did a kill between a job's end and the removal
    # of its folder. The next start removes every job folder no running job owns.
    db = tmp_path / "kb" / "ragloom.db"
    live = start_server(db)
    settings = live.state.settings
    try:
        with live.client() as http:
            kb_id = http.post("/api/knowledge-bases", json={"name": "kb"}).json()["id"]
            live.state.worker.stop()  # this upload stays pending
            upload = http.post(f"/api/knowledge-bases/{kb_id}/documents",
                               files=[("files", ("a.txt", b"Harbours.", "text/plain"))]).json()
    finally:
        live.stop()
    pending = settings.files_dir / upload["jobs"][0]["id"]
    assert pending.exists()
    stray = settings.files_dir / "job_0123456789abcdef01234567"  # no job row
    stray.mkdir(parents=True)
    (stray / "b.txt").write_bytes(b"cut")
    other = settings.files_dir / "notes"  # not a job's folder: left alone
    other.mkdir()
    again = start_server(db)
    try:
        assert not stray.exists()
        assert other.exists()
        with again.client() as http:
            job = http.get(f"/api/jobs/{upload['jobs'][0]['id']}").json()
        _wait(lambda: not pending.exists())  # its job ran, then removed it
        assert job["status"] in ("in_progress", "completed")
    finally:
        again.stop()

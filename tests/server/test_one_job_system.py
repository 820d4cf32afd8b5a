"""One job system and one server database: ``/v1`` file attaches and Llama Stack
inserts are jobs of the one queue (in ``server.db``, beside the native jobs), tenants
take turns, an unexpected failure fails only its job, an insert has a deadline, and an
older server's ``openai.sqlite`` moves into the one database once."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import openai

from ragloom.server.db import ServerDatabase
from ragloom.server.jobs import Job, JobControl, JobQueue, JobWorker, Outcome
from ragloom.server.v1.chunking import AUTO
from ragloom.server.v1.db import SCHEMA, MetaDB
from ragloom.server.v1.migrate import migrate_openai_file
from ragloom.testing import HashingEmbedder
from ragloom.types import Embedding
from tests.server.conftest import start_server
from tests.server.openai_support import make_app, serve


def _wait(check: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_v1_attaches_and_inserts_are_jobs_of_the_one_queue_in_the_one_database(
        tmp_path: Path) -> None:
    live = start_server(tmp_path / "kb" / "ragloom.db")
    try:
        key = live.state.keys.create_key("alice").key
        client = openai.OpenAI(base_url=f"{live.url}/v1", api_key=key, max_retries=0)
        vs = client.vector_stores.create(name="docs")
        fid = client.files.create(file=("a.txt", b"Walruses sleep on ice floes."),
                                  purpose="assistants").id
        done = client.vector_stores.files.create_and_poll(
            vector_store_id=vs.id, file_id=fid, poll_interval_ms=20)
        assert done.status == "completed"
        with live.client(key) as http:
            answer = http.post("/v1/vector-io/insert", json={
                "vector_db_id": vs.id, "chunks": [{"content": "Seals eat fish.",
                                                   "metadata": {"document_id": "d1"}}]})
            assert answer.status_code == 200, answer.text
        database = live.state.db
        rows = database.all("SELECT kind, status, kb_id FROM jobs ORDER BY created")
        assert rows == [("vs_file", "completed", vs.id), ("rag_insert", "completed", vs.id)]
        assert database.one("SELECT status FROM oai_vs_files") == ("completed",)
        assert not (live.state.settings.server_db.parent / "openai.sqlite").exists()
        hits = client.vector_stores.search(vs.id, query="seals fish")
        assert any("Seals" in part.text for hit in hits.data for part in hit.content)
    finally:
        live.stop()


class _Slow:
    """A handler whose jobs take ``seconds`` each, recording the order they ran in."""

    kinds: tuple[str, ...] = ("slow",)
    group_size = 1

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ran: list[str] = []

    def run(self, jobs: Sequence[Job], control: JobControl) -> list[Outcome]:
        time.sleep(self.seconds)
        self.ran.extend(job.tenant_id for job in jobs)
        return [(job, "completed", None, None, {}) for job in jobs]

    def failed(self, jobs: Sequence[Job], message: str) -> None:
        pass


def test_a_tenants_slow_jobs_do_not_hold_another_tenants_back(tmp_path: Path) -> None:
    database = ServerDatabase(tmp_path / "server.db")
    queue = JobQueue(database, tmp_path / "files")
    worker = JobWorker(queue, None)
    handler = _Slow(0.2)
    worker.register(handler)
    try:
        queue.submit_work("alice", "kb_a", "slow", [{}] * 5)
        worker.start()
        queue.submit_work("bob", "kb_b", "slow", [{}])
        _wait(lambda: queue.pending_of("slow") == 0)
        # Bob's one job ran right after the group of Alice's under way, not after all.
        assert handler.ran.index("bob") <= 2
    finally:
        worker.stop()
        database.close()


class _Poisoned(HashingEmbedder):
    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        if any("poison" in text for text in texts):
            raise RuntimeError("the embedder broke")
        return super().embed_documents(texts)


def test_an_unexpected_failure_fails_that_file_with_its_reason_and_the_next_goes_in(
        tmp_path: Path) -> None:
    app = make_app(tmp_path, _Poisoned(64), None)
    with serve(app) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="key-a", max_retries=0)
        vs = client.vector_stores.create(name="docs")
        bad = client.files.create(file=("bad.txt", b"poison here"), purpose="assistants").id
        good = client.files.create(file=("good.txt", b"Walrus facts."),
                                   purpose="assistants").id
        batch = client.vector_stores.file_batches.create_and_poll(
            vector_store_id=vs.id, file_ids=[bad, good], poll_interval_ms=20)
        assert batch.file_counts.failed == 1 and batch.file_counts.completed == 1
        failed = client.vector_stores.files.retrieve(bad, vector_store_id=vs.id)
        assert failed.last_error is not None and failed.last_error.code == "server_error"
        assert "RuntimeError" in failed.last_error.message

        # The whole group failing (not one file): its files fail with the reason, the
        # worker goes on with the next job.
        router_ingestor = app.state.ragloom_ingestor
        original = router_ingestor._process
        calls: list[int] = []

        def broken(items: Any) -> None:
            calls.append(1)
            if len(calls) == 1:
                raise ValueError("the tables broke")
            original(items)

        router_ingestor._process = broken
        other = client.files.create(file=("x.txt", b"Seal facts."), purpose="assistants").id
        first = client.vector_stores.files.create_and_poll(
            vector_store_id=vs.id, file_id=other, poll_interval_ms=20)
        assert first.status == "failed" and first.last_error is not None
        assert first.last_error.code == "server_error"
        assert "ValueError" in first.last_error.message
        again = client.vector_stores.files.create_and_poll(
            vector_store_id=vs.id, file_id=other, poll_interval_ms=20)
        assert again.status == "completed"
        assert router_ingestor.worker.alive()


class _SlowEmbedder(HashingEmbedder):
    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        time.sleep(0.3)
        return super().embed_documents(texts)


def test_an_insert_is_a_job_with_a_deadline(tmp_path: Path) -> None:
    app = make_app(tmp_path, _SlowEmbedder(64), None, insert_deadline=0.2)
    chunks = [{"content": f"Fact number {n}.", "metadata": {"document_id": f"d{n}"}}
              for n in range(600)]
    with serve(app) as url, httpx.Client(base_url=url, timeout=60,
                                         headers={"Authorization": "Bearer key-a"}) as http:
        answer = http.post("/v1/vector-io/insert", json={"vector_db_id": "kb1",
                                                         "chunks": chunks})
        assert answer.status_code == 504, answer.text
        assert answer.json()["error"]["code"] == "deadline_exceeded"
        small = http.post("/v1/vector-io/insert", json={"vector_db_id": "kb1",
                                                        "chunks": chunks[:3]})
        assert small.status_code == 200, small.text
    with sqlite3.connect(tmp_path / "openai.sqlite") as conn:
        assert conn.execute("SELECT kind, status, reason FROM jobs ORDER BY created"
                            ).fetchall() == [("rag_insert", "failed", "deadline_exceeded"),
                                             ("rag_insert", "completed", None)]


def _old_openai_file(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA)
        conn.execute("PRAGMA user_version = 1")
        conn.execute("INSERT INTO oai_files VALUES ('file-1', 'alice', 'a.txt', "
                     "'assistants', 13, 1, NULL)")
        conn.execute("INSERT INTO oai_file_data VALUES ('file-1', ?)", (b"Walrus facts.",))
        conn.execute("INSERT INTO oai_vector_stores VALUES ('vs_1', 'alice', 'docs', 1, 1, "
                     "'{}', NULL, NULL)")
        conn.execute("INSERT INTO oai_vs_files (vs_id, file_id, tenant, status, attributes, "
                     "chunking, created_at) VALUES ('vs_1', 'file-1', 'alice', "
                     "'in_progress', '{}', ?, 1)",
                     (json.dumps(AUTO),))
        conn.execute("INSERT INTO ls_objects VALUES ('agent', 'alice', 'a1', NULL, 1, '{}')")


def test_an_older_openai_sqlite_moves_into_the_server_database_once(tmp_path: Path) -> None:
    old = tmp_path / "openai.sqlite"
    _old_openai_file(old)
    database = ServerDatabase(tmp_path / "server.db")
    meta = MetaDB(database)
    try:
        assert migrate_openai_file(meta, old) == 5
        assert not old.exists() and (tmp_path / "openai.sqlite.migrated").exists()
        assert meta.row("SELECT status FROM oai_vs_files")["status"] == "in_progress"
        assert bytes(meta.row("SELECT data FROM oai_file_data")["data"]) == b"Walrus facts."
        assert migrate_openai_file(meta, old) == 0  # nothing left to move
        # Killed after the copy, before the rename: copying again changes nothing.
        shutil.copy(tmp_path / "openai.sqlite.migrated", old)
        assert migrate_openai_file(meta, old) == 0
        assert meta.row("SELECT count(*) AS n FROM oai_files")["n"] == 1
        assert database.one("PRAGMA integrity_check") == ("ok",)
    finally:
        database.close()


def test_the_server_migrates_an_older_openai_sqlite_and_finishes_its_files(
        tmp_path: Path) -> None:
    folder = tmp_path / "kb"
    folder.mkdir()
    _old_openai_file(folder / "openai.sqlite")
    live = start_server(folder / "ragloom.db")
    try:
        key = live.state.keys.create_key("bob").key
        client = openai.OpenAI(base_url=f"{live.url}/v1", api_key=key, max_retries=0)
        client.vector_stores.list()  # the routes started (and migrated)
        database = live.state.db
        _wait(lambda: database.one("SELECT status FROM oai_vs_files") == ("completed",))
        assert database.one("SELECT kind, status FROM jobs") == ("vs_file", "completed")
        assert (folder / "openai.sqlite.migrated").exists()
    finally:
        live.stop()


def test_a_worker_thread_ends_only_with_stop(tmp_path: Path) -> None:
    """Supervision: a handler raising in every group never ends the worker."""
    database = ServerDatabase(tmp_path / "server.db")
    queue = JobQueue(database, tmp_path / "files")
    worker = JobWorker(queue, None)
    failures: list[str] = []

    class Broken(_Slow):
        def run(self, jobs: Sequence[Job], control: JobControl) -> list[Outcome]:
            raise KeyError("boom")

        def failed(self, jobs: Sequence[Job], message: str) -> None:
            failures.append(message)

    worker.register(Broken(0))
    try:
        worker.start()
        jobs = queue.submit_work("alice", "kb_a", "slow", [{}, {}])
        _wait(lambda: queue.pending_of("slow") == 0)
        assert worker.alive() and failures
        stored = [queue.by_id(job.id) for job in jobs]
        assert all(job is not None and job.status == "failed" for job in stored)
        assert threading.active_count() >= 1
    finally:
        worker.stop()
        database.close()


class _Gated(HashingEmbedder):
    """Embeds documents slowly, saying when it started."""

    def __init__(self) -> None:
        super().__init__(64)
        self.entered = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        self.entered.set()
        time.sleep(0.5)
        return super().embed_documents(texts)


def test_deleting_a_vector_store_cancels_and_drains_its_file_jobs(tmp_path: Path) -> None:
    embedder = _Gated()
    app = make_app(tmp_path, embedder, None)
    with serve(app) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="key-a", max_retries=0)
        vs = client.vector_stores.create(name="docs")
        fid = client.files.create(file=("a.txt", b"Walrus facts."), purpose="assistants").id
        client.vector_stores.files.create(vector_store_id=vs.id, file_id=fid)
        assert embedder.entered.wait(30)
        assert client.vector_stores.delete(vs.id).deleted
        ingestor = app.state.ragloom_ingestor
        assert ingestor.worker.current_kb != vs.id  # drained before the answer
        jobs = {j.kind: j for j in ingestor.queue.list_jobs(_Tenant("a")) if j.kb_id == vs.id}
        assert jobs["vs_file"].status == "cancelled"
        assert jobs["vs_delete"].status == "completed"  # the delete is a job too
        again = client.vector_stores.create(name="again")
        done = client.vector_stores.files.create_and_poll(
            vector_store_id=again.id, file_id=fid, poll_interval_ms=20)
        assert done.status == "completed" and ingestor.worker.alive()


class _Tenant:
    def __init__(self, ident: str) -> None:
        self.id = ident

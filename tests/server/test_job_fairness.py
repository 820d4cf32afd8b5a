"""Tenants take turns in the job queue, URL jobs are fetched off the ingestion worker
(a trickling URL never holds another tenant's upload), and a stopped server leaves
its jobs pending, never failed or half-written."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from ragloom.server.auth import Tenant
from ragloom.server.catalog import KbRecord
from ragloom.server.db import ServerDatabase
from ragloom.server.jobs import JobQueue, JobRequest
from tests.server.conftest import start_server, wait_batch, wait_job

#: This tree's sources, for the ``ragloom serve`` subprocess (run from another folder).
SRC = str(Path(__import__("ragloom").__file__).resolve().parents[1])
ALICE, BOB = Tenant(id="t_alice", name="alice"), Tenant(id="t_bob", name="bob")
KB_A = KbRecord(id="kb_a", tenant_id="t_alice", name="a", collection="kb_a", embedder="fake")
KB_B = KbRecord(id="kb_b", tenant_id="t_bob", name="b", collection="kb_b", embedder="fake")


def test_tenants_take_turns_in_the_queue(tmp_path: Path) -> None:
    database = ServerDatabase(tmp_path / "server.db")
    try:
        queue = JobQueue(database, tmp_path / "files")
        # Alice queued a lot first; Bob's one job must not wait for all of hers.
        for n in range(3):
            queue.submit(ALICE, KB_A, [JobRequest(kind="text", source=f"a{n}", text="x")])
        queue.submit(BOB, KB_B, [JobRequest(kind="text", source="b0", text="x")])
        order = [[job.tenant_id for job in queue.next_group(1)] for _ in range(4)]
        assert order[:2] == [["t_alice"], ["t_bob"]]
        assert order[2:] == [["t_alice"], ["t_alice"]]
        assert queue.next_group(1) == []
    finally:
        database.close()


def test_url_jobs_reach_the_writer_only_once_fetched(tmp_path: Path) -> None:
    database = ServerDatabase(tmp_path / "server.db")
    try:
        queue = JobQueue(database, tmp_path / "files")
        (job,) = queue.submit(ALICE, KB_A, [JobRequest(kind="url", source="u",
                                                       url="http://example.com/x")])
        assert queue.next_group(10) == []  # not fetched yet: the writer leaves it
        claimed = queue.next_fetch()
        assert claimed is not None and claimed.id == job.id
        assert queue.next_fetch() is None  # leased by the fetcher
        queue.fetched(claimed, b"hello", {"content_type": "text/plain"})
        (ready,) = queue.next_group(10)
        assert ready.id == job.id and ready.payload["fetch"]["content_type"] == "text/plain"
        assert Path(ready.payload["path"]).read_bytes() == b"hello"
    finally:
        database.close()


class _Trickle(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "10000")
            self.end_headers()
            for _ in range(10000):  # one byte a second (the test's deadline is shorter)
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(1.0)
        except OSError:
            pass


@pytest.fixture
def trickle() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/slow.txt"
    httpd.shutdown()
    httpd.server_close()


def test_stopping_the_server_leaves_jobs_pending_then_they_complete(tmp_path: Path) -> None:
    db = tmp_path / "kb" / "ragloom.db"
    server = start_server(db)
    words = " ".join(f"word{n}" for n in range(3000))
    files = [("files", (f"doc-{n:03d}.txt", f"Doc {n}. {words}".encode(), "text/plain"))
             for n in range(60)]
    try:
        client = server.client()
        client.post("/api/knowledge-bases", json={"name": "stop"})
        batch = client.post("/api/knowledge-bases/stop/documents", files=files).json()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not server.state.worker.busy:
            time.sleep(0.005)
    finally:
        server.stop()  # the lifespan ends while the group runs
    assert not server.thread.is_alive()
    import sqlite3

    with sqlite3.connect(db.parent / "server.db") as conn:
        statuses = dict(conn.execute("SELECT status, count(*) FROM jobs GROUP BY status"))
    assert statuses.get("failed", 0) == 0 and statuses.get("cancelled", 0) == 0, statuses
    server = start_server(db)
    try:
        client = server.client()
        done = wait_batch(client, batch["id"], timeout=120)
        assert done["file_counts"]["completed"] == 60, done["file_counts"]
        info = client.get("/api/knowledge-bases/stop").json()
        assert info["document_count"] == 60
    finally:
        server.stop()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        count, distinct = conn.execute("SELECT count(*), count(DISTINCT id) FROM chunks"
                                       ).fetchone()
        assert count == distinct == info["chunk_count"]


def test_a_trickling_url_is_abandoned_while_another_tenant_uploads(
        tmp_path: Path, trickle: str) -> None:
    from ragloom.server.auth import KeyStore

    db = tmp_path / "kb" / "ragloom.db"
    db.parent.mkdir(parents=True)
    database = ServerDatabase(db.parent / "server.db")
    keys = {name: KeyStore(database).create_key(name).key for name in ("alice", "bob")}
    database.close()
    import os
    import signal

    from tests.serving import free_port, start_ragloom_serve

    port = free_port()
    process = start_ragloom_serve(
        db, port, tmp_path / "serve.log", "--embedder", "fake:hashing-64", "--llm",
        "fake:echo", "--rate-limit", "0", "--url-timeout", "3", "--allow-private-urls",
        cwd=db.parent, env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": SRC})
    try:
        url = f"http://127.0.0.1:{port}"
        alice = httpx.Client(base_url=url, timeout=30,
                             headers={"Authorization": f"Bearer {keys['alice']}"})
        bob = httpx.Client(base_url=url, timeout=30,
                           headers={"Authorization": f"Bearer {keys['bob']}"})
        alice.post("/api/knowledge-bases", json={"name": "web"}).raise_for_status()
        bob.post("/api/knowledge-bases", json={"name": "notes"}).raise_for_status()
        started = time.monotonic()
        slow = alice.post("/api/knowledge-bases/web/documents/url", json={"url": trickle})
        assert slow.status_code == 202, slow.text
        time.sleep(0.5)  # the fetch is under way
        upload = bob.post("/api/knowledge-bases/notes/documents/text",
                          json={"text": "Bob's small note about tides.", "source": "n.txt"})
        assert upload.status_code in (200, 202), upload.text
        done = wait_job(bob, upload.json()["id"], timeout=15)
        assert done["status"] == "completed" and time.monotonic() - started < 15
        failed = wait_job(alice, slow.json()["id"], timeout=15)
        elapsed = time.monotonic() - started
        assert failed["status"] == "failed", failed
        assert failed["error"]["reason"] == "fetch_failed"
        assert "timed out" in failed["error"]["message"]
        assert elapsed < 3 + 5  # the deadline, plus a claim and a poll
        # The next URL of that tenant is served as usual (the fetch pool is free).
        assert alice.get("/api/knowledge-bases/web").json()["document_count"] == 0
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)

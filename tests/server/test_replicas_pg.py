"""Two ``ragloom serve`` processes on one PostgreSQL serve the same tenants.

A key made once works on both; what replica A creates (knowledge bases, documents,
sessions, files, vector stores) replica B reads, searches and deletes; a batch
uploaded to A completes with exact counts whoever runs its jobs; tenant 2 gets 404
for tenant 1's ids on either replica; and ``kill -9`` of a replica mid-batch leaves
the batch to the other, which finishes it with no duplicated document.

The servers use the fake embedder and no real language model: what is tested is the
shared state, not the models.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

from tests.serving import free_port, launch_ragloom_serve, wait_done, wait_ready

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

LEASE = 2.0  # seconds: short, so a killed replica's jobs move quickly
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
         "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau"]


@dataclass
class Replica:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, key: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60,
                            headers={"Authorization": f"Bearer {key}"})


def _launch(db_url: str, name: str, folder: Path) -> Replica:
    port = free_port()
    log = folder / f"{name}.log"
    process = launch_ragloom_serve(
        db_url, port, log, "--embedder", "fake:hashing-64", "--llm", "fake:echo",
        "--rate-limit", "0", "--job-lease", str(LEASE), cwd=folder,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    return Replica(name, port, process, log)


def _stop(replica: Replica) -> None:
    if replica.process.poll() is None:
        replica.process.send_signal(signal.SIGTERM)
        try:
            replica.process.wait(20)
        except subprocess.TimeoutExpired:
            replica.process.kill()


@dataclass
class Cluster:
    db_url: str
    folder: Path
    a: Replica
    b: Replica
    key1: str
    key2: str


def _database(pg_url: str, name: str) -> str:
    """A fresh database on the test server, as a URL."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
        conn.execute("SELECT 1")
    parts = urlsplit(pg_url)
    url = urlunsplit(parts._replace(path=f"/{name}"))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return url


@pytest.fixture(scope="module")
def cluster(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    db_url = _database(pg_url, "ragloom_replicas")
    folder = tmp_path_factory.mktemp("replicas")
    # The command users run; its key then works on every replica.
    made = subprocess.run([sys.executable, "-m", "ragloom", "keys", "create", "--tenant", "one",
                           "--db", db_url, "--json"], cwd=folder, capture_output=True,
                          timeout=120, check=True)
    key1 = json.loads(made.stdout)["key"]
    from ragloom.server.auth import KeyStore
    from ragloom.server.db import ServerDatabase

    database = ServerDatabase(db_url)
    try:
        key2 = KeyStore(database).create_key("two").key
    finally:
        database.close()
    a, b = _launch(db_url, "a", folder), _launch(db_url, "b", folder)
    try:
        wait_ready(a.port, a.process, a.log)
        wait_ready(b.port, b.process, b.log)
        yield Cluster(db_url, folder, a, b, key1, key2)
    finally:
        _stop(a)
        _stop(b)


def _text(number: int, words: int = 300) -> bytes:
    body = " ".join(WORDS[(number * 7 + i * 13) % len(WORDS)] for i in range(words))
    return f"Document {number} about replica{number}.\n\n{body}".encode()


def test_a_key_made_once_works_on_both_replicas(cluster: Cluster) -> None:
    for replica in (cluster.a, cluster.b):
        with replica.client(cluster.key1) as client:
            assert client.get("/api/knowledge-bases").status_code == 200
        with replica.client("rlk_not-a-key") as client:
            assert client.get("/api/knowledge-bases").status_code == 401


def test_native_objects_made_on_a_are_read_searched_and_deleted_on_b(cluster: Cluster) -> None:
    with cluster.a.client(cluster.key1) as a, cluster.b.client(cluster.key1) as b:
        kb = a.post("/api/knowledge-bases", json={"name": "shared"}).json()
        job = a.post("/api/knowledge-bases/shared/documents/text",
                     json={"text": "The unpaid lunch break is 30 minutes.",
                           "source": "policy.txt"}).json()
        assert wait_done(b, f"/api/jobs/{job['id']}", 60)["status"] == "completed"
        assert b.get(f"/api/knowledge-bases/{kb['id']}").json()["document_count"] == 1
        found = b.post("/api/search", json={"query": "lunch break",
                                            "knowledge_bases": ["shared"]}).json()
        assert "lunch break" in found["matches"][0]["text"]
        session = a.post("/api/sessions", json={"knowledge_bases": ["shared"],
                                                "title": "t"}).json()
        asked = a.post(f"/api/sessions/{session['id']}/ask",
                       json={"question": "How long is the lunch break?"})
        assert asked.status_code == 200, asked.text
        history = b.get(f"/api/sessions/{session['id']}").json()
        assert history["title"] == "t"
        assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
        assert b.delete(f"/api/sessions/{session['id']}").status_code == 200
        assert a.get(f"/api/sessions/{session['id']}").status_code == 404
        assert b.delete(f"/api/knowledge-bases/{kb['id']}").status_code == 200
        assert a.get(f"/api/knowledge-bases/{kb['id']}").status_code == 404
        assert a.post("/api/search", json={"query": "lunch", "knowledge_bases": ["shared"]}
                      ).status_code == 404


def test_the_same_document_sent_to_both_replicas_is_stored_once(cluster: Cluster) -> None:
    with cluster.a.client(cluster.key1) as a, cluster.b.client(cluster.key1) as b:
        kb = a.post("/api/knowledge-bases", json={"name": "twice"}).json()
        body = {"text": _text(7).decode(), "source": "same.txt"}
        jobs = [client.post("/api/knowledge-bases/twice/documents/text", json=body).json()
                for client in (a, b, a, b)]
        done = [wait_done(b, f"/api/jobs/{job['id']}", 60) for job in jobs]
        assert [(job["status"], job["error"]) for job in done] == [("completed", None)] * 4
        info = b.get(f"/api/knowledge-bases/{kb['id']}").json()
        assert info["document_count"] == 1
        [document] = a.get(f"/api/knowledge-bases/{kb['id']}/documents").json()["data"]
        assert document["chunk_count"] == info["chunk_count"]


def _upload(client: httpx.Client, name: str, data: bytes) -> str:
    response = client.post("/v1/files", files={"file": (name, data, "text/plain")},
                           data={"purpose": "assistants"})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def test_openai_objects_and_a_batch_cross_replicas(cluster: Cluster) -> None:
    files = 12
    with cluster.a.client(cluster.key1) as a, cluster.b.client(cluster.key1) as b, \
            cluster.b.client(cluster.key2) as other:
        ids = [_upload(a, f"doc-{n}.txt", _text(n)) for n in range(files)]
        assert b.get(f"/v1/files/{ids[0]}/content").content == _text(0)
        store = a.post("/v1/vector_stores", json={"name": "team"}).json()
        batch = a.post(f"/v1/vector_stores/{store['id']}/file_batches",
                       json={"file_ids": ids}).json()
        done = wait_done(b, f"/v1/vector_stores/{store['id']}/file_batches/{batch['id']}", 60)
        assert done["status"] == "completed"
        assert done["file_counts"] == {"in_progress": 0, "completed": files, "failed": 0,
                                       "cancelled": 0, "total": files}
        hits = b.post(f"/v1/vector_stores/{store['id']}/search",
                      json={"query": "replica3", "max_num_results": 50}).json()["data"]
        assert hits[0]["file_id"] == ids[3]
        assert len({h["file_id"] for h in hits}) == len(hits)  # one result per file
        # Tenant two reaches none of it, on either replica.
        for path in (f"/v1/files/{ids[0]}", f"/v1/vector_stores/{store['id']}",
                     f"/v1/vector_stores/{store['id']}/file_batches/{batch['id']}"):
            assert other.get(path).status_code == 404
        assert other.get("/v1/files").json()["data"] == []
        # Deleted on B: gone for A, and its chunks leave the search.
        assert b.delete(f"/v1/vector_stores/{store['id']}/files/{ids[3]}").status_code == 200
        assert b.delete(f"/v1/files/{ids[3]}").status_code == 200
        assert a.get(f"/v1/files/{ids[3]}").status_code == 404
        hits = a.post(f"/v1/vector_stores/{store['id']}/search",
                      json={"query": "replica3", "max_num_results": 50}).json()["data"]
        assert ids[3] not in {h["file_id"] for h in hits}
        answer = a.post("/v1/responses", json={
            "model": "fake:echo", "input": "What is replica5 about?",
            "tools": [{"type": "file_search", "vector_store_ids": [store["id"]]}]})
        assert answer.status_code == 200, answer.text
        stored = b.get(f"/v1/responses/{answer.json()['id']}")
        assert stored.json()["output"] == answer.json()["output"]
        assert other.get(f"/v1/responses/{answer.json()['id']}").status_code == 404
        assert b.delete(f"/v1/vector_stores/{store['id']}").status_code == 200
        assert a.get(f"/v1/vector_stores/{store['id']}").status_code == 404


def test_tenant_two_gets_404_for_tenant_one_ids_on_both_replicas(cluster: Cluster) -> None:
    with cluster.a.client(cluster.key1) as a:
        kb = a.post("/api/knowledge-bases", json={"name": "private"}).json()
        job = a.post("/api/knowledge-bases/private/documents/text",
                     json={"text": "secret plans", "source": "s.txt"}).json()
        session = a.post("/api/sessions", json={"knowledge_bases": ["private"]}).json()
        wait_done(a, f"/api/jobs/{job['id']}", 60)
    for replica in (cluster.a, cluster.b):
        with replica.client(cluster.key2) as other:
            for path in (f"/api/knowledge-bases/{kb['id']}", f"/api/jobs/{job['id']}",
                         f"/api/sessions/{session['id']}",
                         f"/api/knowledge-bases/{kb['id']}/documents"):
                assert other.get(path).status_code == 404, path
            assert other.delete(f"/api/knowledge-bases/{kb['id']}").status_code == 404
            assert other.get("/api/knowledge-bases").json()["data"] == []
            assert other.get("/api/sessions").json()["data"] == []


def test_kill_9_of_a_replica_mid_batch_the_other_finishes_it(cluster: Cluster) -> None:
    files = 30
    with cluster.a.client(cluster.key1) as a, cluster.b.client(cluster.key1) as b:
        kb = a.post("/api/knowledge-bases", json={"name": "crash"}).json()
        # B must not take the jobs first: it is busy only with what A leaves behind.
        batch = a.post("/api/knowledge-bases/crash/documents", files=[
            ("files", (f"doc-{n:03d}.txt", _text(n, 3000), "text/plain"))
            for n in range(files)]).json()
        assert batch["status"] == "in_progress"
        killed_at = 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed_at:
            killed_at = b.get(f"/api/knowledge-bases/{kb['id']}").json()["document_count"]
            time.sleep(0.005)
        os.kill(cluster.a.process.pid, signal.SIGKILL)
        cluster.a.process.wait(10)
        assert 0 < killed_at < files  # A died mid-batch
        done = wait_done(b, f"/api/batches/{batch['id']}", timeout=120)
        assert done["status"] == "completed", done
        assert [job["status"] for job in done["jobs"]] == ["completed"] * files
        # B ran the jobs again: what A had stored came back unchanged, never twice.
        outcomes = [d["outcome"] for job in done["jobs"] for d in job["documents"]]
        assert outcomes.count("unchanged") >= killed_at
        info = b.get(f"/api/knowledge-bases/{kb['id']}").json()
        assert info["document_count"] == files
        sources = [d["source"] for d in b.get(
            f"/api/knowledge-bases/{kb['id']}/documents").json()["data"]]
        assert sorted(sources) == [f"doc-{n:03d}.txt" for n in range(files)]
    import psycopg

    with psycopg.connect(cluster.db_url) as conn:
        chunks, distinct = conn.execute(
            "SELECT count(*), count(DISTINCT c.id) FROM ragloom_chunks c JOIN "
            "ragloom_collections k ON k.id = c.collection_id WHERE k.name = %s",
            (kb["id"],)).fetchone()
        assert chunks == distinct == info["chunk_count"]
        left = conn.execute("SELECT count(*) FROM ragloom_server.job_files").fetchone()[0]
        assert left == 0  # uploaded bytes leave the database once their job is done

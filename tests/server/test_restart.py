"""``kill -9`` of ``ragloom serve`` during a batch upload, then a restart: the batch
completes, with exactly one document per file and a database that passes its checks."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import wait_batch
from tests.serving import free_port, start_ragloom_serve

FILES = 40
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota",
         "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau",
         "upsilon", "phi", "chi", "psi", "omega"]


def _serve(db: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    return start_ragloom_serve(db, port, log, "--embedder", "fake:hashing-64", "--llm",
                               "fake:echo", "--rate-limit", "0", cwd=db.parent,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})


@pytest.fixture
def server_paths(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    yield tmp_path / "data" / "ragloom.db", tmp_path / "serve.log"


def _file(number: int) -> bytes:
    words = [WORDS[(number * 7 + i * 13) % len(WORDS)] for i in range(2000)]
    return (f"Document {number}.\n\n" + " ".join(words)).encode()


@pytest.mark.slow
def test_kill_9_mid_batch_then_restart_completes_exactly(
        server_paths: tuple[Path, Path]) -> None:
    db, log = server_paths
    db.parent.mkdir(parents=True)
    port = free_port()
    process = _serve(db, port, log)
    url = f"http://127.0.0.1:{port}"
    try:
        client = httpx.Client(base_url=url, timeout=60)
        kb = client.post("/api/knowledge-bases", json={"name": "crash"}).json()
        files = [("files", (f"doc-{n:03d}.txt", _file(n), "text/plain")) for n in range(FILES)]
        batch = client.post("/api/knowledge-bases/crash/documents", files=files).json()
        assert batch["status"] == "in_progress"
        killed_at = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            count = client.get(f"/api/knowledge-bases/{kb['id']}").json()["document_count"]
            if count > 0:
                killed_at = count
                break
            time.sleep(0.005)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
        assert killed_at is not None and killed_at < FILES, "the batch ended before the kill"
        status = dict(sqlite3.connect(db.parent / "server.db").execute(
            "SELECT status, count(*) FROM jobs GROUP BY status").fetchall())
        assert status.get("in_progress", 0) > 0, status
    finally:
        if process.poll() is None:
            process.kill()
    process = _serve(db, port, log)
    try:
        client = httpx.Client(base_url=url, timeout=60)
        done = wait_batch(client, batch["id"], timeout=120)
        assert done["status"] == "completed", done["file_counts"]
        assert done["file_counts"]["completed"] == FILES
        info = client.get(f"/api/knowledge-bases/{kb['id']}").json()
        assert info["document_count"] == FILES
        sources = [d["source"] for d in client.get(
            f"/api/knowledge-bases/{kb['id']}/documents").json()["data"]]
        assert sorted(sources) == [f"doc-{n:03d}.txt" for n in range(FILES)]
        outcomes = [d["outcome"] for job in done["jobs"] for d in job["documents"]]
        # Documents committed before the kill come back unchanged, never twice.
        assert outcomes.count("unchanged") >= killed_at
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(20)
    for path in (db, db.parent / "server.db"):
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with sqlite3.connect(db) as conn:
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        distinct = conn.execute("SELECT count(DISTINCT id) FROM chunks").fetchone()[0]
        assert chunks == distinct == info["chunk_count"]
    leftovers = list((db.parent / "server-files").glob("*/*"))
    assert leftovers == []

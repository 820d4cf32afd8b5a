"""Crash and fault suite: ``kill -9`` at random points of ingestion, then recovery.

Each trial starts from an empty data folder and kills (SIGKILL) one of:

- ``cli``: ``ragloom ingest FOLDER`` (a subprocess), then runs it again;
- ``native``: ``ragloom serve`` while files are uploaded to ``/api`` in batches;
- ``v1``: ``ragloom serve`` while files go to ``/v1/files`` and a vector store batch;
- ``delete``: ``ragloom serve`` while documents are deleted one by one;
- ``kb_delete``: ``ragloom serve`` while knowledge bases are deleted during their
  ingestion (and one re-created under its old name);
- ``vs_delete``: ``ragloom serve`` while vector stores are deleted during their
  ingestion, files detached from them and ``/v1/files`` deleted (the last two kinds
  are in ``bench/_crash_deletes.py``, which says what they check);

then restarts the server and lets it recover, and checks every SQLite file:

- lost: a file acknowledged (its upload, batch or delete answered) or given to the
  CLI is missing after recovery;
- duplicated: a source stored twice, or a document whose chunk rows differ from the
  count a clean run stores for that file;
- orphaned: a chunk without its document, or any chunk (or search hit) of a file
  whose delete was acknowledged;
- ``PRAGMA integrity_check`` is ``ok`` on every SQLite file.

Two faults follow the trials: an I/O error (a store write that raises, in process)
and a full disk (``RLIMIT_FSIZE`` on a ``ragloom serve`` subprocess): the job fails
with its reason, the store stays consistent, and the next upload succeeds.

    python bench/crash_suite.py --trials 200

prints a table and writes ``bench/results/crash_suite.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
KINDS = ("cli", "native", "v1", "delete", "kb_delete", "vs_delete")
# The delete trials (bench/_crash_deletes.py) import this module as ``crash_suite``.
sys.modules.setdefault("crash_suite", sys.modules[__name__])
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
FAKE = ("--embedder", "fake:hashing-64", "--llm", "fake:echo")
WORDS = ["harbor", "tide", "ledger", "copper", "lantern", "meadow", "quartz", "saddle",
         "timber", "violet", "walnut", "yarrow", "anchor", "bramble", "cinder", "dune",
         "ember", "fern", "glacier", "hazel"]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(SRC), "PYTHONUNBUFFERED": "1"}


def make_corpus(folder: Path, files: int = 16) -> dict[str, bytes]:
    """Text files of 1 to 12 KB, each with its own marker word ``markerNN``."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus = {}
    for n in range(files):
        rng = random.Random(n)
        words = [rng.choice(WORDS) for _ in range(150 + 150 * (n % 12))]
        text = f"File {n} marker{n:02d}.\n\n" + " ".join(words) + f"\n\nmarker{n:02d}\n"
        name = f"doc-{n:02d}.txt"
        (folder / name).write_text(text)
        corpus[name] = text.encode()
    return corpus


# ---------------------------------------------------------------- store checks
@dataclass
class Check:
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    orphaned: list[str] = field(default_factory=list)
    integrity: int = 0
    integrity_failed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.orphaned or self.integrity_failed)


def store_files(folder: Path, check: Check, tables: set[str]
                ) -> Iterator[tuple[Path, sqlite3.Connection]]:
    """Every SQLite file under ``folder``, its ``PRAGMA integrity_check`` counted in
    ``check``; those holding ``tables`` are yielded open, and once the caller has read
    them their chunks without a document go to ``check``."""
    for path in sorted([*folder.rglob("*.db"), *folder.rglob("*.sqlite")]):
        with sqlite3.connect(path) as conn:
            result = conn.execute("PRAGMA integrity_check").fetchone()[0]
            check.integrity += 1
            if result != "ok":
                check.integrity_failed.append(f"{path.name}: {result}")
            held = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if not tables <= held:
                continue
            yield path, conn
            orphans = conn.execute(
                "SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM documents d "
                "WHERE d.collection_id = c.collection_id AND d.id = c.document_id)"
            ).fetchone()[0]
            if orphans:
                check.orphaned.append(f"{path.name}: {orphans} chunks without a document")


def stored_documents(folder: Path, check: Check) -> list[tuple[str, int, int]]:
    """(source, chunk_count recorded, chunk rows) of every document in every SQLite
    file under ``folder``; orphaned chunks and integrity failures go to ``check``."""
    found = []
    for _, conn in store_files(folder, check, {"documents", "chunks"}):
        rows = conn.execute(
            "SELECT d.source, d.chunk_count, (SELECT count(*) FROM chunks c WHERE "
            "c.collection_id = d.collection_id AND c.document_id = d.id) FROM documents d"
        ).fetchall()
        found.extend((str(s), int(n), int(c)) for s, n, c in rows)
    return found


def check_store(folder: Path, reference: dict[str, int], *, must: set[str], may: set[str],
                gone: set[str], name_of: dict[str, str] | None = None) -> Check:
    """``must`` sources are present exactly once, ``may`` at most once, ``gone`` never;
    each present document has the chunk rows ``reference`` gives for its file."""
    check = Check()
    name_of = name_of or {}
    documents = stored_documents(folder, check)
    counts = Counter(source for source, _, _ in documents)
    for source, recorded, rows in documents:
        expected = reference.get(name_of.get(source, source))
        if counts[source] > 1 or rows != recorded or (expected is not None and
                                                       rows != expected):
            check.duplicated.append(f"{source}: {rows} chunks (expected {expected})")
        if source in gone:
            check.orphaned.append(f"{source}: deleted but still stored")
        elif source not in must and source not in may:
            check.duplicated.append(f"{source}: not expected at all")
    check.lost.extend(sorted(s for s in must - set(counts) if s not in gone))
    return check


# ---------------------------------------------------------------- the CLI
def cli_run(corpus: Path, db: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "ragloom", "ingest", str(corpus), "--db",
                             str(db), "--embedder", "fake:hashing-64"], env=env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def cli_reference(work: Path, corpus: Path) -> tuple[dict[str, int], float]:
    db = work / "reference-cli" / "kb.db"
    started = time.monotonic()
    if cli_run(corpus, db).wait() != 0:
        raise RuntimeError("the reference CLI run failed")
    seconds = time.monotonic() - started
    documents = stored_documents(db.parent, Check())
    return {s: rows for s, _, rows in documents}, seconds


def cli_trial(work: Path, corpus: Path, reference: dict[str, int], window: float,
              rng: random.Random) -> Check:
    db = work / "kb.db"
    process = cli_run(corpus, db)
    time.sleep(rng.uniform(0.0, window))
    process.kill()
    process.wait()
    if cli_run(corpus, db).wait() != 0:
        check = Check()
        check.lost.append("the CLI re-run failed")
        return check
    return check_store(work, reference, must=set(reference), may=set(), gone=set())


# ---------------------------------------------------------------- the server
def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``ragloom serve`` on a data folder, killed and restarted at will."""

    def __init__(self, data: Path, *, preexec: Any = None) -> None:
        self.data = data
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.preexec = preexec
        self.process: subprocess.Popen[bytes] | None = None
        data.mkdir(parents=True, exist_ok=True)

    def start(self, timeout: float = 60) -> None:
        command = [sys.executable, "-m", "ragloom", "serve", "--port", str(self.port), "--db",
                   str(self.data / "ragloom.db"), *FAKE, "--rate-limit", "0",
                   "--log-level", "warning"]
        with (self.data.parent / "serve.log").open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            cwd=self.data, env=env(),
                                            preexec_fn=self.preexec)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/ready", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.kill()
        raise RuntimeError("ragloom serve did not start: " +
                           (self.data.parent / "serve.log").read_text()[-2000:])

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30)


@dataclass
class Ledger:
    """What the server acknowledged before the kill (``done``) and what was in flight
    (``maybe``); for deletes, ``gone`` (acknowledged) and ``maybe_gone``."""

    done: set[str] = field(default_factory=set)
    maybe: set[str] = field(default_factory=set)
    gone: set[str] = field(default_factory=set)
    maybe_gone: set[str] = field(default_factory=set)
    batches: list[str] = field(default_factory=list)
    vector_store: str | None = None
    names: dict[str, str] = field(default_factory=dict)


def _upload_native(client: httpx.Client, corpus: dict[str, bytes], ledger: Ledger) -> None:
    names = sorted(corpus)
    for start in range(0, len(names), 4):
        group = names[start:start + 4]
        ledger.maybe.update(group)
        files = [("files", (name, corpus[name], "text/plain")) for name in group]
        response = client.post("/api/knowledge-bases/crash/documents", files=files)
        response.raise_for_status()
        ledger.batches.append(response.json()["id"])
        ledger.done.update(group)


def _upload_v1(client: httpx.Client, corpus: dict[str, bytes], ledger: Ledger) -> None:
    ids = []
    for name in sorted(corpus):
        response = client.post("/v1/files", data={"purpose": "assistants"},
                               files={"file": (name, corpus[name], "text/plain")})
        response.raise_for_status()
        ids.append(response.json()["id"])
        ledger.names[ids[-1]] = name
    store = client.post("/v1/vector_stores", json={"name": "crash"})
    store.raise_for_status()
    ledger.vector_store = store.json()["id"]
    ledger.maybe.update(ids)
    batch = client.post(f"/v1/vector_stores/{ledger.vector_store}/file_batches",
                        json={"file_ids": ids})
    batch.raise_for_status()
    ledger.done.update(ids)


def _delete_native(client: httpx.Client, ids: dict[str, str], ledger: Ledger) -> None:
    for name in sorted(ids)[::2]:
        ledger.maybe_gone.add(name)
        client.delete(f"/api/knowledge-bases/crash/documents/{ids[name]}").raise_for_status()
        ledger.gone.add(name)


def _wait_recovered(client: httpx.Client, ledger: Ledger, timeout: float = 120) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = any(client.get(f"/api/batches/{b}").json()["status"] == "in_progress"
                   for b in ledger.batches)
        if ledger.vector_store is not None:
            counts = client.get(f"/v1/vector_stores/{ledger.vector_store}").json()
            busy = busy or counts["file_counts"]["in_progress"] > 0
        if not busy:
            return True
        time.sleep(0.1)
    return False


def _preload(server: Server, corpus: dict[str, bytes], ledger: Ledger) -> dict[str, str]:
    """Every file stored (before a delete trial); name -> document id."""
    with server.client() as client:
        _upload_native(client, corpus, ledger)
        if not _wait_recovered(client, ledger):
            raise RuntimeError("the preload did not finish")
        listed = client.get("/api/knowledge-bases/crash/documents").json()["data"]
    ledger.maybe.clear()
    return {d["source"]: d["id"] for d in listed}


def server_trial(kind: str, work: Path, corpus: dict[str, bytes],
                 reference: dict[str, dict[str, int]], window: float,
                 rng: random.Random) -> Check:
    server = Server(work / "data")
    ledger = Ledger()
    server.start()
    try:
        with server.client() as client:
            client.post("/api/knowledge-bases", json={"name": "crash"}).raise_for_status()
        ids = _preload(server, corpus, ledger) if kind == "delete" else {}
        client = server.client()
        action = {"native": lambda: _upload_native(client, corpus, ledger),
                  "v1": lambda: _upload_v1(client, corpus, ledger),
                  "delete": lambda: _delete_native(client, ids, ledger)}[kind]

        def run() -> None:
            with contextlib.suppress(httpx.HTTPError):  # the kill cut the request
                action()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        time.sleep(rng.uniform(0.0, window))
        server.kill()
        thread.join(30)
        client.close()
    finally:
        server.kill()
    server.start()
    try:
        with server.client() as client:
            recovered = _wait_recovered(client, ledger)
            searchable = _searchable_deleted(client, ledger) if kind == "delete" else []
    finally:
        server.stop()
    table = reference["v1" if kind == "v1" else "native"]
    if kind == "delete":
        check = check_store(server.data, table, must=set(corpus) - ledger.maybe_gone,
                            may=ledger.maybe_gone - ledger.gone, gone=ledger.gone)
    else:
        check = check_store(server.data, table, must=ledger.done,
                            may=ledger.maybe - ledger.done, gone=set(), name_of=ledger.names)
    if not recovered:
        check.lost.append("jobs still in progress after the restart")
    check.orphaned.extend(searchable)
    return check


def _searchable_deleted(client: httpx.Client, ledger: Ledger) -> list[str]:
    """Deleted files whose marker word a keyword search still finds."""
    found = []
    for name in sorted(ledger.gone):
        marker = "marker" + name[4:6]
        hits = client.post("/api/search", json={"query": marker, "knowledge_bases": ["crash"],
                                                "mode": "keyword", "top_k": 5}).json()
        if any(hit["source"] == name for hit in hits["matches"]):
            found.append(f"{name}: still searchable after its delete")
    return found


def server_reference(work: Path, corpus: dict[str, bytes]) -> tuple[dict[str, dict[str, int]],
                                                                    dict[str, float]]:
    """Chunk rows per file from one clean server run (native uploads, then the same
    files through ``/v1``), and how long each kind takes."""
    tables: dict[str, dict[str, int]] = {}
    seconds: dict[str, float] = {}
    server = Server(work / "reference" / "data")
    ledgers = {"native": Ledger(), "v1": Ledger()}
    server.start()
    try:
        with server.client() as client:
            client.post("/api/knowledge-bases", json={"name": "crash"}).raise_for_status()
            for kind, ledger in ledgers.items():
                started = time.monotonic()
                (_upload_native if kind == "native" else _upload_v1)(client, corpus, ledger)
                if not _wait_recovered(client, ledger):
                    raise RuntimeError(f"the reference {kind} run did not finish")
                seconds[kind] = time.monotonic() - started
    finally:
        server.stop()
    documents = stored_documents(server.data, Check())
    ids = ledgers["v1"].names
    tables["native"] = {s: rows for s, _, rows in documents if s not in ids}
    tables["v1"] = {ids[s]: rows for s, _, rows in documents if s in ids}
    for kind, table in tables.items():
        if sorted(table) != sorted(corpus):
            raise RuntimeError(f"the reference {kind} run stored {sorted(table)}")
    return tables, seconds


# ---------------------------------------------------------------- faults
def disk_full_case(work: Path, corpus: dict[str, bytes]) -> dict[str, Any]:
    """A server whose files may not grow past a limit (RLIMIT_FSIZE, as a full disk):
    a large upload fails with its reason, the store stays consistent, and once the
    limit is lifted the next upload succeeds."""
    import resource

    limit = 600_000

    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill

    server = Server(work / "disk-full" / "data", preexec=preexec)
    server.start()
    result: dict[str, Any] = {"case": "disk_full"}
    try:
        assert server.process is not None
        client = server.client()
        client.post("/api/knowledge-bases", json={"name": "crash"}).raise_for_status()
        resource.prlimit(server.process.pid, resource.RLIMIT_FSIZE,
                         (limit, resource.RLIM_INFINITY))
        rng = random.Random(7)
        big = " ".join(rng.choice(WORDS) + str(rng.randrange(10**6)) for _ in range(25_000))
        response = client.post("/api/knowledge-bases/crash/documents",
                               files=[("files", ("big.txt", big.encode(), "text/plain"))])
        result["upload_status"] = response.status_code
        if response.status_code == 202:
            job = _wait_job(client, response.json()["jobs"][0]["id"])
            result["job_status"] = job["status"]
            result["reason"] = (job.get("error") or {}).get("message")
        else:
            result["job_status"] = "refused"
            result["reason"] = response.json().get("error", {}).get("message")
        resource.prlimit(server.process.pid, resource.RLIMIT_FSIZE,
                         (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        name = "doc-00.txt"
        after = client.post("/api/knowledge-bases/crash/documents",
                            files=[("files", (name, corpus[name], "text/plain"))])
        job = _wait_job(client, after.json()["jobs"][0]["id"])
        result["next_upload"] = job["status"]
        client.close()
    finally:
        server.stop()
    check = Check()
    stored = {s for s, rows, n in stored_documents(server.data, check) if rows == n}
    result["store_consistent"] = check.ok
    result["integrity_checks"] = check.integrity
    result["ok"] = (result["job_status"] in ("failed", "refused") and bool(result["reason"])
                    and result["next_upload"] == "completed" and check.ok
                    and "big.txt" not in stored)
    return result


def _wait_job(client: httpx.Client, job_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        job: dict[str, Any] = client.get(f"/api/jobs/{job_id}").json()
        if job["status"] != "in_progress" or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def io_error_case(work: Path, corpus: dict[str, bytes]) -> dict[str, Any]:
    """A store write that fails with an I/O error mid-write (in process): the job fails
    with its reason, nothing of it is stored, and the next upload succeeds."""
    sys.path.insert(0, str(SRC))
    from ragloom.server.app import create_app
    from ragloom.server.settings import ServerSettings
    from ragloom.stores.sqlite import SqliteVectorStore

    sys.path.insert(0, str(ROOT))
    from tests.serving import start_uvicorn

    data = work / "io-error" / "data"
    port = free_port()
    app = create_app(ServerSettings(port=port, db=data / "ragloom.db", embedder="fake:hashing-64",
                                    llm="fake:echo", rate_limit=0))
    server, thread = start_uvicorn(app, port, log_config=None, access_log=False)
    app.state.ragloom.ready.wait(30)
    real = SqliteVectorStore.replace_documents
    result: dict[str, Any] = {"case": "io_error"}

    def failing(self: Any, items: Any, **kwargs: Any) -> None:
        # Half the rows are written inside the transaction, then the disk fails.
        with self._write() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS half_written (x)")
            conn.execute("INSERT INTO half_written VALUES (1)")
            raise OSError(5, "Input/output error")

    try:
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
        client.post("/api/knowledge-bases", json={"name": "crash"}).raise_for_status()
        SqliteVectorStore.replace_documents = failing  # type: ignore[method-assign]
        try:
            name = "doc-01.txt"
            response = client.post("/api/knowledge-bases/crash/documents",
                                   files=[("files", (name, corpus[name], "text/plain"))])
            job = _wait_job(client, response.json()["jobs"][0]["id"])
        finally:
            SqliteVectorStore.replace_documents = real  # type: ignore[method-assign]
        result["job_status"] = job["status"]
        result["reason"] = (job.get("error") or {}).get("message")
        name = "doc-02.txt"
        after = client.post("/api/knowledge-bases/crash/documents",
                            files=[("files", (name, corpus[name], "text/plain"))])
        result["next_upload"] = _wait_job(client, after.json()["jobs"][0]["id"])["status"]
        client.close()
    finally:
        server.should_exit = True
        thread.join(30)
    check = Check()
    stored = {s for s, rows, n in stored_documents(data, check) if rows == n}
    with sqlite3.connect(data / "ragloom.db") as conn:
        half = conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half_written'"
                            ).fetchone()[0]
    result["store_consistent"] = check.ok and half == 0
    result["integrity_checks"] = check.integrity
    result["ok"] = (result["job_status"] == "failed" and bool(result["reason"])
                    and result["next_upload"] == "completed" and result["store_consistent"]
                    and stored == {"doc-02.txt"})
    return result


# ---------------------------------------------------------------- the suite
def run_suite(trials: int, *, seed: int = 0, workdir: Path | None = None,
              faults: bool = True, files: int = 16, max_seconds: float | None = None,
              kinds: tuple[str, ...] = KINDS) -> dict[str, Any]:
    """``trials`` trials (``kinds`` in turn), or as many as ``max_seconds`` allows."""
    from _crash_deletes import DELETE_KINDS, delete_trial

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="ragloom-crash-", dir=workdir) as folder:
        work = Path(folder)
        corpus_dir = work / "corpus"
        corpus = make_corpus(corpus_dir, files)
        cli_table, cli_seconds = cli_reference(work, corpus_dir)
        server_tables, seconds = server_reference(work, corpus)
        windows = {"cli": cli_seconds, "native": seconds["native"] + 0.3,
                   "v1": seconds["v1"] + 0.3, "delete": 0.5}
        for kind in DELETE_KINDS:
            if kind in kinds:  # a clean run (no kill) measures the plan and must pass
                clean, elapsed = delete_trial(kind, work / f"reference-{kind}", corpus,
                                              server_tables, None, random.Random(seed))
                if not clean.ok:
                    raise RuntimeError(f"the clean {kind} run fails its checks: {clean}")
                windows[kind] = elapsed + 0.3
        rows: list[dict[str, Any]] = []
        began = time.monotonic()
        for number in range(trials):
            if max_seconds is not None and time.monotonic() - began > max_seconds:
                break
            kind = kinds[number % len(kinds)]
            trial_dir = work / f"trial-{number:03d}"
            trial_dir.mkdir()
            started = time.monotonic()
            if kind == "cli":
                check = cli_trial(trial_dir, corpus_dir, cli_table, windows["cli"], rng)
            elif kind in DELETE_KINDS:
                check, _ = delete_trial(kind, trial_dir, corpus, server_tables,
                                        windows[kind], rng)
            else:
                check = server_trial(kind, trial_dir, corpus, server_tables, windows[kind],
                                     rng)
            rows.append({"trial": number, "kind": kind,
                         "seconds": round(time.monotonic() - started, 2), **asdict(check)})
        cases = [io_error_case(work, corpus), disk_full_case(work, corpus)] if faults else []
    result = summarize(rows, cases, kinds)
    result["windows"] = {kind: round(windows[kind], 2) for kind in kinds}
    return result


def summarize(rows: list[dict[str, Any]], cases: list[dict[str, Any]],
              kinds: tuple[str, ...] = KINDS) -> dict[str, Any]:
    total = {"trials": len(rows),
             "lost": sum(len(r["lost"]) for r in rows),
             "duplicated": sum(len(r["duplicated"]) for r in rows),
             "orphaned": sum(len(r["orphaned"]) for r in rows),
             "integrity_checks": sum(r["integrity"] for r in rows),
             "integrity_failed": sum(len(r["integrity_failed"]) for r in rows)}
    by_kind = {kind: _kind_row([r for r in rows if r["kind"] == kind]) for kind in kinds}
    return {"total": total, "by_kind": by_kind, "faults": cases,
            "failures": [r for r in rows if r["lost"] or r["duplicated"] or r["orphaned"]
                         or r["integrity_failed"]],
            "load": os.getloadavg()}


def _kind_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"trials": len(rows),
            "failed": sum(1 for r in rows if r["lost"] or r["duplicated"] or r["orphaned"]
                          or r["integrity_failed"]),
            "lost": sum(len(r["lost"]) for r in rows),
            "duplicated": sum(len(r["duplicated"]) for r in rows),
            "orphaned": sum(len(r["orphaned"]) for r in rows),
            "integrity_passed": sum(r["integrity"] - len(r["integrity_failed"]) for r in rows),
            "integrity_checks": sum(r["integrity"] for r in rows),
            "seconds": round(sum(r["seconds"] for r in rows), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="stop starting trials after this long (the table says how "
                        "many ran)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" /
                        "crash_suite.json")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help=f"the trial kinds, taken in turn (default {','.join(KINDS)})")
    args = parser.parse_args()
    kinds = tuple(k for k in args.kinds.split(",") if k)
    if set(kinds) - set(KINDS):
        parser.error(f"unknown kinds {sorted(set(kinds) - set(KINDS))}")
    started = time.monotonic()
    result = run_suite(args.trials, seed=args.seed, max_seconds=args.max_seconds, kinds=kinds)
    result["seconds"] = round(time.monotonic() - started, 1)
    total = result["total"]
    print(f"{'kind':<10} {'trials':>6} {'failed':>6} {'lost':>5} {'dup':>5} {'orphan':>6} "
          f"{'integrity ok':>12} {'seconds':>8}")
    for kind, row in result["by_kind"].items():
        print(f"{kind:<10} {row['trials']:>6} {row['failed']:>6} {row['lost']:>5} "
              f"{row['duplicated']:>5} {row['orphaned']:>6} "
              f"{row['integrity_passed']:>5}/{row['integrity_checks']:<6} "
              f"{row['seconds']:>8}")
    print(f"trials {total['trials']}  lost {total['lost']}  duplicated {total['duplicated']}  "
          f"orphaned {total['orphaned']}  integrity checks {total['integrity_checks']} "
          f"({total['integrity_failed']} failed)  in {result['seconds']} s")
    for case in result["faults"]:
        print(f"{case['case']:<10} job {case['job_status']:<9} next upload "
              f"{case['next_upload']:<9} consistent {case['store_consistent']}  "
              f"ok {case['ok']}  ({case['reason']})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

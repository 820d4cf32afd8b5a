"""Ingestion as persisted jobs, run by one background worker.

An upload is written to ``server-files/<job id>/<file name>`` (flushed to disk), then
its job row is committed with status ``in_progress``, and the request returns. The
worker takes the oldest jobs of one knowledge base (up to ``batch_files`` at a time,
so embedding batches span files), parses each file in an isolated process, ingests
the documents, and marks each job ``completed`` or ``failed`` with a reason
(``unsupported_file``, ``invalid_file``, ``server_error``).

Restart safety: a job row is ``in_progress`` until its documents are stored, and every
document is stored in one store transaction with a content-derived id. A server
killed at any moment restarts with those jobs still ``in_progress``; the worker runs
them again, documents already committed come back ``unchanged``, the rest are
ingested: the batch completes with no partial and no duplicated document.

The worker is the only writer of knowledge base content, so SQLite sees one writer;
searches read the same store objects concurrently.

Replicas (the server database on PostgreSQL): every replica runs a worker, and a
worker *claims* the jobs it runs: in one write transaction (writes take turns, see
:mod:`ragloom.server.sql_postgres`) it picks pending jobs whose lease is free or has
expired and stamps them with its own id (``lease_owner``) and a ``lease_until`` time,
which a heartbeat pushes forward while it lives. Two live replicas never run the same
job; a replica killed mid-group stops renewing, and once the lease has expired
another replica (or a restart) runs those jobs again, with the same no-duplicate
guarantee as a restart. Uploaded bytes then live in the database (``job_files``),
not in a local folder, so any replica can run any job. On SQLite (one server
process) the leases are released when the server starts, so a restart resumes at once.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragloom.errors import CollectionDroppedError, RagError
from ragloom.ingestion.report import IngestEvent
from ragloom.server.auth import Tenant
from ragloom.server.catalog import Catalog, KbRecord
from ragloom.server.db import ServerDatabase, new_id, now
from ragloom.server.errors import ApiError, not_found
from ragloom.types import TextDocument

log = logging.getLogger("ragloom.server.jobs")

STATUSES = ("in_progress", "completed", "failed", "cancelled")
_COLUMNS = ("id, tenant_id, kb_id, batch_id, kind, payload, status, reason, message, result, "
            "created, updated")
#: In a URL job's JSON payload once its bytes are fetched.
FETCHED_KEY = "_ragloom_fetched"
FETCHED_MARK = f'"{FETCHED_KEY}": true'
_UNSUPPORTED = re.compile(r"unsupported format|binary file of unknown type|ZIP archive of "
                          r"unknown type|is needed for", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class Job:
    """One ingestion: a file, a text or a URL into one knowledge base."""

    id: str
    tenant_id: str
    kb_id: str
    batch_id: str | None
    kind: str
    payload: dict[str, Any]
    status: str
    reason: str | None = None
    message: str | None = None
    result: dict[str, Any] = field(default_factory=dict)
    created: float = 0.0
    updated: float = 0.0

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Job:
        return cls(id=row[0], tenant_id=row[1], kb_id=row[2], batch_id=row[3], kind=row[4],
                   payload=json.loads(row[5]), status=row[6], reason=row[7], message=row[8],
                   result=json.loads(row[9]) if row[9] else {}, created=row[10],
                   updated=row[11])

    @property
    def source(self) -> str:
        return str(self.payload.get("source", ""))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "object": "ingestion_job", "knowledge_base_id": self.kb_id,
            "batch_id": self.batch_id, "kind": self.kind, "source": self.source,
            "status": self.status,
            "error": ({"reason": self.reason, "message": self.message or ""}
                      if self.status == "failed" else None),
            "documents": list(self.result.get("documents", [])),
            "chunks": int(self.result.get("chunks", 0)),
            "created_at": int(self.created), "updated_at": int(self.updated),
        }


@dataclass(frozen=True, kw_only=True)
class JobRequest:
    """What to ingest: ``kind`` file (``data`` bytes, or ``path`` to a file to keep),
    text (``text``) or url (``url``); ``source`` names the document."""

    kind: str
    source: str
    metadata: dict[str, Any] = field(default_factory=dict)
    data: bytes | None = None
    path: str | None = None
    file_name: str | None = None
    mime_type: str | None = None
    text: str | None = None
    url: str | None = None


def _safe_name(name: str) -> str:
    base = os.path.basename(name.replace("\\", "/")) or "upload"
    cleaned = re.sub(r"[^\w.\- ]", "_", base).strip(" .") or "upload"
    return cleaned[:120]


class JobQueue:
    """The job table and the uploaded bytes waiting in ``files_dir`` (or, when the
    database is shared by replicas, in its ``job_files`` table).

    ``owner`` names this process in job leases; ``lease_seconds`` is how long a claim
    holds without a heartbeat.
    """

    def __init__(self, db: ServerDatabase, files_dir: Path, *,
                 lease_seconds: float = 30.0) -> None:
        self.db = db
        self.files_dir = files_dir
        self.wakeup = threading.Event()
        self.owner = new_id("replica")
        self.lease_seconds = lease_seconds
        self.files_in_database = bool(getattr(db, "shared", False))
        self._last_tenant = ""
        self._last_fetch_tenant = ""

    def _stage(self, job_id: str, request: JobRequest) -> dict[str, Any]:
        payload: dict[str, Any] = {"source": request.source, "metadata": request.metadata}
        if request.kind == "file":
            payload.update(file_name=request.file_name or request.source,
                           mime_type=request.mime_type)
            if request.data is not None and self.files_in_database:
                payload.update(stored=True)
            elif request.data is not None:
                folder = self.files_dir / job_id
                folder.mkdir(parents=True, exist_ok=True)
                target = folder / _safe_name(request.file_name or request.source)
                with open(target, "wb") as handle:
                    handle.write(request.data)
                    handle.flush()
                    os.fsync(handle.fileno())
                payload.update(path=str(target), owned=True)
            else:
                payload.update(path=request.path, owned=False)
        elif request.kind == "text":
            payload["text"] = request.text or ""
        elif request.kind == "url":
            payload["url"] = request.url
        else:
            raise ValueError(f"unknown job kind {request.kind!r}")
        return payload

    def submit(self, tenant: Tenant, kb: KbRecord, requests: Sequence[JobRequest], *,
               batch: bool = False) -> list[Job]:
        """Stage and record jobs in one transaction: all are accepted or none."""
        batch_id = new_id("batch") if batch else None
        stamp = now()
        jobs: list[Job] = []
        try:
            for request in requests:
                job_id = new_id("job")
                jobs.append(Job(id=job_id, tenant_id=tenant.id, kb_id=kb.id,
                                batch_id=batch_id, kind=request.kind,
                                payload=self._stage(job_id, request), status="in_progress",
                                created=stamp, updated=stamp))
        except OSError as exc:  # a full disk or a failing one: nothing is accepted
            for job in jobs:
                shutil.rmtree(self.files_dir / job.id, ignore_errors=True)
            shutil.rmtree(self.files_dir / job_id, ignore_errors=True)
            log.warning("cannot keep an upload: %s", exc)
            raise ApiError(507, "the server cannot store the upload now (its disk is full "
                           "or failing); nothing was accepted, send it again later",
                           type="server_error", code="insufficient_storage") from exc
        with self.db.transaction() as conn:
            conn.executemany(
                f"INSERT INTO jobs ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, "
                "?, ?)", [(j.id, j.tenant_id, j.kb_id, j.batch_id, j.kind, json.dumps(j.payload),
                           j.status, j.created, j.updated) for j in jobs])
            stored = [(job.id, request.data) for job, request in zip(jobs, requests, strict=True)
                      if job.payload.get("stored")]
            if stored:
                conn.executemany("INSERT INTO job_files (job_id, data) VALUES (?, ?)", stored)
        self.wakeup.set()
        return jobs

    def get(self, tenant: Tenant, job_id: str) -> Job:
        row = self.db.one(f"SELECT {_COLUMNS} FROM jobs WHERE id = ? AND tenant_id = ?",
                          (job_id, tenant.id))
        if row is None:
            raise not_found("job", job_id)
        return Job.from_row(row)

    def batch(self, tenant: Tenant, batch_id: str) -> list[Job]:
        rows = self.db.all(f"SELECT {_COLUMNS} FROM jobs WHERE batch_id = ? AND tenant_id = ? "
                           "ORDER BY created, id", (batch_id, tenant.id))
        if not rows:
            raise not_found("batch", batch_id)
        return [Job.from_row(r) for r in rows]

    def list_jobs(self, tenant: Tenant, *, kb_id: str | None = None, status: str | None = None,
             limit: int = 100) -> list[Job]:
        sql = f"SELECT {_COLUMNS} FROM jobs WHERE tenant_id = ?"
        params: list[Any] = [tenant.id]
        if kb_id is not None:
            sql += " AND kb_id = ?"
            params.append(kb_id)
        if status is not None:
            sql += " AND status = ?"
            params.append(status)
        rows = self.db.all(sql + " ORDER BY created DESC, id LIMIT ?", [*params, limit])
        return [Job.from_row(r) for r in rows]

    def pending_count(self) -> int:
        row = self.db.one("SELECT count(*) FROM jobs WHERE status = 'in_progress'")
        return int(row[0]) if row else 0

    def next_group(self, limit: int) -> list[Job]:
        """Claim the oldest free pending jobs of one knowledge base: they are this
        process's until their lease runs out.

        Tenants take turns (round-robin by tenant id): the knowledge base is the one
        whose job waited longest among the jobs of the tenant after the one served
        last, so one tenant's queue never holds another's uploads back. URL jobs are
        claimed here only once the fetch pool has fetched their bytes
        (:mod:`ragloom.server.fetching`).
        """
        stamp = now()
        free = (f"status = 'in_progress' AND (lease_until IS NULL OR lease_until < ?) "
                f"AND (kind <> 'url' OR payload LIKE '%{FETCHED_MARK}%')")
        with self.db.transaction() as conn:
            tenants = [r[0] for r in conn.execute(
                f"SELECT DISTINCT tenant_id FROM jobs WHERE {free} ORDER BY tenant_id",
                (stamp,)).fetchall()]
            if not tenants:
                return []
            tenant = next((t for t in tenants if t > self._last_tenant), tenants[0])
            first = conn.execute(f"SELECT kb_id FROM jobs WHERE {free} AND tenant_id = ? "
                                 "ORDER BY created, id LIMIT 1", (stamp, tenant)).fetchone()
            rows = conn.execute(f"SELECT {_COLUMNS} FROM jobs WHERE {free} AND kb_id = ? "
                                "ORDER BY created, id LIMIT ?", (stamp, first[0], limit)
                                ).fetchall()
            conn.executemany("UPDATE jobs SET lease_owner = ?, lease_until = ? WHERE id = ?",
                             [(self.owner, stamp + self.lease_seconds, r[0]) for r in rows])
        self._last_tenant = tenant
        return [Job.from_row(r) for r in rows]

    def next_fetch(self) -> Job | None:
        """Claim one URL job still to fetch (tenants take turns here too)."""
        stamp = now()
        free = (f"status = 'in_progress' AND (lease_until IS NULL OR lease_until < ?) "
                f"AND kind = 'url' AND payload NOT LIKE '%{FETCHED_MARK}%'")
        with self.db.transaction() as conn:
            tenants = [r[0] for r in conn.execute(
                f"SELECT DISTINCT tenant_id FROM jobs WHERE {free} ORDER BY tenant_id",
                (stamp,)).fetchall()]
            if not tenants:
                return None
            tenant = next((t for t in tenants if t > self._last_fetch_tenant), tenants[0])
            row = conn.execute(f"SELECT {_COLUMNS} FROM jobs WHERE {free} AND tenant_id = ? "
                               "ORDER BY created, id LIMIT 1", (stamp, tenant)).fetchone()
            conn.execute("UPDATE jobs SET lease_owner = ?, lease_until = ? WHERE id = ?",
                         (self.owner, stamp + self.lease_seconds, row[0]))
        self._last_fetch_tenant = tenant
        return Job.from_row(row)

    def fetched(self, job: Job, data: bytes, details: dict[str, Any]) -> None:
        """Keep a URL job's fetched bytes (as an upload's) and hand it to the writer."""
        payload = {**job.payload, "fetch": details, FETCHED_KEY: True}
        if self.files_in_database:
            payload.update(stored=True)
        else:
            folder = self.files_dir / job.id
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / "fetched"
            with open(target, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            payload.update(path=str(target), owned=True)
        with self.db.transaction() as conn:
            if self.files_in_database:
                conn.execute("DELETE FROM job_files WHERE job_id = ?", (job.id,))
                conn.execute("INSERT INTO job_files (job_id, data) VALUES (?, ?)",
                             (job.id, data))
            conn.execute("UPDATE jobs SET payload = ?, lease_owner = NULL, lease_until = NULL "
                         "WHERE id = ? AND status = 'in_progress'",
                         (json.dumps(payload), job.id))
        self.wakeup.set()

    def renew_leases(self) -> int:
        """Push this process's leases forward (the heartbeat); returns how many."""
        return self.db.execute("UPDATE jobs SET lease_until = ? WHERE lease_owner = ? AND "
                               "status = 'in_progress'", (now() + self.lease_seconds,
                                                          self.owner))

    def release(self, jobs: Sequence[Job]) -> None:
        """Give jobs back (this process did not run them): the next claim takes them."""
        with self.db.transaction() as conn:
            conn.executemany("UPDATE jobs SET lease_owner = NULL, lease_until = NULL "
                             "WHERE id = ? AND lease_owner = ?",
                             [(job.id, self.owner) for job in jobs])
        self.wakeup.set()

    def release_all_leases(self) -> int:
        """Free every lease: for a server that is the only user of its database."""
        return self.db.execute("UPDATE jobs SET lease_owner = NULL, lease_until = NULL "
                               "WHERE status = 'in_progress' AND lease_owner IS NOT NULL")

    def stored_bytes(self, job: Job) -> bytes | None:
        row = self.db.one("SELECT data FROM job_files WHERE job_id = ?", (job.id,))
        return bytes(row[0]) if row is not None else None

    def finish(self, outcomes: Sequence[tuple[Job, str, str | None, str | None,
                                              dict[str, Any]]]) -> None:
        """Record (job, status, reason, message, result) for several jobs at once."""
        stamp = now()
        with self.db.transaction() as conn:
            conn.executemany(
                "UPDATE jobs SET status = ?, reason = ?, message = ?, result = ?, updated = ? "
                "WHERE id = ? AND status = 'in_progress'",
                [(status, reason, message, json.dumps(result), stamp, job.id)
                 for job, status, reason, message, result in outcomes])
            stored = [(job.id,) for job, *_ in outcomes if job.payload.get("stored")]
            if stored:
                conn.executemany("DELETE FROM job_files WHERE job_id = ?", stored)
        for job, *_ in outcomes:
            if job.payload.get("owned") and job.payload.get("path"):
                shutil.rmtree(Path(job.payload["path"]).parent, ignore_errors=True)


    def discard_cancelled(self, kb_id: str) -> int:
        """Remove the uploads of a knowledge base's cancelled jobs (its folder on disk
        or its bytes in the database); returns how many jobs had some."""
        rows = self.db.all(f"SELECT {_COLUMNS} FROM jobs WHERE kb_id = ? AND "
                           "status = 'cancelled'", (kb_id,))
        jobs = [Job.from_row(r) for r in rows]
        with self.db.transaction() as conn:
            conn.executemany("DELETE FROM job_files WHERE job_id = ?",
                             [(job.id,) for job in jobs if job.payload.get("stored")])
        removed = 0
        for job in jobs:
            if job.payload.get("owned") and job.payload.get("path"):
                folder = Path(job.payload["path"]).parent
                if folder.exists():
                    shutil.rmtree(folder, ignore_errors=True)
                    removed += 1
        return removed


def unexpected_reason(exc: BaseException) -> str:
    """What a job that failed unexpectedly tells its client: the kind of failure,
    never a path, SQL text or traceback (those go to the log)."""
    text = str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return ("the database stayed locked while ingesting (another process held it); "
                "send the file again")
    if isinstance(exc, OSError) or any(word in text for word in (
            "disk i/o error", "disk is full", "file too large", "input/output error",
            "no space left")):
        return ("the store could not write (its disk is full or failing); nothing of "
                "this file was stored, send it again")
    if isinstance(exc, RagError):
        return f"ingestion failed: {type(exc).__name__}; see the server log"
    return f"the server failed while ingesting ({type(exc).__name__}); see its log"


def failure_reason(message: str) -> str:
    return "unsupported_file" if _UNSUPPORTED.search(message) else "invalid_file"


class JobWorker:
    """The background thread that runs jobs; :meth:`start` / :meth:`stop`."""

    def __init__(self, queue: JobQueue, catalog: Catalog, *, batch_files: int = 64,
                 isolate_parsing: bool = True,
                 on_finish: Callable[[str], None] | None = None,
                 on_write: Callable[[Any], None] | None = None) -> None:
        self.queue = queue
        self.catalog = catalog
        self.batch_files = batch_files
        self.isolate_parsing = isolate_parsing
        self.on_finish = on_finish
        #: Called with a knowledge base's store after documents are written to it, before
        #: the jobs are reported done (the server's caches move its generation on).
        self.on_write = on_write
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._parser: Any = None
        self.busy = False
        #: The knowledge base whose jobs run now, and those being deleted.
        self.current_kb: str | None = None
        self._cancelled: set[str] = set()
        self._cancel_lock = threading.Lock()

    def start(self) -> None:
        if not self.queue.files_in_database:  # the only server on this database
            self.queue.release_all_leases()
        self._thread = threading.Thread(target=self._run, name="ragloom-jobs", daemon=True)
        self._thread.start()
        self._heartbeat = threading.Thread(target=self._beat, name="ragloom-jobs-lease",
                                           daemon=True)
        self._heartbeat.start()

    def stop(self, timeout: float = 60.0) -> None:
        """Stop cleanly: the group under way stops between two documents (each one is
        stored whole, in its own transaction), its jobs are given back still pending
        (the next start runs them, documents already stored come back ``unchanged``),
        and no job is failed by the shutdown."""
        self._stop.set()
        self.queue.wakeup.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("the ingestion worker did not stop within %g s", timeout)
        if self._parser is not None:
            self._parser.close()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _beat(self) -> None:
        interval = max(0.2, self.queue.lease_seconds / 3)
        while not self._stop.wait(interval):
            try:
                self.queue.renew_leases()
            except Exception:  # a missed beat only shortens the lease
                log.exception("cannot renew the job leases")

    def cancel_kb(self, kb_id: str, timeout: float = 30.0) -> bool:
        """For a knowledge base being deleted (its jobs already marked cancelled): stop
        its running group, wait until the worker let go of it, remove its uploads.
        False when the worker still held it after ``timeout`` seconds."""
        with self._cancel_lock:
            self._cancelled.add(kb_id)
        try:
            deadline = time.monotonic() + timeout
            while self.current_kb == kb_id and time.monotonic() < deadline:
                time.sleep(0.02)
            drained = self.current_kb != kb_id
        finally:
            with self._cancel_lock:
                self._cancelled.discard(kb_id)
        self.queue.discard_cancelled(kb_id)
        return drained

    def _check_cancelled(self, kb_id: str) -> None:
        with self._cancel_lock:
            cancelled = kb_id in self._cancelled
        if cancelled:
            raise CollectionDroppedError(f"knowledge base {kb_id} was deleted")

    def alive(self) -> bool:
        """Whether the worker thread runs (``/ready`` answers 503 once it does not)."""
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        # Supervised: no exception ends this loop. A group that fails unexpectedly
        # fails its jobs with the reason; a database that stays locked is retried.
        while not self._stop.is_set():
            try:
                self._step()
            except Exception:
                log.exception("the ingestion worker failed; it goes on")
                self._stop.wait(1.0)

    def _step(self) -> None:
        try:
            jobs = self.queue.next_group(self.batch_files)
        except Exception:
            log.exception("cannot read the job table")
            jobs = []
        if not jobs:
            self.queue.wakeup.wait(1.0)
            self.queue.wakeup.clear()
            return
        self.busy = True
        try:
            self.run_group(jobs)
        except Exception as exc:  # the worker must survive any one group
            if self._stop.is_set():  # the shutdown cut the group: run again on restart
                log.info("ingestion stopped by the shutdown; %d jobs stay pending", len(jobs))
                self._give_back(jobs)
                return
            log.exception("ingestion jobs failed")
            self._fail(jobs, unexpected_reason(exc))
        finally:
            self.busy = False

    def _give_back(self, jobs: Sequence[Job]) -> None:
        try:
            self.queue.release(jobs)
        except Exception:  # the leases are released on the next start anyway
            log.warning("cannot release the jobs at shutdown", exc_info=True)

    def _until_stopped(self, documents: Sequence[TextDocument]) -> Iterator[TextDocument]:
        for document in documents:
            if self._stop.is_set():
                return
            yield document

    def _fail(self, jobs: Sequence[Job], message: str) -> None:
        """Fail ``jobs`` with ``message``; a database still locked gets a few tries."""
        for attempt in range(5):
            try:
                self.queue.finish([(j, "failed", "server_error", message, {}) for j in jobs])
            except Exception:
                log.exception("cannot record failed jobs (try %d)", attempt + 1)
                if self._stop.wait(min(5.0, 0.5 * 2 ** attempt)):
                    return
            else:
                if self.on_finish is not None:
                    for _job in jobs:
                        self.on_finish("failed")
                return

    def _load_file(self, job: Job) -> tuple[list[TextDocument], str | None]:
        if not job.payload.get("stored"):
            return self._load_path(job, str(job.payload.get("path") or ""))
        data = self.queue.stored_bytes(job)
        if data is None:
            return [], "the uploaded file is missing on the server"
        # Parsers read files: the bytes from the database go to a private folder first.
        with tempfile.TemporaryDirectory(prefix="ragloom-job-") as folder:
            path = os.path.join(folder, _safe_name(str(job.payload.get("file_name") or
                                                       job.source)))
            with open(path, "wb") as handle:
                handle.write(data)
            return self._load_path(job, path)

    def _load_path(self, job: Job, path: str) -> tuple[list[TextDocument], str | None]:
        from ragloom.ingestion.worker import ParseOptions, ParseWorker
        from ragloom.loaders.base import sha256_hex

        if not path or not os.path.isfile(path):
            return [], "the uploaded file is missing on the server"
        if self._parser is None:
            self._parser = ParseWorker(ParseOptions(isolate=self.isolate_parsing))
        results = self._parser.load(path)
        with open(path, "rb") as handle:
            data = handle.read()
        base = {"file_name": job.payload.get("file_name") or os.path.basename(path),
                "size": len(data), "content_hash": sha256_hex(data)}
        if job.payload.get("mime_type"):
            base["mime_type"] = job.payload["mime_type"]
        return self._rebuild(job, results, base)

    def _rebuild(self, job: Job, results: Sequence[Any], base: dict[str, Any]
                 ) -> tuple[list[TextDocument], str | None]:
        """Documents named by the job's source (parts keep their ``#part`` suffix)."""
        documents = []
        reasons = []
        for result in results:
            if result.document is None:
                reasons.append(str(result.reason or "no text found"))
                continue
            document = result.document
            part = document.source.partition("#")[2] if "parent_source" in document.metadata \
                else ""
            source = f"{job.source}#{part}" if part else job.source
            metadata = {**dict(job.payload.get("metadata") or {}),
                        **{k: v for k, v in document.metadata.items()
                           if k not in ("source", "parent_source", "created", "modified")},
                        **base}
            if part:
                metadata["parent_source"] = job.source
            documents.append(TextDocument.create(document.text, source=source,
                                                 metadata=metadata))
        if not documents:
            return [], "; ".join(reasons) or "no text found"
        return documents, None

    def _documents(self, job: Job) -> tuple[list[TextDocument], str | None]:
        if job.kind == "file":
            return self._load_file(job)
        if job.kind == "text":
            text = str(job.payload.get("text") or "")
            if not text.strip():
                return [], "no text (empty document)"
            metadata = {**dict(job.payload.get("metadata") or {}), "mime_type": "text/plain"}
            return [TextDocument.create(text, source=job.source, metadata=metadata)], None
        return self._load_fetched(job)

    def _load_fetched(self, job: Job) -> tuple[list[TextDocument], str | None]:
        """A URL job's documents, parsed from the bytes the fetch pool kept."""
        from ragloom.loaders.url import FetchedResource, load_fetched

        url = str(job.payload.get("url"))
        if job.payload.get("stored"):
            data = self.queue.stored_bytes(job)
        else:
            path = str(job.payload.get("path") or "")
            data = Path(path).read_bytes() if path and os.path.isfile(path) else None
        if data is None:
            return [], "the fetched page is missing on the server"
        details = dict(job.payload.get("fetch") or {})
        fetched = FetchedResource(url=url, final_url=str(details.get("final_url") or url),
                                  data=data, content_type=details.get("content_type"),
                                  last_modified=details.get("last_modified"))
        return self._rebuild(job, load_fetched(fetched), {"url": url})

    def run_group(self, jobs: Sequence[Job]) -> None:
        """Ingest a group of jobs of one knowledge base and record how each ended; a
        knowledge base deleted meanwhile stops it (its jobs failed with the reason,
        unless the delete cancelled them already)."""
        self.current_kb = jobs[0].kb_id
        try:
            self._run_group(jobs)
        except CollectionDroppedError as exc:
            self.queue.finish([(j, "failed", "collection_deleted", str(exc), {})
                               for j in jobs])
        finally:
            self.current_kb = None

    def _run_group(self, jobs: Sequence[Job]) -> None:
        record = self.catalog.by_id(jobs[0].kb_id)
        if record is None:
            self.queue.finish([(j, "cancelled", None, "the knowledge base was deleted", {})
                               for j in jobs])
            return
        knowledge_base = self.catalog.open(record)
        outcomes: list[tuple[Job, str, str | None, str | None, dict[str, Any]]] = []
        by_source: dict[str, Job] = {}
        deferred: list[Job] = []
        documents: list[TextDocument] = []
        for job in jobs:
            try:
                docs, problem = self._documents(job)
            except RagError as exc:
                docs, problem = [], str(exc)
            if problem is not None:
                outcomes.append((job, "failed", failure_reason(problem), problem, {}))
                continue
            if any(document.source in by_source for document in docs):
                # The same source twice in one group (sent twice, to one replica or two):
                # the later job runs in the next group, so each reports its own outcome.
                deferred.append(job)
                continue
            for document in docs:
                by_source[document.source] = job
            documents.extend(docs)
        results: dict[str, dict[str, Any]] = {job.id: {"documents": [], "chunks": 0}
                                              for job in jobs}
        ids = {d.source: d.id for d in documents}

        def progress(event: IngestEvent) -> None:
            self._check_cancelled(record.id)
            job = by_source.get(event.source)
            if job is None or event.outcome == "skipped":
                return
            entry = results[job.id]
            entry["documents"].append({"id": ids.get(event.source), "source": event.source,
                                       "outcome": event.outcome, "chunks": event.chunks})
            entry["chunks"] += event.chunks
            if self.on_write is not None:
                self.on_write(knowledge_base.store)

        self._check_cancelled(record.id)
        if documents:
            # Split on a reader thread and store while the next batch embeds.
            try:
                knowledge_base.pipeline(batch_size=256).run(
                    self._until_stopped(documents), progress=progress, read_ahead=True)
            finally:
                if self.on_write is not None:
                    self.on_write(knowledge_base.store)
        if self._stop.is_set():
            # Stopped mid-group: nothing is recorded, every job stays pending.
            self._give_back(jobs)
            return
        failed = {job.id for job, *_ in outcomes}
        for job in jobs:
            if job.id in failed or job in deferred:
                continue
            if not results[job.id]["documents"]:
                outcomes.append((job, "failed", "invalid_file", "no text to index", {}))
            else:
                outcomes.append((job, "completed", None, None, results[job.id]))
        self.queue.finish(outcomes)
        if deferred:
            self.queue.release(deferred)
        if self.on_finish is not None:
            for _job, status, *_ in outcomes:
                self.on_finish(status)

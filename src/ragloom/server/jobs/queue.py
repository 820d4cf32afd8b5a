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
import shutil
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragloom.server.auth import Tenant
from ragloom.server.catalog import KbRecord
from ragloom.server.db import ServerDatabase, new_id, now
from ragloom.server.errors import ApiError, not_found
from ragloom.server.jobs.model import COLUMNS as _COLUMNS
from ragloom.server.jobs.model import (
    DELETE_KINDS,
    FETCHED_KEY,
    FETCHED_MARK,
    NATIVE_KINDS,
    Job,
    JobRequest,
)
from ragloom.server.jobs.model import safe_name as _safe_name

log = logging.getLogger("ragloom.server.jobs")
_DELETES = ", ".join(f"'{kind}'" for kind in DELETE_KINDS)


def cancel_jobs(conn: Any, kb_id: str, message: str) -> int:
    """Cancel the pending jobs of ``kb_id`` (but its deletes) through ``conn``, a
    transaction open on the job table's database."""
    return int(conn.execute(
        "UPDATE jobs SET status = 'cancelled', reason = 'cancelled', message = ?, "
        f"updated = ? WHERE kb_id = ? AND status = 'in_progress' AND kind NOT IN ({_DELETES})",
        (message, now(), kb_id)).rowcount)


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

    def submit_work(self, tenant_id: str, kb_id: str, kind: str,
                    payloads: Sequence[dict[str, Any]], *,
                    batch_id: str | None = None) -> list[Job]:
        """Record jobs of another kind than an upload's (a vector store file, chunks to
        insert): ``payloads`` is what their handler needs; nothing is staged on disk."""
        jobs = self.new_work(tenant_id, kb_id, kind, payloads, batch_id=batch_id)
        with self.db.transaction() as conn:
            self.record(conn, jobs)
        self.wakeup.set()
        return jobs

    @staticmethod
    def new_work(tenant_id: str, kb_id: str, kind: str, payloads: Sequence[dict[str, Any]],
                 *, batch_id: str | None = None) -> list[Job]:
        """Jobs to :meth:`record` (in a transaction of the caller's)."""
        stamp = now()
        # A microsecond apart: they run in the order they were sent.
        return [Job(id=new_id("job"), tenant_id=tenant_id, kb_id=kb_id, batch_id=batch_id,
                    kind=kind, payload=dict(payload), status="in_progress",
                    created=stamp + n * 1e-6, updated=stamp)
                for n, payload in enumerate(payloads)]

    def record(self, conn: Any, jobs: Sequence[Job]) -> None:
        """Insert ``jobs`` through ``conn``, a transaction open on this queue's database
        (a delete's job goes in with the removal of its record); call :meth:`poke`
        after the commit."""
        conn.executemany(
            f"INSERT INTO jobs ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, "
            "?, ?)", [(j.id, j.tenant_id, j.kb_id, j.batch_id, j.kind, json.dumps(j.payload),
                       j.status, j.created, j.updated) for j in jobs])

    def poke(self) -> None:
        """Wake the worker: jobs were recorded."""
        self.wakeup.set()

    def wait_ended(self, job_ids: Sequence[str], timeout: float) -> bool:
        """Wait until none of ``job_ids`` is ``in_progress`` (a delete's request waits
        for its job a bounded time); False once ``timeout`` seconds passed."""
        give_up = time.monotonic() + timeout
        ids = list(job_ids)
        while ids:
            marks = ", ".join("?" for _ in ids)
            ids = [r[0] for r in self.db.all(f"SELECT id FROM jobs WHERE id IN ({marks}) AND "
                                             "status = 'in_progress'", ids)]
            if not ids:
                break
            if time.monotonic() >= give_up:
                return False
            time.sleep(0.02)
        return True

    def replace_payload(self, job: Job, payload: dict[str, Any]) -> None:
        """Keep less of a job that ran (an insert's chunks, once stored)."""
        self.db.execute("UPDATE jobs SET payload = ? WHERE id = ?", (json.dumps(payload),
                                                                     job.id))

    def by_id(self, job_id: str) -> Job | None:
        row = self.db.one(f"SELECT {_COLUMNS} FROM jobs WHERE id = ?", (job_id,))
        return None if row is None else Job.from_row(row)

    def cancel_kb(self, kb_id: str, message: str = "the knowledge base was deleted") -> int:
        """Cancel every pending job of ``kb_id`` (a knowledge base or vector store being
        deleted) but its deletes; the worker lets go of a running one (see
        :meth:`JobWorker.interrupt`)."""
        with self.db.transaction() as conn:
            return cancel_jobs(conn, kb_id, message)

    def pending_jobs(self, kind: str) -> list[Job]:
        rows = self.db.all(f"SELECT {_COLUMNS} FROM jobs WHERE status = 'in_progress' AND "
                           "kind = ? ORDER BY created, id", (kind,))
        return [Job.from_row(r) for r in rows]

    def pending_of(self, kind: str) -> int:
        row = self.db.one("SELECT count(*) FROM jobs WHERE status = 'in_progress' AND "
                          "kind = ?", (kind,))
        return int(row[0]) if row else 0

    def next_group(self, limit: int, *, kinds: Sequence[str] | None = None,
                   limits: dict[str, int] | None = None) -> list[Job]:
        """Claim the oldest free pending jobs of one knowledge base and one kind of work
        (uploads, texts and fetched URLs go together): they are this process's until
        their lease runs out. ``kinds``: only those (the kinds this worker runs);
        ``limits``: a group size by kind instead of ``limit``.

        Tenants take turns (round-robin by tenant id): the knowledge base is the one
        whose job waited longest among the jobs of the tenant after the one served
        last, so one tenant's queue never holds another's uploads back. URL jobs are
        claimed here only once the fetch pool has fetched their bytes
        (:mod:`ragloom.server.fetching`). A delete job (:data:`DELETE_KINDS`) is claimed
        before any of these, whatever the turns.
        """
        stamp = now()
        free = (f"status = 'in_progress' AND (lease_until IS NULL OR lease_until < ?) "
                f"AND (kind <> 'url' OR payload LIKE '%{FETCHED_MARK}%')")
        params: list[Any] = [stamp]
        if kinds is not None:
            if not kinds:
                return []
            free += f" AND kind IN ({', '.join('?' for _ in kinds)})"
            params.extend(kinds)
        deletes = [k for k in DELETE_KINDS if kinds is None or k in kinds]
        with self.db.transaction() as conn:
            # Deletes first, whatever the turns: a deleted collection's leftovers go
            # before anyone's next group (its other jobs were cancelled already).
            first = conn.execute(
                f"SELECT kb_id, kind FROM jobs WHERE {free} AND kind IN "
                f"({', '.join('?' for _ in deletes)}) ORDER BY created, id LIMIT 1",
                [*params, *deletes]).fetchone() if deletes else None
            tenant = self._last_tenant
            if first is None:
                tenants = [r[0] for r in conn.execute(
                    f"SELECT DISTINCT tenant_id FROM jobs WHERE {free} ORDER BY tenant_id",
                    params).fetchall()]
                if not tenants:
                    return []
                tenant = next((t for t in tenants if t > self._last_tenant), tenants[0])
                first = conn.execute(f"SELECT kb_id, kind FROM jobs WHERE {free} AND "
                                     "tenant_id = ? ORDER BY created, id LIMIT 1",
                                     [*params, tenant]).fetchone()
            family = NATIVE_KINDS if first[1] in NATIVE_KINDS else (first[1],)
            size = (limits or {}).get(first[1], limit)
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM jobs WHERE {free} AND kb_id = ? AND kind IN "
                f"({', '.join('?' for _ in family)}) ORDER BY created, id LIMIT ?",
                [*params, first[0], *family, size]).fetchall()
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

    def retry_deletes(self) -> int:
        """Run the delete jobs that failed (a disk error, a kill of the database) again:
        each is idempotent, and a failed one may have left chunks or files behind."""
        return self.db.execute(
            "UPDATE jobs SET status = 'in_progress', reason = NULL, message = NULL, "
            f"lease_owner = NULL, lease_until = NULL WHERE status = 'failed' AND kind IN "
            f"({_DELETES})")

    def release_all_leases(self) -> int:
        """Free every lease: for a server that is the only user of its database."""
        return self.db.execute("UPDATE jobs SET lease_owner = NULL, lease_until = NULL "
                               "WHERE status = 'in_progress' AND lease_owner IS NOT NULL")

    def sweep_uploads(self) -> int:
        """Remove the job folders of ``files_dir`` no running job owns: those of an
        upload a kill cut after its files were written but before its jobs were
        committed, and those of jobs that ended just before a kill removed them. Only
        at start-up, before any request (an upload being staged has no job row yet),
        and only for the only server on this database. Returns how many went."""
        if not self.files_dir.is_dir():
            return 0
        running = {r[0] for r in self.db.all("SELECT id FROM jobs WHERE status = "
                                             "'in_progress'")}
        removed = 0
        for folder in self.files_dir.iterdir():
            if folder.is_dir() and folder.name.startswith("job_") and (
                    folder.name not in running):
                shutil.rmtree(folder, ignore_errors=True)
                removed += 1
        if removed:
            log.info("removed %d upload folder(s) no running job owns", removed)
        return removed

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

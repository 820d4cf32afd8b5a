"""Deleting a vector store, detaching a file and deleting a file are jobs of the one job
system (kinds ``vs_delete`` and ``file_delete``), as a knowledge base's delete is
(:mod:`ragloom.server.jobs.deletes`).

The request removes the rows (the vector store, or the file's link, or the file and
all its links) and queues the delete jobs in the same transaction: a GET right after
is a 404, lists and ``file_counts`` no longer count it. A vector store's delete also
cancels its pending jobs there and tells the worker to let go of a group of it under
way. The request then waits for its jobs a bounded time (``wait`` seconds) and answers
as OpenAI does whether they ended or go on in the background.

The worker claims delete jobs before any other. ``vs_delete`` cancels the store's jobs
again, drops its collection (chunks, sidecar files) and closes its handle;
``file_delete`` removes one file's documents from one store, unless the file was
attached again and completed since (its chunks are then the new attach's). Each is
idempotent: a server killed at any point runs the job again at its next start.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ragloom.server.jobs import (
    FILE_DELETE,
    VS_DELETE,
    Job,
    JobControl,
    JobQueue,
    JobWorker,
    Outcome,
)
from ragloom.server.jobs.queue import cancel_jobs
from ragloom.server.v1.collections import VectorStoreCollections
from ragloom.server.v1.db import MetaDB

log = logging.getLogger("ragloom.server.openai.deletes")

DELETED = "the vector store was deleted"
#: File deletes of one vector store run together at most.
GROUP_SIZE = 64


class VectorStoreDeletes:
    """The requests' way to delete, and the handler of the jobs that finish it."""

    kinds: tuple[str, ...] = (VS_DELETE, FILE_DELETE)
    group_size = GROUP_SIZE

    def __init__(self, db: MetaDB, collections: VectorStoreCollections, queue: JobQueue,
                 worker: JobWorker, *, wait: float = 5.0) -> None:
        self.db = db
        self.collections = collections
        self.queue = queue
        self.worker = worker
        self.wait = wait
        worker.register(self)

    # ----------------------------------------------------------------- requests
    def delete_store(self, tenant: str, vs_id: str) -> None:
        """Remove the vector store's row (its links go with it) and queue its delete."""
        with self.db.write() as conn:
            conn.execute("DELETE FROM oai_vector_stores WHERE id = ? AND tenant = ?",
                         (vs_id, tenant))
            cancel_jobs(conn, vs_id, DELETED)
            jobs = self.queue.new_work(tenant, vs_id, VS_DELETE, [{"source": vs_id}])
            self.queue.record(conn, jobs)
        self.worker.interrupt(vs_id)
        self.settle(jobs)

    def detach(self, tenant: str, vs_id: str, file_id: str) -> None:
        """Remove a file's link to a vector store and queue the removal of its chunks."""
        with self.db.write() as conn:
            conn.execute("DELETE FROM oai_vs_files WHERE vs_id = ? AND file_id = ?",
                         (vs_id, file_id))
            jobs = self.queue_files(conn, tenant, [(vs_id, file_id)])
        self.settle(jobs)

    def queue_files(self, conn: Any, tenant: str, pairs: Sequence[tuple[str, str]]
                    ) -> list[Job]:
        """In the caller's transaction: one ``file_delete`` job per (store, file)."""
        jobs = [job for vs_id, file_id in pairs for job in self.queue.new_work(
            tenant, vs_id, FILE_DELETE, [{"source": file_id, "file_id": file_id}])]
        self.queue.record(conn, jobs)
        return jobs

    def settle(self, jobs: Sequence[Job]) -> bool:
        """Once committed: wait for ``jobs`` a while; False when they go on."""
        self.queue.poke()
        ended = self.queue.wait_ended([job.id for job in jobs], self.wait)
        if not ended:
            log.info("%d delete job(s) go on in the background", len(jobs))
        return ended

    def settle_pending(self) -> bool:
        """At start-up: wait a while for the deletes a kill left unfinished (when the
        worker runs already)."""
        if not self.worker.alive():
            return False
        ids = [r[0] for r in self.queue.db.all(
            "SELECT id FROM jobs WHERE status = 'in_progress' AND kind IN (?, ?)",
            (VS_DELETE, FILE_DELETE))]
        return self.queue.wait_ended(ids, self.wait) if ids else True

    # ------------------------------------------------------------------- worker
    def run(self, jobs: Sequence[Job], control: JobControl) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for job in jobs:
            alive = self.db.row("SELECT 1 FROM oai_vector_stores WHERE id = ?", (job.kb_id,))
            if job.kind == VS_DELETE:
                if alive is not None:  # its row was never deleted
                    outcomes.append((job, "cancelled", "cancelled", "the store exists", {}))
                    continue
                self.queue.cancel_kb(job.kb_id, DELETED)
                self.queue.discard_cancelled(job.kb_id)
                self.collections.drop(job.kb_id)
                self.worker.forget(job.kb_id)
            elif alive is not None and not self._attached_again(job):
                # A store deleted meanwhile took its chunks with it; opening it would
                # create its collection again.
                self.collections.delete_file(job.kb_id, str(job.payload.get("file_id")))
            outcomes.append((job, "completed", None, None, {}))
        return outcomes

    def _attached_again(self, job: Job) -> bool:
        return self.db.row("SELECT 1 FROM oai_vs_files WHERE vs_id = ? AND file_id = ? AND "
                           "status = 'completed'",
                           (job.kb_id, job.payload.get("file_id"))) is not None

    def failed(self, jobs: Sequence[Job], message: str) -> None:
        for job in jobs:
            log.warning("the %s job %s failed: %s", job.kind, job.id, message)

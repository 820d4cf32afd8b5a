"""Deleting a knowledge base is a job of the one job system (kind ``kb_delete``).

The request (:meth:`ragloom.server.catalog.Catalog.delete`) removes the record, cancels
the knowledge base's pending jobs and queues its delete job, all in one transaction:
from then on it is a 404 and no list shows it. It then tells the worker to let go of a
group of it under way (:meth:`JobWorker.interrupt`) and waits for the delete job a
bounded time (``wait`` seconds); past that it still answers: the record is gone and
the job finishes in the background.

The worker claims delete jobs before any other (:meth:`JobQueue.next_group`), so no
tenant's queue holds one back, and it runs one only between groups: the ingestion of
the knowledge base, interrupted, has ended. The job cancels its jobs again (one
queued meanwhile), removes their uploads, drops its collection (chunks, sidecar
files) and closes its handle. Each step may run twice: a server killed at any point
finds the job ``in_progress`` at its next start and runs it again to the end.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ragloom.server.catalog import Catalog, KbRecord
from ragloom.server.jobs.model import KB_DELETE, Job, JobControl, Outcome
from ragloom.server.jobs.queue import JobQueue, cancel_jobs
from ragloom.server.jobs.worker import JobWorker

log = logging.getLogger("ragloom.server.jobs")

DELETED = "the knowledge base was deleted"


class KnowledgeBaseDeletes:
    """The handler of ``kb_delete`` jobs; it hooks itself into ``catalog``'s deletes."""

    kinds: tuple[str, ...] = (KB_DELETE,)
    group_size = 1

    def __init__(self, queue: JobQueue, worker: JobWorker, catalog: Catalog, *,
                 wait: float = 5.0) -> None:
        self.queue = queue
        self.worker = worker
        self.catalog = catalog
        self.wait = wait
        catalog.on_delete.append(self.queue_delete)
        catalog.after_delete.append(self.settle)
        worker.register(self)

    # ----------------------------------------------------------------- requests
    def queue_delete(self, conn: Any, record: KbRecord) -> None:
        """In the transaction that deletes ``record``: cancel its jobs, queue its delete."""
        cancel_jobs(conn, record.id, DELETED)
        self.queue.record(conn, self.queue.new_work(
            record.tenant_id, record.id, KB_DELETE,
            [{"source": record.name, "collection": record.collection}]))

    def settle(self, record: KbRecord) -> None:
        """Once committed: stop a group of it under way, wait for its delete job a while."""
        self.worker.interrupt(record.id)
        ids = [r[0] for r in self.queue.db.all(
            "SELECT id FROM jobs WHERE kb_id = ? AND kind = ? AND status = 'in_progress'",
            (record.id, KB_DELETE))]
        if not self.queue.wait_ended(ids, self.wait):
            log.info("the delete of %s goes on in the background", record.id)

    # ------------------------------------------------------------------- worker
    def run(self, jobs: Sequence[Job], control: JobControl) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for job in jobs:
            if self.catalog.by_id(job.kb_id) is not None:  # its record was never deleted
                outcomes.append((job, "cancelled", "cancelled", "the knowledge base exists",
                                 {}))
                continue
            self.queue.cancel_kb(job.kb_id, DELETED)
            uploads = self.queue.discard_cancelled(job.kb_id)
            self.catalog.drop(job.kb_id, str(job.payload.get("collection") or job.kb_id))
            self.worker.forget(job.kb_id)
            outcomes.append((job, "completed", None, None, {"uploads_removed": uploads}))
        return outcomes

    def failed(self, jobs: Sequence[Job], message: str) -> None:
        for job in jobs:
            log.warning("the delete of %s failed: %s", job.kb_id, message)

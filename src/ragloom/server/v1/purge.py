"""Deleting a file everywhere: ``DELETE /v1/files/{id}`` takes the file out of every
vector store of its tenant, as OpenAI's "Delete a file" does ("remove it from all
vector stores").

The file row, its bytes and its links to vector stores (so ``file_counts``) go in one
transaction of the tables, which also queues one ``file_delete`` job per linked store
(:mod:`.delete_jobs`): the chunks live in another database (the vector stores' file,
or the stores' tables on PostgreSQL), so the worker removes them after that commit,
store by store, and the request waits for it a bounded time. A server killed in
between finds the jobs ``in_progress`` at its next start and runs them; removing a
file's documents again is a no-op, so running one twice is harmless.

Servers before delete jobs recorded such removals in ``oai_purges``; those left by a
kill are finished at start-up (:meth:`FilePurger.finish`).

An ingestion of the file still running meanwhile cannot bring its chunks back: the
ingest worker, finding the link gone when it records the file as completed, removes
what it stored (see :meth:`.ingest.VectorStoreIngestor._finish`).
"""

from __future__ import annotations

import logging

from ragloom.server.v1.collections import VectorStoreCollections
from ragloom.server.v1.db import MetaDB
from ragloom.server.v1.delete_jobs import VectorStoreDeletes

log = logging.getLogger("ragloom.server.openai.purge")


class FilePurger:
    def __init__(self, db: MetaDB, collections: VectorStoreCollections,
                 deletes: VectorStoreDeletes) -> None:
        self.db = db
        self.collections = collections
        self.deletes = deletes

    def delete_file(self, tenant: str, file_id: str) -> list[str]:
        """Delete the file and its links and queue the removal of its chunks from every
        store it was in (one transaction), then wait for it a while; returns those
        stores' ids. The caller checked the file exists."""
        with self.db.write() as conn:
            stores = [r[0] for r in conn.execute(
                "SELECT vs_id FROM oai_vs_files WHERE file_id = ? AND tenant = ?",
                (file_id, tenant)).fetchall()]
            jobs = self.deletes.queue_files(conn, tenant, [(vs_id, file_id)
                                                           for vs_id in stores])
            conn.execute("DELETE FROM oai_vs_files WHERE file_id = ? AND tenant = ?",
                         (file_id, tenant))
            # oai_file_data goes with it (ON DELETE CASCADE).
            conn.execute("DELETE FROM oai_files WHERE id = ? AND tenant = ?",
                         (file_id, tenant))
        if jobs:
            self.deletes.settle(jobs)
        return stores

    def finish(self) -> int:
        """Remove the chunks of every purge an older server recorded and did not finish;
        returns how many purges were done."""
        done = 0
        for row in self.db.rows("SELECT vs_id, file_id FROM oai_purges ORDER BY vs_id"):
            vs_id, file_id = row[0], row[1]
            # A store deleted meanwhile took its chunks with it; opening it would
            # create its collection again.
            if self.db.row("SELECT 1 FROM oai_vector_stores WHERE id = ?", (vs_id,)):
                self.collections.delete_file(vs_id, file_id)
            self.db.execute("DELETE FROM oai_purges WHERE vs_id = ? AND file_id = ?",
                            (vs_id, file_id))
            done += 1
        if done:
            log.info("removed the chunks of deleted files from %d vector store(s)", done)
        return done

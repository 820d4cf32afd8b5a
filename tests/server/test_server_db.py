"""The server's SQL layer: one surface over SQLite and PostgreSQL, schema upgrades of
an existing ``server.db``, and job claims that never hand one job to two workers."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from ragloom.server.auth import Tenant
from ragloom.server.catalog import KbRecord
from ragloom.server.db import SCHEMA, SCHEMA_VERSION, ServerDatabase
from ragloom.server.jobs import JobQueue, JobRequest
from ragloom.server.sql_postgres import translate

TENANT = Tenant(id="t1", name="one")
KB = KbRecord(id="kb_1", tenant_id="t1", name="kb", collection="kb_1", embedder="fake")


def test_translate_turns_placeholders_into_psycopg_ones_outside_literals() -> None:
    assert translate("SELECT * FROM t WHERE a = ? AND b LIKE 'x?%' AND c = ?") == (
        "SELECT * FROM t WHERE a = %s AND b LIKE 'x?%%' AND c = %s")
    assert translate("SELECT 'it''s ?', ?") == "SELECT 'it''s ?', %s"


def test_a_version_1_server_db_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "server.db"
    with sqlite3.connect(path) as conn:
        for statement in SCHEMA:
            conn.execute(statement)
        conn.execute("INSERT INTO jobs (id, tenant_id, kb_id, batch_id, kind, payload, status, "
                     "created, updated) VALUES ('job_old', 't1', 'kb_1', NULL, 'text', "
                     "'{\"source\": \"a\", \"text\": \"x\"}', 'in_progress', 1, 1)")
        conn.execute("PRAGMA user_version = 1")
    database = ServerDatabase(path)
    try:
        queue = JobQueue(database, tmp_path / "files")
        assert [job.id for job in queue.next_group(10)] == ["job_old"]
        assert database.one("PRAGMA user_version") == (SCHEMA_VERSION,)
        assert database.one("SELECT count(*) FROM job_files") == (0,)
    finally:
        database.close()


def _claim_concurrently(make_queue: Any, jobs: int = 40) -> list[list[str]]:
    """Two workers (two queues, two owners) claiming at once; what each got."""
    first, second = make_queue(), make_queue()
    first.submit(TENANT, KB, [JobRequest(kind="text", source=f"s{n}", text="x")
                              for n in range(jobs)])
    taken: list[list[str]] = [[], []]
    start = threading.Barrier(2)

    def work(queue: JobQueue, into: list[str]) -> None:
        start.wait()
        while group := queue.next_group(3):
            into.extend(job.id for job in group)

    threads = [threading.Thread(target=work, args=(queue, into))
               for queue, into in zip((first, second), taken, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return taken


def _check_claims(taken: list[list[str]], jobs: int = 40) -> None:
    every = taken[0] + taken[1]
    assert len(every) == len(set(every)) == jobs  # each job once, none lost


def test_two_workers_on_sqlite_never_claim_the_same_job(tmp_path: Path) -> None:
    database = ServerDatabase(tmp_path / "server.db")
    try:
        _check_claims(_claim_concurrently(lambda: JobQueue(database, tmp_path / "files")))
    finally:
        database.close()


def test_an_expired_lease_is_taken_over_and_a_live_one_is_not(tmp_path: Path) -> None:
    database = ServerDatabase(tmp_path / "server.db")
    try:
        dead = JobQueue(database, tmp_path / "files", lease_seconds=0.2)
        alive = JobQueue(database, tmp_path / "files", lease_seconds=60)
        dead.submit(TENANT, KB, [JobRequest(kind="text", source="a", text="x")])
        assert len(dead.next_group(5)) == 1
        assert alive.next_group(5) == []  # still leased
        import time

        time.sleep(0.3)  # the first owner stopped renewing
        assert [job.source for job in alive.next_group(5)] == ["a"]
        assert dead.next_group(5) == []  # and now it is the second owner's
    finally:
        database.close()


@pytest.fixture
def pg_database(pg_url: str) -> Any:
    database = ServerDatabase(pg_url)
    database.execute("DELETE FROM job_files")
    database.execute("DELETE FROM jobs")
    yield database
    database.close()


def test_two_workers_on_postgresql_never_claim_the_same_job(pg_database: Any, pg_url: str,
                                                            tmp_path: Path) -> None:
    opened: list[ServerDatabase] = []

    def replica() -> JobQueue:  # its own database object and pool, as another process
        opened.append(ServerDatabase(pg_url))
        return JobQueue(opened[-1], tmp_path / "files")

    try:
        _check_claims(_claim_concurrently(replica))
    finally:
        for database in opened:
            database.close()


def test_uploads_wait_in_postgresql_and_leave_with_their_job(pg_database: Any,
                                                             tmp_path: Path) -> None:
    queue = JobQueue(pg_database, tmp_path / "files")
    [job] = queue.submit(TENANT, KB, [JobRequest(kind="file", source="a.txt", data=b"\x00abc")])
    assert job.payload["stored"] and not (tmp_path / "files").exists()
    assert queue.stored_bytes(job) == b"\x00abc"
    queue.finish([(job, "completed", None, None, {})])
    assert queue.stored_bytes(job) is None
    assert queue.get(TENANT, job.id).status == "completed"


def test_vector_store_files_are_claimed_once_and_taken_over_after_the_lease(
        pg_url: str) -> None:
    """A vector store file is a job of the one job table: two replicas never run it at
    once, and one that stopped renewing its lease loses it to the other."""
    import time

    from ragloom.server.v1.ingest import VS_FILE

    first_db, second_db = ServerDatabase(pg_url), ServerDatabase(pg_url)  # two replicas
    try:
        first_db.execute("DELETE FROM jobs")
        first = JobQueue(first_db, Path("unused"), lease_seconds=0.3)
        second = JobQueue(second_db, Path("unused"), lease_seconds=60)
        jobs = first.submit_work("t1", "vs_1", VS_FILE,
                                 [{"file_id": "file-a"}, {"file_id": "file-b"}])
        ids = sorted(j.id for j in jobs)
        assert sorted(j.id for j in first.next_group(10, kinds=[VS_FILE])) == ids
        assert second.next_group(10, kinds=[VS_FILE]) == []  # leased by a live replica
        time.sleep(0.4)  # the first replica stopped renewing
        assert sorted(j.id for j in second.next_group(10, kinds=[VS_FILE])) == ids
        assert first.next_group(10, kinds=[VS_FILE]) == []
    finally:
        first_db.close()
        second_db.close()


def test_a_replica_closes_its_handle_of_a_knowledge_base_another_one_deleted(
        pg_url: str) -> None:
    from ragloom.server.catalog import Catalog, SharedModels

    models = SharedModels("fake:hashing-64", "none", None)
    databases = [ServerDatabase(pg_url), ServerDatabase(pg_url)]
    here, there = (Catalog(db, Path("unused.db"), models, store_url=pg_url)
                   for db in databases)
    try:
        here.prune_seconds = 0.0
        record = here.create(TENANT, "pruned")
        handle = here.open(record)
        handle.store.count()  # type: ignore[attr-defined]  # connects its pool
        assert handle.store._pool is not None  # type: ignore[attr-defined]
        there.delete(TENANT, record.id)
        assert here.find(TENANT, record.id) is None  # read through: gone at once
        other = here.create(TENANT, "kept")
        here.open(other)  # any open prunes what others deleted
        assert record.id not in here.handles and other.id in here.handles
        assert handle.store._pool is None  # type: ignore[attr-defined]
    finally:
        here.close()
        there.close()
        for database in databases:
            database.close()

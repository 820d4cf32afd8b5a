"""Moving an older server's ``openai.sqlite`` into the one server database, once.

Servers before the one database kept the OpenAI-compatible API's tables in a file of
their own beside ``server.db``. At start-up, when that file is there,
:func:`migrate_openai_file` copies every row of it into the server database in one
write transaction (rows already there are kept: running it twice changes nothing),
then renames the old file ``openai.sqlite.migrated`` (kept as a backup, never read
again). A server killed before the rename copies again at its next start, which the
kept rows make harmless; one killed mid-copy rolled the whole copy back.

Files still ``in_progress`` come over as they were; the vector store file jobs are
queued for them when the routes start (see :mod:`.ingest`).
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

from ragloom.server.db import ServerDatabase
from ragloom.server.v1.db import MetaDB

log = logging.getLogger("ragloom.server.openai.migrate")

#: Parents first (foreign keys), with the tables' names in both files.
TABLES = ("oai_files", "oai_file_data", "oai_vector_stores", "oai_vs_files", "oai_batches",
          "oai_responses", "oai_purges", "ls_objects")
BACKUP_SUFFIX = ".migrated"


def migrate_openai_file(meta: MetaDB, old: str | Path) -> int:
    """Copy the rows of the older ``old`` file into ``meta``'s database and rename it;
    returns how many rows were copied (0 when there was nothing to migrate)."""
    old_path = Path(old)
    database: ServerDatabase = meta.database
    if meta.shared or not old_path.is_file() or database.path == ":memory:":
        return 0
    if old_path.resolve() == Path(database.path).resolve():
        return 0
    meta.rows("SELECT 1 FROM oai_files LIMIT 1")  # the tables exist here first
    with sqlite3.connect(old_path) as source:  # the old file's WAL goes into it first
        source.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        present = {r[0] for r in source.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        columns = {table: [r[1] for r in source.execute(f"PRAGMA table_info({table})")]
                   for table in TABLES if table in present}
    copied = 0
    with database.attached(str(old_path), "old_openai"), database.transaction() as conn:
        for table, names in columns.items():
            known = {r[1] for r in conn.execute(f"PRAGMA main.table_info({table})")}
            shared = ", ".join(n for n in names if n in known)
            copied += int(conn.execute(
                f"INSERT OR IGNORE INTO main.{table} ({shared}) "
                f"SELECT {shared} FROM old_openai.{table}").rowcount)
    backup = old_path.with_name(old_path.name + BACKUP_SUFFIX)
    os.replace(old_path, backup)
    for extra in ("-wal", "-shm"):
        Path(f"{old_path}{extra}").unlink(missing_ok=True)
    log.info("moved %d rows of %s into %s; the old file is kept as %s", copied, old_path,
             database.path, backup)
    return copied

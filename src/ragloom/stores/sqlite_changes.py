"""The SQLite store's change log: which chunks other connections changed.

A store object keeps two caches of its collection in memory: the vector matrix and,
once built, the keyword copy. Another store object or process that writes bumps the
collection's ``generation``; without knowing *what* changed, the caches would have to
be reloaded whole (every vector, every text tokenised again) on the next query.

So triggers on ``chunks`` append one row per inserted, deleted or re-written chunk to
``chunk_changes`` (in the writer's transaction: a rolled-back write leaves no row),
and a reader applies the rows past its own high-water mark: it removes those chunk
ids from its caches and re-adds the chunks that still exist, read back from
``chunks``. The work is proportional to the change. The log keeps the last
:data:`KEEP` rows; a reader that fell further behind reloads (the keyword copy in a
background thread, while FTS5 answers).

The table and triggers are created on first open (``IF NOT EXISTS``); a database that
cannot be written simply has no log, and readers fall back to reloading.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

#: Rows of the change log kept; older ones are pruned by writers.
KEEP = 100_000

DDL = (
    """CREATE TABLE IF NOT EXISTS chunk_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        collection_id INTEGER NOT NULL,
        pk INTEGER NOT NULL,
        id TEXT NOT NULL)""",
    "CREATE TRIGGER IF NOT EXISTS chunk_changes_ai AFTER INSERT ON chunks BEGIN "
    "INSERT INTO chunk_changes (collection_id, pk, id) "
    "VALUES (new.collection_id, new.pk, new.id); END",
    "CREATE TRIGGER IF NOT EXISTS chunk_changes_ad AFTER DELETE ON chunks BEGIN "
    "INSERT INTO chunk_changes (collection_id, pk, id) "
    "VALUES (old.collection_id, old.pk, old.id); END",
    "CREATE TRIGGER IF NOT EXISTS chunk_changes_au AFTER UPDATE OF text, vector ON chunks "
    "BEGIN INSERT INTO chunk_changes (collection_id, pk, id) "
    "VALUES (new.collection_id, new.pk, new.id); END",
)
_NAMES = ("chunk_changes", "chunk_changes_ai", "chunk_changes_ad", "chunk_changes_au")


def ensure_log(conn: sqlite3.Connection) -> bool:
    """Create the change log if missing (outside any transaction); False if there is
    none and it cannot be made (a read-only file)."""
    present = {row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE name IN (?, ?, ?, ?)", _NAMES)}
    if present == set(_NAMES):
        return True
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in DDL:
                conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    except sqlite3.Error:
        return False
    return True


def high_water(conn: sqlite3.Connection) -> int:
    """The last change-log sequence number handed out (0 before any)."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'chunk_changes'").fetchone()
    return int(row[0]) if row else 0


def prune(conn: sqlite3.Connection) -> None:
    """Drop log rows older than the last :data:`KEEP` (inside a write transaction)."""
    conn.execute("DELETE FROM chunk_changes WHERE seq <= ?", (high_water(conn) - KEEP,))


@dataclass(frozen=True)
class Changes:
    """Chunks changed after a high-water mark, and the chunks' rows as they are now."""

    removed: list[str]  # every changed chunk id: take them out first
    current: list[tuple[int, str, str, bytes]]  # (pk, id, text, vector) still present
    seq: int  # the high-water mark these bring a cache to


def changes_since(
    conn: sqlite3.Connection, cid: int, seq: int, limit: int | None = None
) -> Changes | None:
    """What changed in collection ``cid`` after ``seq``, in the caller's read snapshot;
    None if the log no longer reaches back that far (or holds more than ``limit``
    changed chunks)."""
    last = high_water(conn)
    if last <= seq:
        return Changes([], [], seq)
    oldest = conn.execute("SELECT MIN(seq) FROM chunk_changes").fetchone()[0]
    if oldest is None or int(oldest) > seq + 1:
        return None
    rows: Sequence[tuple[int, str]] = conn.execute(
        "SELECT DISTINCT pk, id FROM chunk_changes WHERE seq > ? AND collection_id = ?",
        (seq, cid)).fetchall()
    if limit is not None and len(rows) > limit:
        return None
    current = conn.execute(
        "SELECT c.pk, c.id, c.text, c.vector FROM json_each(?) AS j CROSS JOIN chunks AS c "
        "ON c.pk = j.value WHERE c.collection_id = ?",
        (_json_ints(sorted({pk for pk, _ in rows})), cid)).fetchall()
    return Changes(sorted({chunk_id for _, chunk_id in rows}), current, last)


def _json_ints(values: Sequence[int]) -> str:
    return "[" + ",".join(str(int(value)) for value in values) + "]"

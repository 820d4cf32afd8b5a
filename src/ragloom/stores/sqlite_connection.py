"""Opening the SQLite store's file: pragmas, the schema at its current version.

:func:`open_store_file` is what :class:`~ragloom.stores.sqlite.SqliteVectorStore` runs
on first use: it connects, sets WAL mode, brings an older file's schema up to
:data:`~ragloom.stores.sqlite_schema.SCHEMA_VERSION` in one transaction and makes
sure the change log exists. A file this ragloom cannot use is a :class:`StoreError`
that names it, and the connection is closed again.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from ragloom.errors import StoreError
from ragloom.stores.sqlite_changes import ensure_log
from ragloom.stores.sqlite_schema import (
    META_INDEX_VERSION_KEY,
    REBUILD_META,
    SCHEMA,
    SCHEMA_VERSION,
)


def open_store_file(path: str | os.PathLike[str]) -> tuple[sqlite3.Connection, bool]:
    """A connection to the store file at ``path`` (``":memory:"`` for none) with its
    schema current, and whether the file has the change log."""
    path = str(path)
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    try:
        # One connection shared by a store's threads, serialised by the store's lock;
        # transactions are begun explicitly (isolation_level=None).
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None,
                               check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the SQLite store {path!r}: {exc}") from exc
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        _ensure_schema(conn, path)
        logged = ensure_log(conn)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(
            f"{path!r} is not a usable ragloom SQLite store ({exc}); "
            "point ragloom at another file or remove this one"
        ) from exc
    except BaseException:
        conn.close()
        raise
    return conn, logged


def _ensure_schema(conn: sqlite3.Connection, path: str) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path!r} was written by a newer ragloom (schema {version}; this one "
            f"reads {SCHEMA_VERSION}); upgrade ragloom to open it"
        )
    if version == SCHEMA_VERSION and _meta_index_current(conn):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in SCHEMA:
            conn.execute(statement)
        if not _meta_index_current(conn):
            for statement in REBUILD_META:
                conn.execute(statement)
            conn.execute("INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)",
                         (META_INDEX_VERSION_KEY, sqlite3.sqlite_version))
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _meta_index_current(conn: sqlite3.Connection) -> bool:
    """Whether ``chunk_meta`` was filled by this SQLite version's json_tree (another
    version's may spell paths differently)."""
    try:
        row = conn.execute("SELECT value FROM store_meta WHERE key = ?",
                           (META_INDEX_VERSION_KEY,)).fetchone()
    except sqlite3.OperationalError:  # schema 1: no such table yet
        return False
    return row is not None and row[0] == sqlite3.sqlite_version


class SqliteDatabase:
    """One store file shared by many collections: one connection and one lock.

    A server hands each knowledge base (or vector store) a view of it,
    ``SqliteVectorStore(path, collection, database=db)``, so 300 collections hold one
    connection (three file descriptors in WAL mode), not 300. The views serialise
    on :attr:`lock` (a SQLite connection runs one transaction at a time). The file
    opens on first use; :meth:`close` closes it and the next use reopens it.

    :attr:`dropped` names the collections dropped through any view: a view never
    creates one of them again (a write raises
    :class:`~ragloom.errors.CollectionDroppedError`).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        self.lock = threading.RLock()
        self.dropped: set[str] = set()
        self._conn: sqlite3.Connection | None = None
        self._logged = False

    def connect(self) -> tuple[sqlite3.Connection, bool]:
        """The open connection (opened now if needed) and whether it has the change log."""
        with self.lock:
            if self._conn is None:
                self._conn, self._logged = open_store_file(self.path)
            return self._conn, self._logged

    @property
    def is_open(self) -> bool:
        return self._conn is not None

    def close(self) -> None:
        with self.lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


__all__ = ["SqliteDatabase", "open_store_file"]

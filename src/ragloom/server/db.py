"""The server's own SQLite database (``server.db``): tenants, keys, knowledge bases,
jobs and chat sessions. Knowledge base content lives in the store's file beside it.

One connection, shared by the threads of one process under a lock: every statement
here is small (a row or a few), so serialising them costs microseconds, and the
store's database, where the heavy reads happen, is a different file. WAL mode and a
30 s busy timeout let another process (``ragloom keys create``) write meanwhile
without anyone seeing "database is locked".
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragloom.errors import StoreError

SCHEMA_VERSION = 1
SCHEMA = (
    """CREATE TABLE IF NOT EXISTS tenants (
        id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, created REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS api_keys (
        id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id),
        key_hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, created REAL NOT NULL,
        revoked INTEGER NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS knowledge_bases (
        id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, name TEXT NOT NULL,
        collection TEXT NOT NULL UNIQUE, embedder TEXT NOT NULL, chunking TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}', created REAL NOT NULL,
        UNIQUE (tenant_id, name))""",
    """CREATE TABLE IF NOT EXISTS jobs (
        id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, kb_id TEXT NOT NULL,
        batch_id TEXT, kind TEXT NOT NULL, payload TEXT NOT NULL,
        status TEXT NOT NULL, reason TEXT, message TEXT, result TEXT,
        created REAL NOT NULL, updated REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS jobs_status ON jobs (status, created)",
    "CREATE INDEX IF NOT EXISTS jobs_batch ON jobs (batch_id)",
    """CREATE TABLE IF NOT EXISTS sessions (
        id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, title TEXT NOT NULL,
        knowledge_bases TEXT NOT NULL, created REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS session_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        role TEXT NOT NULL, content TEXT NOT NULL, extra TEXT NOT NULL DEFAULT '{}',
        created REAL NOT NULL)""",
)


def new_id(prefix: str) -> str:
    """``prefix_`` and 24 random hex digits: unguessable, so ids leak nothing."""
    return f"{prefix}_{secrets.token_hex(12)}"


class ServerDatabase:
    """``ServerDatabase(path)``: small reads and writes on the server's tables."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA busy_timeout = 30000")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(f"{self.path} was written by a newer ragloom server "
                                 f"(schema {version}); upgrade ragloom")
            if version < SCHEMA_VERSION:
                conn.execute("BEGIN IMMEDIATE")
                for statement in SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the server database {self.path}: {exc}") from exc
        self._conn = conn
        return conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``), rolled back on any error."""
        with self._lock:
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """One write statement in its own transaction; returns the rows changed."""
        with self.transaction() as conn:
            return conn.execute(sql, params).rowcount

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        with self._lock:
            row: tuple[Any, ...] | None = self._connect().execute(sql, params).fetchone()
            return row

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self._connect().execute(sql, params).fetchall())

    def integrity_check(self) -> str:
        row = self.one("PRAGMA integrity_check")
        return str(row[0]) if row else "no answer"


def now() -> float:
    return time.time()

"""The SQLite tables of the OpenAI-compatible API: files, vector stores, their file
links, batches and stored responses, every row owned by a tenant.

Short transactions on WAL: each call opens its thread's connection (kept per
thread), runs one ``BEGIN IMMEDIATE`` for writes, and commits at once; a 30 s busy
timeout makes writers queue instead of failing with "database is locked".
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS oai_files (
    id TEXT PRIMARY KEY, tenant TEXT NOT NULL, filename TEXT NOT NULL,
    purpose TEXT NOT NULL, bytes INTEGER NOT NULL, created_at INTEGER NOT NULL,
    expires_at INTEGER);
CREATE INDEX IF NOT EXISTS oai_files_tenant ON oai_files (tenant);
CREATE TABLE IF NOT EXISTS oai_file_data (
    id TEXT PRIMARY KEY REFERENCES oai_files (id) ON DELETE CASCADE, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS oai_vector_stores (
    id TEXT PRIMARY KEY, tenant TEXT NOT NULL, name TEXT, created_at INTEGER NOT NULL,
    last_active_at INTEGER NOT NULL, metadata TEXT NOT NULL, expires_after TEXT,
    description TEXT);
CREATE INDEX IF NOT EXISTS oai_vs_tenant ON oai_vector_stores (tenant);
CREATE TABLE IF NOT EXISTS oai_vs_files (
    vs_id TEXT NOT NULL REFERENCES oai_vector_stores (id) ON DELETE CASCADE,
    file_id TEXT NOT NULL, tenant TEXT NOT NULL, status TEXT NOT NULL,
    attributes TEXT NOT NULL, chunking TEXT NOT NULL, created_at INTEGER NOT NULL,
    last_error TEXT, usage_bytes INTEGER NOT NULL DEFAULT 0, batch_id TEXT,
    PRIMARY KEY (vs_id, file_id));
CREATE INDEX IF NOT EXISTS oai_vs_files_status ON oai_vs_files (status);
CREATE TABLE IF NOT EXISTS oai_batches (
    id TEXT PRIMARY KEY, tenant TEXT NOT NULL, vs_id TEXT NOT NULL,
    created_at INTEGER NOT NULL, cancelled INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS oai_responses (
    id TEXT PRIMARY KEY, tenant TEXT NOT NULL, created_at INTEGER NOT NULL,
    body TEXT NOT NULL, conversation TEXT NOT NULL, input_items TEXT NOT NULL);
"""


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class MetaDB:
    """Thread-safe access to the tables above (one connection per thread)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._local = threading.local()
        self._init_lock = threading.Lock()
        self._ready = False
        # ":memory:" is one database per connection; tests share one through a URI.
        self._uri = path == ":memory:"
        if self._uri:
            self.path = f"file:ragloom-oai-{id(self)}?mode=memory&cache=shared"
            self._keeper: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        if not self._uri:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None,
                               check_same_thread=False, uri=self._uri)
        conn.execute("PRAGMA busy_timeout = 30000")
        conn.execute("PRAGMA foreign_keys = ON")
        if not self._uri:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        with self._init_lock:
            if not self._ready:
                if self._uri:
                    self._keeper = conn
                conn.executescript(SCHEMA)
                self._ready = True
        self._local.conn = conn
        return conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        conn = self._connect()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        conn = self._connect()
        conn.row_factory = sqlite3.Row
        return list(conn.execute(sql, params).fetchall())

    def row(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        found = self.rows(sql, params)
        return found[0] if found else None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        with self.write() as conn:
            return conn.execute(sql, params).rowcount

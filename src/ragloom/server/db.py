"""The server's own database: tenants, keys, knowledge bases, jobs (with the bytes
they wait on, on PostgreSQL) and chat sessions. ``ServerDatabase(path)`` is the SQLite
file ``server.db`` (knowledge base content lives in the store's file beside it);
``ServerDatabase("postgresql://...")`` is the same tables in PostgreSQL
(:mod:`ragloom.server.sql_postgres`), shared by every replica. Both answer the small
surface the server uses: ``transaction`` / ``execute`` / ``one`` / ``all``, with
``?`` placeholders.

One database for the whole server: the OpenAI-compatible API's tables (files,
vector stores, their links, stored responses) live in the same file, registered by
their component with :meth:`ServerDatabase.ensure_component` (each set of tables has
its own version in ``schema_versions``, as on PostgreSQL).

Connections, as datasette's ``database.py`` has them: one writer connection, taken
in turns under a lock (so SQLite sees one writer and nobody waits on "database is
locked"), and a read connection per thread (WAL: reads never wait for the writer).
A thread inside a write transaction reads on the writer's connection, so it sees its
own writes. WAL mode and a 30 s busy timeout let another process (``ragloom keys
create``) write meanwhile.
"""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol

from ragloom.errors import StoreError
from ragloom.server.sql_postgres import PostgresDatabase, is_postgres_url

SCHEMA_VERSION = 2
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
#: Version 2: job leases (which replica runs a job, until when) and uploaded bytes kept
#: in the database (PostgreSQL: a replica may run a job another one accepted).
MIGRATIONS: dict[int, tuple[str, ...]] = {
    2: ("ALTER TABLE jobs ADD COLUMN lease_owner TEXT",
        "ALTER TABLE jobs ADD COLUMN lease_until REAL",
        """CREATE TABLE IF NOT EXISTS job_files (
            job_id TEXT PRIMARY KEY, data BLOB NOT NULL)"""),
}
#: PostgreSQL's tables started at version 2's layout (leases included), so nothing to
#: migrate yet; a version 3 adds its steps here and to ``MIGRATIONS``.
POSTGRES_MIGRATIONS: dict[int, tuple[str, ...]] = {}
POSTGRES_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS tenants (
        id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, created DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS api_keys (
        id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL REFERENCES tenants(id),
        key_hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, created DOUBLE PRECISION NOT NULL,
        revoked INTEGER NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS knowledge_bases (
        id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, name TEXT NOT NULL,
        collection TEXT NOT NULL UNIQUE, embedder TEXT NOT NULL, chunking TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}', created DOUBLE PRECISION NOT NULL,
        UNIQUE (tenant_id, name))""",
    """CREATE TABLE IF NOT EXISTS jobs (
        id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, kb_id TEXT NOT NULL,
        batch_id TEXT, kind TEXT NOT NULL, payload TEXT NOT NULL,
        status TEXT NOT NULL, reason TEXT, message TEXT, result TEXT,
        created DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL,
        lease_owner TEXT, lease_until DOUBLE PRECISION)""",
    "CREATE INDEX IF NOT EXISTS jobs_status ON jobs (status, created)",
    "CREATE INDEX IF NOT EXISTS jobs_batch ON jobs (batch_id)",
    """CREATE TABLE IF NOT EXISTS job_files (
        job_id TEXT PRIMARY KEY, data BYTEA NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS sessions (
        id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, title TEXT NOT NULL,
        knowledge_bases TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS session_messages (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        role TEXT NOT NULL, content TEXT NOT NULL, extra TEXT NOT NULL DEFAULT '{}',
        created DOUBLE PRECISION NOT NULL)""",
)


class SqlCursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class SqlConnection(Protocol):
    """A connection inside one transaction (``sqlite3.Connection`` is one)."""

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...

    def executemany(self, sql: str, seq: Any, /) -> Any: ...


class SqlDatabase(Protocol):
    """The SQL surface the server runs: both the SQLite files and PostgreSQL offer it."""

    dialect: str

    def transaction(self) -> AbstractContextManager[Any]: ...

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int: ...

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def close(self) -> None: ...


class _Reader:
    """A thread's read connection, closed when the thread (its only holder) ends."""

    __slots__ = ("__weakref__", "conn")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()


def new_id(prefix: str) -> str:
    """``prefix_`` and 24 random hex digits: unguessable, so ids leak nothing."""
    return f"{prefix}_{secrets.token_hex(12)}"


class ServerDatabase:
    """``ServerDatabase(path)``: small reads and writes on the server's tables, in a
    SQLite file or, for a ``postgresql://`` URL, in PostgreSQL."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._local = threading.local()
        self._readers: weakref.WeakSet[_Reader] = weakref.WeakSet()
        self._components: set[str] = set()
        self._pg = (PostgresDatabase(self.path, POSTGRES_SCHEMA, component="server",
                                     version=SCHEMA_VERSION, migrations=POSTGRES_MIGRATIONS)
                    if is_postgres_url(self.path) else None)
        self.dialect = "postgresql" if self._pg is not None else "sqlite"

    @property
    def shared(self) -> bool:
        """Whether other server processes (replicas) may use these tables too."""
        return self._pg is not None

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
            if version and conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                                        "AND name = 'jobs'").fetchone() is None:
                version = 0  # a file of other tables only (the OpenAI API's, before 0.x)
            if version > SCHEMA_VERSION:
                raise StoreError(f"{self.path} was written by a newer ragloom server "
                                 f"(schema {version}); upgrade ragloom")
            if version < SCHEMA_VERSION:
                conn.execute("BEGIN IMMEDIATE")
                if version:
                    version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version < 1:
                    for statement in SCHEMA:
                        conn.execute(statement)
                for step in range(max(version, 1) + 1, SCHEMA_VERSION + 1):
                    for statement in MIGRATIONS[step]:
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the server database {self.path}: {exc}") from exc
        self._conn = conn
        return conn

    def close(self) -> None:
        if self._pg is not None:
            self._pg.close()
        with self._lock:
            for reader in list(self._readers):
                reader.conn.close()
            self._readers = weakref.WeakSet()
            self._local = threading.local()
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _reader(self) -> sqlite3.Connection | None:
        """This thread's read connection; None: read on the writer's (an in-memory
        database, or this thread is inside a write transaction)."""
        if self.path == ":memory:" or bool(getattr(self._local, "writing", 0)):
            return None
        held: _Reader | None = getattr(self._local, "reader", None)
        if held is not None:
            return held.conn
        with self._lock:
            self._connect()  # the schema exists before anyone reads
            try:
                conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None,
                                       check_same_thread=False)
                conn.execute("PRAGMA busy_timeout = 30000")
                conn.execute("PRAGMA foreign_keys = ON")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot open the server database {self.path}: {exc}"
                                 ) from exc
            held = _Reader(conn)
            self._readers.add(held)
        # Only this thread holds it: it is closed when the thread ends.
        self._local.reader = held
        return conn

    def _read(self, sql: str, params: Sequence[Any], *, named: bool = False,
              first: bool = False) -> list[Any]:
        reader = self._reader()
        if reader is None:
            with self._lock:
                return self._fetch(self._connect(), sql, params, named, first)
        return self._fetch(reader, sql, params, named, first)

    @staticmethod
    def _fetch(conn: sqlite3.Connection, sql: str, params: Sequence[Any], named: bool,
               first: bool) -> list[Any]:
        cursor = conn.cursor()
        if named:
            cursor.row_factory = sqlite3.Row
        try:
            cursor.execute(sql, params)
            if first:
                row = cursor.fetchone()
                return [] if row is None else [row]
            return list(cursor.fetchall())
        finally:
            cursor.close()

    def ensure_component(self, component: str, statements: Sequence[str], version: int, *,
                         columns: Sequence[tuple[str, str, str]] = ()) -> None:
        """Create another component's tables in this database (once per process):
        ``statements`` (``IF NOT EXISTS``), then each missing ``(table, column, type)``
        of ``columns``; its version is kept in ``schema_versions``, and a newer one
        than ``version`` is refused."""
        if component in self._components or self._pg is not None:
            return
        with self.transaction() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY "
                         "KEY, version INTEGER NOT NULL)")
            found = conn.execute("SELECT version FROM schema_versions WHERE component = ?",
                                 (component,)).fetchone()
            if found is not None and found[0] > version:
                raise StoreError(
                    f"{self.path} holds the {component} tables of schema version {found[0]}, "
                    f"written by a newer ragloom; this one knows version {version} at most. "
                    "Upgrade ragloom or use another --db.")
            for statement in statements:
                conn.execute(statement)
            for table, column, kind in columns:
                known = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
                if column not in known:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            conn.execute("INSERT INTO schema_versions (component, version) VALUES (?, ?) "
                         "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                         (component, version))
        self._components.add(component)

    @contextmanager
    def transaction(self) -> Iterator[SqlConnection]:
        """One write transaction (``BEGIN IMMEDIATE``), rolled back on any error."""
        if self._pg is not None:
            with self._pg.transaction() as pg_conn:
                yield pg_conn
            return
        with self._lock:
            conn = self._connect()
            depth = getattr(self._local, "writing", 0)
            if depth:  # nested in this thread's transaction: part of it
                yield conn
                return
            conn.execute("BEGIN IMMEDIATE")
            self._local.writing = 1
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            finally:
                self._local.writing = 0
            conn.execute("COMMIT")

    @contextmanager
    def attached(self, path: str, alias: str) -> Iterator[None]:
        """Another SQLite file attached to the writer's connection as ``alias`` (to copy
        its rows in, see :mod:`ragloom.server.v1.migrate`)."""
        with self._lock:
            conn = self._connect()
            conn.execute(f"ATTACH DATABASE ? AS {alias}", (path,))
            try:
                yield
            finally:
                conn.execute(f"DETACH DATABASE {alias}")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """One write statement in its own transaction; returns the rows changed."""
        with self.transaction() as conn:
            return int(conn.execute(sql, params).rowcount)

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        if self._pg is not None:
            found: tuple[Any, ...] | None = self._pg.one(sql, params)
            return found
        found_rows = self._read(sql, params, first=True)
        return tuple(found_rows[0]) if found_rows else None

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if self._pg is not None:
            return self._pg.all(sql, params)
        return self._read(sql, params)

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Like :meth:`all`, with rows that also answer by column name."""
        if self._pg is not None:
            return self._pg.all(sql, params)
        return self._read(sql, params, named=True)

    def integrity_check(self) -> str:
        if self._pg is not None:  # PostgreSQL checks its own pages; the tables answer
            self._pg.one("SELECT count(*) FROM jobs")
            return "ok"
        row = self.one("PRAGMA integrity_check")
        return str(row[0]) if row else "no answer"


def now() -> float:
    return time.time()

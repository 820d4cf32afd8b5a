"""The server's tables on PostgreSQL, behind the same small surface as its SQLite files
(``transaction`` / ``execute`` / ``one`` / ``all``), so several ``ragloom serve``
processes on one database share every tenant, key, job, session and file.

What differs from SQLite, and how it is bridged:

- placeholders: the server's SQL is written with ``?``; :func:`translate` turns them
  into psycopg's ``%s`` (and doubles a literal ``%``).
- ``BEGIN IMMEDIATE``: SQLite lets one writer in at a time, and the server's
  check-then-insert steps (a tenant by name, a knowledge base name) rely on it. Every
  write transaction here takes one transaction-scoped advisory lock first, so writes
  from all replicas take turns the same way; reads never wait. The statements are a
  row or a few, so the lock is held for milliseconds.
- nesting: the SQLite database is one connection per process under a re-entrant lock,
  so a read inside a transaction sees that transaction. Here a thread that holds a
  transaction reuses its connection for every call until it ends.
- rows answer by position and by column name (like ``sqlite3.Row``); ``numeric``
  sums come back as ``int`` and ``bytea`` as ``bytes``.
- DDL is written per dialect by the tables' owners (identity columns, ``bytea``,
  ``double precision``); tables live in their own schema (``ragloom_server``), never
  beside the knowledge bases' tables.
- schema versions: SQLite keeps one in ``PRAGMA user_version``; here the table
  ``ragloom_server.schema_versions`` keeps one per set of tables (``component``:
  ``server``, ``openai``). Opening tables of a newer version than the code knows is
  refused with a clear error (an older replica must not write tables it does not
  understand); older ones are upgraded in place by the owner's migrations, in the
  same locked transaction that creates missing tables. Tables created before versions
  were kept are taken as the layout the code's DDL describes (PostgreSQL support
  started at those layouts) and stamped with the code's version.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from ragloom.errors import MissingDependencyError, StoreError

SCHEMA_NAME = "ragloom_server"
#: Key of the advisory lock every write transaction takes (one writer at a time). Each
#: set of tables has its own (the server's, the OpenAI-compatible ones), as each had its
#: own SQLite file: a write to one never waits for, or inside, a write to the other.
WRITE_LOCK = 7238911
#: Key of the lock held while tables are created (two replicas starting at once).
DDL_LOCK = 7238912
VERSIONS_DDL = """CREATE TABLE IF NOT EXISTS schema_versions (
    component TEXT PRIMARY KEY, version INTEGER NOT NULL, updated DOUBLE PRECISION NOT NULL)"""


def is_postgres_url(value: str) -> bool:
    return value.split(":", 1)[0].lower().split("+", 1)[0] in ("postgresql", "postgres")


def translate(sql: str) -> str:
    """SQLite-style ``?`` placeholders as psycopg's ``%s``, outside string literals."""
    out: list[str] = []
    quoted = False
    for char in sql:
        if char == "'":
            quoted = not quoted
        if char == "%":
            out.append("%%")
        elif char == "?" and not quoted:
            out.append("%s")
        else:
            out.append(char)
    return "".join(out)


class Row(tuple[Any, ...]):
    """A result row readable by position and by column name."""

    _index: dict[str, int]

    def __new__(cls, values: Sequence[Any], index: dict[str, int]) -> Row:
        row = super().__new__(cls, [_plain(v) for v in values])
        row._index = index
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return super().__getitem__(self._index[key])
        return super().__getitem__(key)

    def keys(self) -> list[str]:
        return list(self._index)


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, memoryview):
        return bytes(value)
    return value


def _row_factory(cursor: Any) -> Any:
    names = [column.name for column in cursor.description or ()]
    index = {name: i for i, name in enumerate(names)}

    def make(values: Sequence[Any]) -> Row:
        return Row(values, index)

    return make


class PgCursor:
    """What ``execute`` returns inside a transaction: ``fetchone``, ``fetchall``, ``rowcount``."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    @property
    def rowcount(self) -> int:
        return int(self._cursor.rowcount)

    def fetchone(self) -> Any:
        return self._cursor.fetchone()

    def fetchall(self) -> list[Any]:
        return list(self._cursor.fetchall())


class PgConnection:
    """A connection inside one transaction, taking the server's ``?`` SQL."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> PgCursor:
        return PgCursor(self._conn.execute(translate(sql), tuple(params)))

    def executemany(self, sql: str, seq: Sequence[Sequence[Any]]) -> PgCursor:
        cursor = self._conn.cursor()
        rows = [tuple(p) for p in seq]
        if rows:
            cursor.executemany(translate(sql), rows)
        return PgCursor(cursor)


def _psycopg() -> tuple[Any, Any]:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        raise MissingDependencyError("psycopg", "pgvector",
                                     "a server on PostgreSQL (ragloom serve --db postgresql://...)"
                                     ) from exc
    return psycopg, psycopg_pool


class PostgresDatabase:
    """``PostgresDatabase(dsn, ddl, component=..., version=...)``: a pool of connections
    whose ``search_path`` is the server's schema; ``ddl`` (``CREATE ... IF NOT EXISTS``
    statements) runs once, under a lock, when the pool opens, after the tables'
    recorded version is checked (see the module) and before ``migrations`` (version ->
    statements that bring the tables from the version before to it; write them so they
    also pass on tables the DDL just created, e.g. ``ADD COLUMN IF NOT EXISTS``).
    Nothing connects before the first call."""

    dialect = "postgresql"

    def __init__(self, dsn: str, ddl: Sequence[str], *, component: str, version: int,
                 migrations: Mapping[int, Sequence[str]] | None = None,
                 pool_size: int = 8, lock_key: int = WRITE_LOCK) -> None:
        from ragloom.stores.factory import parse_location

        # The store's own options (?index=hnsw) are not libpq's: leave them out.
        self.dsn = parse_location(dsn).target
        self._ddl = tuple(ddl)
        self.component = component
        self.version = version
        self._migrations = dict(migrations or {})
        self._lock_key = lock_key
        self._pool_size = pool_size
        self._pool: Any = None
        self._lock = threading.Lock()
        self._local = threading.local()

    def _where(self) -> str:
        from ragloom.stores.factory import redact

        return redact(self.dsn)

    def _connection_pool(self) -> Any:
        with self._lock:
            if self._pool is not None:
                return self._pool
            psycopg, psycopg_pool = _psycopg()

            def configure(conn: Any) -> None:
                conn.execute(f"SET search_path TO {SCHEMA_NAME}")
                conn.row_factory = _row_factory

            pool = psycopg_pool.ConnectionPool(
                self.dsn, min_size=1, max_size=self._pool_size, open=False,
                kwargs={"autocommit": True}, configure=configure)
            try:
                pool.open(wait=True, timeout=30.0)
                with pool.connection() as conn, conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (DDL_LOCK,))
                    conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA_NAME}")
                    conn.execute(f"SET LOCAL search_path TO {SCHEMA_NAME}")
                    self._create_or_upgrade(conn)
            except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
                pool.close()
                raise StoreError(f"cannot open the server database at {self._where()}: {exc}. "
                                 "Check the URL and that PostgreSQL runs.") from exc
            except BaseException:
                pool.close()
                raise
            self._pool = pool
            return pool

    def _create_or_upgrade(self, conn: Any) -> None:
        """Check the recorded version, create missing tables, migrate, record (one
        transaction, under the DDL lock)."""
        conn.execute(VERSIONS_DDL)
        row = conn.execute("SELECT version FROM schema_versions WHERE component = %s",
                           (self.component,)).fetchone()
        stored = int(row[0]) if row is not None else None
        if stored is not None and stored > self.version:
            raise StoreError(
                f"the server database at {self._where()} holds {self.component} tables of "
                f"schema version {stored}, written by a newer ragloom; this one knows "
                f"version {self.version} at most. Upgrade ragloom (on every replica) or "
                "point --db at another database.")
        for statement in self._ddl:
            conn.execute(statement)
        for step in range((self.version if stored is None else stored) + 1, self.version + 1):
            for statement in self._migrations.get(step, ()):
                conn.execute(statement)
        if stored != self.version:
            conn.execute(
                "INSERT INTO schema_versions (component, version, updated) "
                "VALUES (%s, %s, %s) ON CONFLICT (component) DO UPDATE SET "
                "version = excluded.version, updated = excluded.updated",
                (self.component, self.version, time.time()))

    def schema_version(self) -> int | None:
        """The version recorded for these tables (after opening, the code's)."""
        row = self.one("SELECT version FROM schema_versions WHERE component = ?",
                       (self.component,))
        return int(row[0]) if row is not None else None

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        psycopg, _ = _psycopg()
        try:
            with self._connection_pool().connection() as conn:
                yield conn
        except psycopg.Error as exc:
            raise StoreError(f"the server database at {self._where()} failed: {exc}") from exc

    @contextmanager
    def transaction(self) -> Iterator[PgConnection]:
        """One write transaction; writes of every replica take turns (see the module)."""
        held = getattr(self._local, "conn", None)
        if held is not None:  # nested: part of the transaction already open
            yield PgConnection(held)
            return
        with self._connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
            self._local.conn = conn
            try:
                yield PgConnection(conn)
            finally:
                self._local.conn = None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        with self.transaction() as conn:
            return conn.execute(sql, params).rowcount

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self._connection() as conn:
            row = conn.execute(translate(sql), tuple(params)).fetchone()
            return row

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._connection() as conn:
            return list(conn.execute(translate(sql), tuple(params)).fetchall())

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

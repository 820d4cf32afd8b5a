"""The server's open collections: one bounded, least-recently-used cache of handles
shared by ``/api`` (knowledge bases) and ``/v1`` (vector stores).

A handle is whatever a collection keeps open: the store view (its in-memory
vectors and keyword index) and, through it, a connection or a pool. Store views of
one SQLite file share one :class:`~ragloom.stores.sqlite_connection.SqliteDatabase`
(one connection for every collection in the file), so file descriptors do not grow
with the number of collections; the bound here limits the memory their indexes
take. On PostgreSQL the views share one pool per database
(:class:`~ragloom.stores.pgvector_pool.PgDatabase`); on Milvus each holds a
client. Above ``limit`` the least recently
used handle is closed (:class:`~ragloom.protocols.CollectionHandle`); it reopens on
its next use.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ragloom.protocols import CollectionHandle

#: How many collections a server keeps open by default (``--max-open-collections``).
DEFAULT_MAX_OPEN = 64

H = TypeVar("H")


class HandleCache:
    """Keyed handles, at most ``limit`` open; ``close`` of each evicted handle's store."""

    def __init__(self, limit: int = DEFAULT_MAX_OPEN) -> None:
        if limit < 1:
            raise ValueError("the handle limit must be at least 1")
        self.limit = limit
        self._handles: OrderedDict[str, Any] = OrderedDict()
        self._databases: dict[str, Any] = {}
        self._lock = threading.RLock()  # factories ask for the shared databases
        #: How many handles were closed to keep under the limit (for tests, metrics).
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._handles)

    def __contains__(self, key: str) -> bool:
        return key in self._handles

    def get(self, key: str, factory: Callable[[], H]) -> H:
        """The handle under ``key``, made by ``factory`` (under the cache's lock) when
        absent; the least recently used ones beyond the limit are closed."""
        with self._lock:
            handle = self._handles.get(key)
            if handle is None:
                handle = factory()
                self._handles[key] = handle
            self._handles.move_to_end(key)
            evicted = []
            while len(self._handles) > self.limit:
                evicted.append(self._handles.popitem(last=False)[1])
                self.evictions += 1
        for old in evicted:
            close_handle(old)
        result: H = handle
        return result

    def pop(self, key: str) -> Any:
        """Take a handle out (not closed: the caller drops or closes it), or None."""
        with self._lock:
            return self._handles.pop(key, None)

    def names(self) -> list[str]:
        with self._lock:
            return list(self._handles)

    def sqlite_database(self, path: str | Path) -> Any:
        """The one shared connection of a SQLite store file (made on first use)."""
        from ragloom.stores.sqlite_connection import SqliteDatabase

        key = str(path)
        with self._lock:
            database = self._databases.get(key)
            if database is None:
                database = self._databases[key] = SqliteDatabase(key)
            return database

    def pg_database(self, url: str) -> Any:
        """The one shared connection pool of a PostgreSQL database (made on first use)."""
        from ragloom.stores.factory import parse_location
        from ragloom.stores.pgvector_pool import PgDatabase

        dsn = parse_location(url).target
        with self._lock:
            database = self._databases.get(dsn)
            if database is None:
                database = self._databases[dsn] = PgDatabase(dsn)
            return database

    def close(self) -> None:
        """Close every handle and every shared database."""
        with self._lock:
            handles = list(self._handles.values())
            self._handles.clear()
            databases = list(self._databases.values())
        for handle in handles:
            close_handle(handle)
        for database in databases:
            database.close()


def store_of(handle: Any) -> Any:
    """The store behind a handle (a knowledge base's ``store``, or the store itself)."""
    from ragloom.knowledge_base import VectorKnowledgeBase

    return handle.store if isinstance(handle, VectorKnowledgeBase) else handle


def close_handle(handle: Any) -> None:
    store = store_of(handle)
    if isinstance(store, CollectionHandle):
        store.close()


__all__ = ["DEFAULT_MAX_OPEN", "HandleCache", "close_handle", "store_of"]

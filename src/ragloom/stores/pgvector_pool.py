"""One PostgreSQL connection pool shared by many :class:`~ragloom.stores.pgvector.PgVectorStore`
views: a server with 300 knowledge bases on one database holds one pool, not 300.

``PgVectorStore(dsn, collection, database=PgDatabase(dsn))``: the view takes its
connections from the shared pool; its :meth:`close` lets go of the view's state
only, :meth:`PgDatabase.close` closes the pool (the next use opens it again).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class PgDatabase:
    def __init__(self, dsn: str, *, pool_size: int = 10) -> None:
        self.dsn = dsn
        self.pool_size = pool_size
        self._pool: Any = None
        self._lock = threading.Lock()

    def pool(self, opener: Callable[[int], Any]) -> Any:
        """The shared pool, opened by ``opener(max_size)`` on first use."""
        with self._lock:
            if self._pool is None:
                self._pool = opener(self.pool_size)
            return self._pool

    @property
    def is_open(self) -> bool:
        return self._pool is not None

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None


__all__ = ["PgDatabase"]

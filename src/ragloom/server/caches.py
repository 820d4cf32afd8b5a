"""The server's caches: query embeddings and search results, per tenant, kept in step
with every write to a knowledge base.

Two caches, each least-recently-used first, bounded by ``cache_entries`` entries per
tenant and by ``cache_bytes`` (an estimate) for all tenants together:

* ``embeddings``: a query's embedding, keyed by tenant, embedder name and query text;
* ``search``: a search's answer (the encoded response, or the passages an answer is
  built from), keyed by tenant, route, every knowledge base searched with its
  *generation*, the options and the query text.

Every write to a knowledge base (ingestion by the ``/api`` job worker or the ``/v1``
ingest worker, deletes, Vector IO inserts) calls :meth:`ServerCaches.changed` with its
store once the write is committed, before the job or file is reported done: its
generation moves on, so no search keyed by an older one is served again. A search
reads the generations before it searches, so a result computed while a write lands
is filed under the old generation. Degraded results (a fallback answered) are not
cached. Lookups are one dict access under a lock.

``cache_entries = 0`` turns both caches off. Replicas (``--db postgresql://...``)
cache embeddings only: another process's writes do not move this one's generations.
"""

from __future__ import annotations

import itertools
import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from ragloom.embeddings.query_memo import QueryWrapper
from ragloom.errors import RagError, StoreError
from ragloom.protocols import EmbeddingProvider
from ragloom.types import Embedding, QueryMatch

T = TypeVar("T")
log = logging.getLogger("ragloom.server.search")
CACHE_NAMES = ("embeddings", "search")
DEFAULT_ENTRIES = 1000
DEFAULT_BYTES = 64 * 1024 * 1024
_MISSING: Any = object()


class CacheCounters:
    """Where one cache counts its hits, misses and evictions (Prometheus children, or
    plain numbers in tests)."""

    def __init__(self, hit: Callable[[], None] | None = None,
                 miss: Callable[[], None] | None = None,
                 evict: Callable[[float], None] | None = None) -> None:
        self.hits = self.misses = self.evictions = 0
        self._hit, self._miss, self._evict = hit, miss, evict

    def hit(self) -> None:
        self.hits += 1
        if self._hit is not None:
            self._hit()

    def miss(self) -> None:
        self.misses += 1
        if self._miss is not None:
            self._miss()

    def evict(self, count: int = 1) -> None:
        self.evictions += count
        if self._evict is not None:
            self._evict(count)


class BoundedCache:
    """An LRU map: at most ``max_entries`` entries per tenant, ``max_bytes`` in all.

    An entry larger than a quarter of ``max_bytes`` is not kept (it would flush the
    others).
    """

    def __init__(self, name: str, max_entries: int, max_bytes: int,
                 counters: CacheCounters | None = None) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("a cache holds at least one entry and one byte")
        self.name = name
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.counters = counters or CacheCounters()
        self._items: OrderedDict[Hashable, tuple[Any, int, str]] = OrderedDict()
        self._tenants: dict[str, OrderedDict[Hashable, None]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    @property
    def bytes(self) -> int:
        return self._bytes

    def get(self, key: Hashable) -> Any:
        """The value, or ``_MISSING`` (counted as a hit or a miss)."""
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
                self._tenants[item[2]].move_to_end(key)
        if item is None:
            self.counters.miss()
            return _MISSING
        self.counters.hit()
        return item[0]

    def put(self, tenant: str, key: Hashable, value: Any, size: int) -> None:
        if size > self.max_bytes // 4:
            return
        evicted = 0
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            own = self._tenants.setdefault(tenant, OrderedDict())
            self._items[key] = (value, size, tenant)
            own[key] = None
            own.move_to_end(key)
            self._bytes += size
            while len(own) > self.max_entries:
                self._drop(next(iter(own)))
                evicted += 1
            while self._bytes > self.max_bytes and self._items:
                self._drop(next(iter(self._items)))
                evicted += 1
        if evicted:
            self.counters.evict(evicted)

    def _drop(self, key: Hashable) -> None:
        _, size, tenant = self._items.pop(key)
        self._bytes -= size
        own = self._tenants[tenant]
        del own[key]
        if not own:
            del self._tenants[tenant]

    def tenant_entries(self, tenant: str) -> int:
        with self._lock:
            return len(self._tenants.get(tenant, ()))


def store_key(store: object) -> str | None:
    """A stable name for a store (its kind, file and collection), or None when it has
    no collection name (such a store's searches are not cached)."""
    name = getattr(store, "name", None)
    if not isinstance(name, str) or not name:
        return None
    return f"{type(store).__name__}\x1f{getattr(store, 'path', '')}\x1f{name}"


class Generations:
    """A number per knowledge base (store) that every write changes. Numbers come from
    one counter, so a store dropped and made again never reuses an old one."""

    def __init__(self) -> None:
        self._values: dict[str, int] = {}
        self._counter = itertools.count(1)
        self._lock = threading.Lock()

    def of(self, key: str) -> int:
        return self._values.get(key, 0)

    def bump(self, key: str) -> None:
        with self._lock:
            self._values[key] = next(self._counter)


def embedding_size(text: str, embedding: Embedding) -> int:
    values = getattr(embedding, "values", None)
    nbytes = int(getattr(values, "nbytes", 0) or 0)
    dense = getattr(embedding, "dense", None)  # a hybrid vector
    nbytes += int(getattr(getattr(dense, "values", None), "nbytes", 0) or 0)
    return 120 + len(text) + (nbytes or 4096)


def matches_size(matches: Sequence[QueryMatch]) -> int:
    """Roughly what a list of passages holds in memory."""
    return 200 + sum(300 + len(m.chunk.text) + 64 * len(m.chunk.metadata) for m in matches)


class CachedQueries(QueryWrapper):
    """An embedder whose query embeddings come from the server's cache (per tenant)."""

    def __init__(self, embedder: EmbeddingProvider, cache: BoundedCache, tenant: str) -> None:
        super().__init__(embedder)
        self.cache = cache
        self.tenant = tenant

    def embed_query(self, text: str) -> Embedding:
        key = (self.tenant, self.embedder.name, text)
        found = self.cache.get(key)
        if found is not _MISSING:
            result: Embedding = found
            return result
        embedding = self.embedder.embed_query(text)
        self.cache.put(self.tenant, key, embedding, embedding_size(text, embedding))
        return embedding


class ServerCaches:
    """The caches of one server process, and the knowledge bases' generations."""

    def __init__(self, entries: int = DEFAULT_ENTRIES, max_bytes: int = DEFAULT_BYTES, *,
                 results: bool = True,
                 counters: Callable[[str], CacheCounters] | None = None) -> None:
        if entries < 0 or max_bytes < 1:
            raise ValueError("cache entries are 0 (off) or more, cache bytes positive")
        make = counters or (lambda name: CacheCounters())
        self.embeddings = (BoundedCache("embeddings", entries, max_bytes, make("embeddings"))
                           if entries else None)
        self.search = (BoundedCache("search", entries, max_bytes, make("search"))
                       if entries and results else None)
        self.generations = Generations()

    def changed(self, store: object) -> None:
        """A write to ``store`` was committed: its cached searches are stale."""
        key = store_key(store)
        if key is not None:
            self.generations.bump(key)

    def search_key(self, tenant: str, kind: str, stores: Sequence[object],
                   *parts: Hashable) -> tuple[Hashable, ...] | None:
        """The key of a search over ``stores`` as they are now (read it before
        searching), or None when results are not cached."""
        if self.search is None:
            return None
        stamps = []
        for store in stores:
            key = store_key(store)
            if key is None:
                return None
            stamps.append((key, self.generations.of(key)))
        return (tenant, kind, tuple(stamps), *parts)

    def cached(self, tenant: str, key: tuple[Hashable, ...] | None,
               compute: Callable[[], tuple[T, bool]], size: Callable[[T], int]) -> T:
        """The cached value of ``key``, else ``compute()``'s (value, keep), kept when
        ``keep`` says so."""
        if key is None or self.search is None:
            return compute()[0]
        found = self.search.get(key)
        if found is not _MISSING:
            value: T = found
            return value
        value, keep = compute()
        if keep:
            self.search.put(tenant, key, value, size(value))
        return value

    def query_embedder(self, tenant: str, embedder: EmbeddingProvider) -> EmbeddingProvider:
        """``embedder``, with its query embeddings cached for ``tenant``."""
        if self.embeddings is None:
            return embedder
        return CachedQueries(embedder, self.embeddings, tenant)


def request_id() -> str:
    from ragloom.server.observability import request_id_var

    return request_id_var.get()


@contextmanager
def store_failures_logged(where: str) -> Iterator[None]:
    """Log a search whose store failed with the request's id, and answer it with the
    clean store error (500, no paths or SQL); errors of the request itself pass."""
    from ragloom.server.errors import error_kind, from_rag_error

    try:
        yield
    except RagError as exc:
        if error_kind(exc).status < 500:
            raise
        log.error("searching %s failed (request %s): %s: %s", where, request_id(),
                  type(exc).__name__, exc, exc_info=exc)
        raise from_rag_error(exc) from exc
    except (sqlite3.Error, OSError) as exc:
        log.error("searching %s failed (request %s): %s: %s", where, request_id(),
                  type(exc).__name__, exc, exc_info=exc)
        raise from_rag_error(StoreError("the store query failed")) from exc

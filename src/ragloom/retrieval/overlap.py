"""Hybrid search on a large store: the vector side runs beside the keyword ranking.

A hybrid query embeds the query, ranks by vector and ranks by keyword; only the
vector side needs the embedding. On a large store the keyword ranking costs more than
the embedding and the vector ranking together (1M chunks: about 13 ms beside 5 + 3
ms), and ONNX Runtime and hnswlib release the GIL while they run, so a worker thread
embeds the query and ranks by vector while the caller ranks by keyword, both over one
view of the store (:class:`~ragloom.protocols.ViewRankable`). On a small store the
keyword ranking is cheaper than the hand-off: two threads taking turns on the GIL
made SciFact's hybrid p50 rise from 16.3 to 21.6 ms, so below ``min_chunks`` nothing
changes (no worker, one thread).

The keyword ranking stays on the caller's thread: it runs under any lock the caller
holds, with its per-thread scratch buffers (:mod:`ragloom.stores.bm25`) where they
already are, and the view's read transaction belongs to that thread. The worker
embeds before the view opens (no lock needed) and then ranks over the view's
vectors, which no write can change while the view holds the store's lock.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from ragloom.errors import RagError

T = TypeVar("T")

#: Chunks from which a hybrid query embeds on a worker thread (see the module notes;
#: measured in bench/hybrid_scale.py, docs/retrieval.md).
OVERLAP_MIN_CHUNKS = 200_000


class HybridOverlap:
    """When a hybrid query runs its vector side on a worker, and the few long-lived
    workers it uses.

    ``min_chunks``: stores holding fewer chunks (``store.count()``) keep the one-thread
    path. ``workers``: queries whose vector side runs at once; when all are busy (concurrent
    queries keep the cores busy anyway) a query runs on one thread. Threads start on
    first use and are replaced after a fork.
    """

    def __init__(self, min_chunks: int = OVERLAP_MIN_CHUNKS, *, workers: int = 1) -> None:
        self.min_chunks = min_chunks
        self.workers = max(1, workers)
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._free = threading.Semaphore(self.workers)
        self._pid = 0

    def wants(self, count: Callable[[], int]) -> bool:
        """Whether a store of ``count()`` chunks is large enough (a store that cannot say
        keeps the one-thread path, which then reports its error as before)."""
        try:
            return count() >= self.min_chunks
        except RagError:
            return False

    def submit(self, work: Callable[[], T]) -> Future[T] | None:
        """``work`` started on a free worker, or None when none is free."""
        pool = self._current_pool()
        free = self._free
        if not free.acquire(blocking=False):
            return None

        def run() -> T:
            try:
                return work()
            finally:
                free.release()

        try:
            return pool.submit(run)
        except RuntimeError:  # the interpreter is shutting down
            free.release()
            return None

    def _current_pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None or self._pid != os.getpid():
                # A forked child inherits the pool object but not its threads.
                self._pool = ThreadPoolExecutor(self.workers,
                                                thread_name_prefix="ragloom-embed")
                self._free = threading.Semaphore(self.workers)
                self._pid = os.getpid()
            return self._pool


#: What :func:`ragloom.retrieval.search.search` uses unless given another.
DEFAULT_OVERLAP = HybridOverlap()

"""What one server process shares between requests: the database, the models (loaded
once), the knowledge bases, the job worker, and the bounded thread pools.

Two pools, so a slow model call never stalls a search: ``search_threads`` threads for
retrieval, ingestion bookkeeping and other CPU work, ``model_threads`` for language
model calls. The event loop itself only moves bytes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from fastapi import Request

from ragloom._threads import cores_shared
from ragloom.server.auth import Authenticator, KeyStore
from ragloom.server.caches import ServerCaches
from ragloom.server.catalog import Catalog, SharedModels
from ragloom.server.db import ServerDatabase
from ragloom.server.fetching import UrlFetcher
from ragloom.server.jobs import JobQueue, JobWorker
from ragloom.server.jobs.deletes import KnowledgeBaseDeletes
from ragloom.server.observability import Metrics
from ragloom.server.policy import ModelPolicy
from ragloom.server.sessions import SessionStore
from ragloom.server.settings import ServerSettings

T = TypeVar("T")
log = logging.getLogger("ragloom.server")


class CpuWork:
    """The CPU work in flight in the server's pools (searches, model calls).

    Work that starts while other work is in flight runs inside
    :func:`ragloom._threads.cores_shared`: the cores are taken, so a query embedded
    meanwhile keeps to one thread. A query embedded alone in the process gets two
    (lower latency for one client). The embedder sees only other embeddings, not the
    requests between theirs: with 8 clients, one query in four found no other
    embedding under way and ran on two threads, for about 40 % more CPU than on one,
    while the other requests needed the second core (now one in 37).

    The HTTP layer counts the requests it is serving (:meth:`request_started`,
    :meth:`request_finished`): while more than one is open the cores are shared even
    if the pool is momentarily empty. Without it, the time a request spends in the
    event loop (parsing, middleware, encoding) left the pool empty often enough that
    a quarter of hybrid queries under 8 clients ran on two threads (23 % fewer
    requests/s than with the count).
    """

    def __init__(self) -> None:
        self._count = 0
        self._requests = 0
        self._lock = threading.Lock()

    def request_started(self) -> None:
        """An HTTP request began (called on the event loop)."""
        self._requests += 1

    def request_finished(self) -> None:
        self._requests -= 1

    @property
    def in_flight(self) -> int:
        return self._count

    def beside_others(self, function: Callable[..., T]) -> Callable[..., T]:
        """``function``, counted while it runs and marked as sharing the cores when
        other work is in flight at its start."""
        def run(*args: Any) -> T:
            with self._lock:
                self._count += 1
                crowded = self._count > 1 or self._requests > 1
            try:
                with cores_shared() if crowded else nullcontext():
                    return function(*args)
            finally:
                with self._lock:
                    self._count -= 1
        return run


@dataclass
class ServerState:
    settings: ServerSettings
    db: ServerDatabase
    keys: KeyStore
    auth: Authenticator
    models: SharedModels
    catalog: Catalog
    jobs: JobQueue
    worker: JobWorker
    fetcher: UrlFetcher
    sessions: SessionStore
    metrics: Metrics
    search_limiter: anyio.CapacityLimiter
    model_limiter: anyio.CapacityLimiter
    policy: ModelPolicy
    caches: ServerCaches = field(default_factory=lambda: ServerCaches(0))
    ready: threading.Event = field(default_factory=threading.Event)
    startup_error: str | None = None
    #: Why a router that should serve is not mounted (``/ready`` answers 503).
    mount_error: str | None = None
    cpu_work: CpuWork = field(default_factory=CpuWork)
    _tenant_names: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def build(cls, settings: ServerSettings) -> ServerState:
        """Wire everything; opens no file and loads no model yet. The providers'
        settings (``ragloom.toml``, environment) are resolved here, once, and logged."""
        config = settings.config
        if config is None:
            from ragloom.config import load_settings

            config = load_settings({"embedder": settings.embedder, "llm": settings.llm,
                                    "fallback_llm": settings.fallback_llm})
        policy = ModelPolicy.from_settings(settings)
        log.info("settings: embedder %s, llm %s, providers %s, from %s; tenants may name "
                 "embedders %s and llms %s", settings.embedder, settings.llm,
                 sorted(config.providers), ", ".join(config.sources) or "defaults",
                 list(policy.embedders), list(policy.llms))
        db = ServerDatabase(settings.server_database)
        keys = KeyStore(db)
        models = SharedModels(settings.embedder, settings.llm, settings.fallback_llm, config)
        catalog = Catalog(db, settings.db, models, store_url=settings.database_url,
                          policy=policy, max_open=settings.max_open_collections)
        jobs = JobQueue(db, settings.files_dir, lease_seconds=settings.job_lease_seconds)
        metrics = Metrics()
        # Replicas: another process's writes would not move this one's generations.
        caches = ServerCaches(settings.cache_entries, settings.cache_bytes,
                              results=not settings.replicated,
                              counters=metrics.cache_counters)
        metrics.watch_caches(caches)
        worker = JobWorker(jobs, catalog, batch_files=settings.ingest_batch_files,
                           on_finish=lambda status: metrics.jobs_finished.labels(status).inc(),
                           on_write=caches.changed)
        # Deleting a knowledge base is a job too (see ragloom.server.jobs.deletes).
        KnowledgeBaseDeletes(jobs, worker, catalog, wait=settings.delete_wait)
        metrics.jobs_pending.set_function(lambda: float(jobs.pending_count()))
        return cls(settings=settings, db=db, keys=keys,
                   auth=Authenticator(keys, rate_limit=settings.rate_limit,
                                      insecure_no_auth=settings.insecure_no_auth),
                   models=models, catalog=catalog, jobs=jobs, worker=worker,
                   fetcher=UrlFetcher(jobs, threads=settings.fetch_threads,
                                      timeout=settings.url_timeout,
                                      allow_private=settings.url_allow_private,
                                      max_bytes=settings.max_upload_bytes),
                   sessions=SessionStore(db), metrics=metrics, policy=policy, caches=caches,
                   search_limiter=anyio.CapacityLimiter(settings.search_threads),
                   model_limiter=anyio.CapacityLimiter(settings.model_threads))

    def start(self) -> None:
        """Open the database, start the job worker and load the models in the background."""
        self.auth.default_tenant()
        self.worker.start()
        self.fetcher.start()
        threading.Thread(target=self._warm, name="ragloom-warm", daemon=True).start()

    def _warm(self) -> None:
        try:
            if self.settings.warm_models:
                self.models.warm()
        except Exception as exc:  # reported by /ready, the server still serves what it can
            self.startup_error = f"loading the models failed ({type(exc).__name__}); see the log"
            log.exception("loading the models failed")
        self.ready.set()

    def tenant_name(self, tenant_id: str) -> str | None:
        """A tenant's name by id (the allow-lists are per tenant name), remembered."""
        names = self._tenant_names
        if tenant_id not in names:
            row = self.db.one("SELECT name FROM tenants WHERE id = ?", (tenant_id,))
            if len(names) > 10_000:
                names.clear()
            names[tenant_id] = str(row[0]) if row else None
        return names[tenant_id]

    def not_ready(self) -> str | None:
        """Why the server is not ready (``/ready`` says it with 503), or None."""
        if not self.ready.is_set():
            return "loading the models"
        if self.startup_error is not None:
            return self.startup_error
        if self.mount_error is not None:
            return self.mount_error
        if not self.worker.alive():
            return "the ingestion worker is not running; see the log"
        return None

    def stop(self) -> None:
        """Stop the fetch pool and the worker (jobs under way stay pending, see
        :meth:`JobWorker.stop`), then close the stores."""
        self.fetcher.stop()
        self.worker.stop()
        self.catalog.close()
        self.db.close()

    async def run_cpu(self, function: Callable[..., T], *args: Any) -> T:
        """Run blocking work (search, SQLite, parsing) in the bounded search pool."""
        return await anyio.to_thread.run_sync(self.cpu_work.beside_others(function), *args,
                                              limiter=self.search_limiter)

    async def run_model(self, function: Callable[..., T], *args: Any) -> T:
        """Run a language model call in its own pool (counted with the search pool's
        work: a generation holds a core as much as a search does)."""
        return await anyio.to_thread.run_sync(self.cpu_work.beside_others(function), *args,
                                              limiter=self.model_limiter)


async def get_state(request: Request) -> ServerState:
    """FastAPI dependency: the app's shared state (async: a sync dependency would cost
    every request a hand-off to a worker thread)."""
    state: ServerState = request.app.state.ragloom
    return state

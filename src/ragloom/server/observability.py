"""Request ids, timing, logs and Prometheus metrics.

Every request gets an id (the client's ``X-Request-ID`` when it sends a sane one),
echoed in the response; a context variable carries it into every log line written
while the request runs, including the line that closes it with status and time.
``--log-format json`` writes one JSON object per line. Metrics live in a registry
of the app's own (no process-wide collector), served at ``/metrics``.

Body size limits, authentication and the keyless host checks are the edge
policy's (:mod:`ragloom.server.edge`), which runs inside this middleware.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import secrets
import time
from collections.abc import Callable
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
log = logging.getLogger("ragloom.server.access")
_SANE_ID = re.compile(r"^[\w.\-:]{1,64}$")


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` to every record (``-`` outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname.lower(), "logger": record.name,
            "request_id": getattr(record, "request_id", "-"), "message": record.getMessage(),
        }
        for key in ("method", "path", "status", "duration_ms", "client"):
            if hasattr(record, key):
                data[key] = getattr(record, key)
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False)


def configure_logging(log_format: str, level: str = "info") -> logging.Handler:
    """Send ragloom's and uvicorn's logs through one handler (called by ``ragloom serve``,
    the process's edge; the app factory itself configures nothing process-wide)."""
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter(
            "%(asctime)s %(levelname)s [%(request_id)s] %(name)s: %(message)s"))
    for name in ("ragloom", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(level.upper())
        logger.propagate = False
    # The access line is ours (with id and time); uvicorn's own would lack both.
    logging.getLogger("uvicorn.access").disabled = True
    return handler


class Metrics:
    """The app's Prometheus collectors."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("ragloom_http_requests_total", "HTTP requests",
                                ["method", "route", "status"], registry=self.registry)
        self.latency = Histogram(
            "ragloom_http_request_duration_seconds", "HTTP request time", ["method", "route"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=self.registry)
        self.in_flight = Gauge("ragloom_http_requests_in_flight", "Requests being served",
                               registry=self.registry)
        self.jobs_pending = Gauge("ragloom_ingestion_jobs_pending",
                                  "Ingestion jobs waiting or running", registry=self.registry)
        self.jobs_finished = Counter("ragloom_ingestion_jobs_finished_total",
                                     "Ingestion jobs finished", ["status"],
                                     registry=self.registry)
        self.cache_hits = Counter("ragloom_cache_hits_total", "Cache lookups answered",
                                  ["cache"], registry=self.registry)
        self.cache_misses = Counter("ragloom_cache_misses_total", "Cache lookups not answered",
                                    ["cache"], registry=self.registry)
        self.cache_evictions = Counter("ragloom_cache_evictions_total",
                                       "Cache entries dropped to stay within the bounds",
                                       ["cache"], registry=self.registry)
        self.cache_entries = Gauge("ragloom_cache_entries", "Entries in a cache", ["cache"],
                                   registry=self.registry)
        self.cache_bytes = Gauge("ragloom_cache_bytes", "Estimated bytes held by a cache",
                                 ["cache"], registry=self.registry)

    def cache_counters(self, name: str) -> Any:
        """A :class:`~ragloom.server.caches.CacheCounters` counting into ``name``'s
        series (children bound once: a lookup costs one increment)."""
        from ragloom.server.caches import CacheCounters

        return CacheCounters(self.cache_hits.labels(name).inc,
                             self.cache_misses.labels(name).inc,
                             self.cache_evictions.labels(name).inc)

    def watch_caches(self, caches: Any) -> None:
        """Entries and bytes of each cache, read when /metrics is scraped."""
        for name in ("embeddings", "search"):
            cache = getattr(caches, name)
            self.cache_hits.labels(name)
            self.cache_misses.labels(name)
            self.cache_evictions.labels(name)
            if cache is None:
                self.cache_entries.labels(name).set(0)
                self.cache_bytes.labels(name).set(0)
                continue
            self.cache_entries.labels(name).set_function(_reader(cache, "entries"))
            self.cache_bytes.labels(name).set_function(_reader(cache, "bytes"))


def _reader(cache: Any, what: str) -> Callable[[], float]:
    if what == "entries":
        return lambda: float(len(cache))
    return lambda: float(cache.bytes)


class RequestCounter(Protocol):
    """Told when a request starts and ends (the server's CPU accounting)."""

    def request_started(self) -> None: ...

    def request_finished(self) -> None: ...


class RequestMiddleware:
    """Request id, timing, access log line and metrics."""

    def __init__(self, app: ASGIApp, metrics: Metrics, requests: RequestCounter | None = None
                 ) -> None:
        self.app = app
        self.metrics = metrics
        self.requests = requests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        given = headers.get("x-request-id", "")
        request_id = given if _SANE_ID.match(given) else secrets.token_hex(8)
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        status = 500
        method = scope.get("method", "")

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"],
                                      (b"x-request-id", request_id.encode("latin-1"))]
            await send(message)

        self.metrics.in_flight.inc()
        if self.requests is not None:
            self.requests.request_started()
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            if self.requests is not None:
                self.requests.request_finished()
            self.metrics.in_flight.dec()
            seconds = time.perf_counter() - started
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            self.metrics.requests.labels(method, route, str(status)).inc()
            self.metrics.latency.labels(method, route).observe(seconds)
            client = scope.get("client")
            log.info("%s %s %d %.1f ms", method, scope.get("path", ""), status, seconds * 1000,
                     extra={"method": method, "path": scope.get("path", ""), "status": status,
                            "duration_ms": round(seconds * 1000, 2),
                            "client": client[0] if client else None})
            request_id_var.reset(token)


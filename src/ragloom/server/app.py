"""``create_app(settings)``: the FastAPI application.

The app owns a :class:`~ragloom.server.state.ServerState` (models loaded once and
shared, the job worker started by the lifespan). Routes: the native API under
``/api``, the OpenAI-compatible API under ``/v1`` (when
:mod:`ragloom.server.v1` is installed), ``/health``, ``/ready``,
``/metrics``, the OpenAPI docs at ``/docs``, the web page at ``/`` and the MCP tools at
``/mcp`` (when :mod:`ragloom.mcp`'s SDK is installed).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

# Importing the graph layer lets SearchOptions(graph=True) run: retrieval takes its
# graph search as a collaborator (ragloom.graph.retrieval) and never imports it.
import ragloom.graph  # noqa: F401
from ragloom._threads import blas_threads
from ragloom.errors import RagError
from ragloom.mcp.hosted import mount_mcp
from ragloom.server.edge import EdgeMiddleware
from ragloom.server.errors import ApiError, error_body, from_rag_error
from ragloom.server.native import build_native_router
from ragloom.server.observability import RequestMiddleware
from ragloom.server.settings import ServerSettings
from ragloom.server.state import ServerState
from ragloom.server.tracing_middleware import install_tracing
from ragloom.server.web import mount_web

log = logging.getLogger("ragloom.server")


class Health(BaseModel):
    status: str


class Readiness(BaseModel):
    status: str
    embedder: str
    llm: str
    jobs_pending: int
    error: str | None = None


def create_app(settings: ServerSettings | None = None) -> FastAPI:
    """A ready-to-serve app; nothing is opened or loaded until its lifespan starts."""
    settings = settings or ServerSettings()
    state = ServerState.build(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # One BLAS thread while the app serves. Each search asks for one anyway, but
        # the pool put back to its own size whenever no search was running kept
        # OpenBLAS's worker thread spinning on a core (half of one, with 8 clients
        # on 2 cores). A local model's generation still takes its own count while
        # it runs.
        with blas_threads(1):
            await state.run_cpu(state.start)
            try:
                yield
            finally:
                await state.run_cpu(state.stop)

    app = FastAPI(title="ragloom", version=_version(), lifespan=lifespan,
                  description="Retrieval-augmented generation over your documents: a native "
                  "API under /api and an OpenAI-compatible API under /v1.")
    app.state.ragloom = state
    _install_error_handlers(app)
    # The last added runs first: request ids and metrics see every answer, including
    # the edge policy's refusals, which come before any route; the tracing span is
    # outermost and covers the whole request.
    app.add_middleware(EdgeMiddleware, state=state)
    app.add_middleware(RequestMiddleware, metrics=state.metrics, requests=state.cpu_work)
    install_tracing(app, settings)
    app.include_router(build_native_router())
    _mount_v1(app, state)
    mount_web(app)
    mount_mcp(app, state)  # /mcp, when the mcp extra is installed

    @app.get("/health", response_model=Health, tags=["operations"])
    async def health() -> dict[str, str]:
        """The process answers."""
        return {"status": "ok"}

    @app.get("/ready", response_model=Readiness, tags=["operations"],
             responses={503: {"model": Readiness, "description": "Still loading"}})
    async def ready() -> Any:
        """200 once the models are loaded, the routers mounted and the job worker runs;
        503 with the reason before or otherwise."""
        pending = await state.run_cpu(state.jobs.pending_count)
        reason = state.not_ready()
        status = "ready" if reason is None else (
            "loading" if not state.ready.is_set() else "failed")
        body = {"status": status, "embedder": settings.embedder, "llm": settings.llm,
                "jobs_pending": pending, "error": reason}
        return JSONResponse(body, status_code=200 if reason is None else 503)

    @app.get("/metrics", tags=["operations"], response_class=PlainTextResponse)
    async def metrics() -> PlainTextResponse:
        """Prometheus metrics: requests, latency, in-flight requests, ingestion jobs."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        data = await state.run_cpu(generate_latest, state.metrics.registry)
        return PlainTextResponse(data.decode("utf-8"), media_type=CONTENT_TYPE_LATEST)

    return app


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ragloom")
    except PackageNotFoundError:
        return "0"


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)

    @app.exception_handler(RagError)
    async def rag_error(request: Request, exc: RagError) -> JSONResponse:
        error = from_rag_error(exc)
        if error.status >= 500:
            log.error("request failed", exc_info=exc)
        return JSONResponse(error.body(), status_code=error.status, headers=error.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        where = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path")]
        param = ".".join(where) or None
        message = f"{param}: {first.get('msg', 'invalid')}" if param else str(
            first.get("msg", "invalid request"))
        return JSONResponse(error_body(message, "invalid_request_error", "invalid_value",
                                       param), status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kinds = {404: ("not_found_error", "not_found"),
                 405: ("invalid_request_error", "method_not_allowed")}
        kind, code = kinds.get(exc.status_code, ("invalid_request_error", "http_error"))
        return JSONResponse(error_body(str(exc.detail), kind, code), status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("request failed", exc_info=exc)
        return JSONResponse(error_body("the server failed; see its log", "server_error",
                                       "server_error"), status_code=500)


def _mount_v1(app: FastAPI, state: ServerState) -> None:
    """Mount the OpenAI-compatible routes when that package is present."""
    try:
        from ragloom.server.v1 import build_router
        from ragloom.server.v1.deps import Deps
    except ImportError:
        return
    from ragloom.server.compat_wiring import build_deps

    deps = build_deps(Deps, state)
    if deps is None:
        state.mount_error = "the OpenAI-compatible routes (/v1) could not be mounted; see the log"
        return
    try:
        app.include_router(build_router(deps))
    except Exception:
        log.exception("mounting /v1 failed")
        state.mount_error = "the OpenAI-compatible routes (/v1) could not be mounted; see the log"

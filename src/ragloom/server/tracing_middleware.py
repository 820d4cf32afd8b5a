"""One server span per HTTP request, child of the caller's ``traceparent``.

A plain ASGI middleware (no dependency on opentelemetry's instrumentation packages):
while :mod:`ragloom.tracing` is off it passes every request straight through. On, it
makes the incoming W3C trace context current and opens a ``SERVER`` span named
``{method} {route}`` around the request, so the retrieval, embedding and chat spans the
request makes (on worker threads too: they run in a copy of the request's context)
share its trace.
"""

from __future__ import annotations

from typing import Any

from ragloom import tracing
from ragloom.server.settings import ServerSettings

Scope = dict[str, Any]
_PROPAGATED = (b"traceparent", b"tracestate", b"baggage")


class TraceMiddleware:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not tracing.enabled():
            await self.app(scope, receive, send)
            return
        carrier = {k.decode("latin-1"): v.decode("latin-1")
                   for k, v in scope.get("headers", ()) if k in _PROPAGATED}
        method = scope.get("method", "GET")
        path = scope.get("path", "")
        status = {"code": 500}

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status["code"] = int(message["status"])
            await send(message)

        with tracing.use_context(carrier), tracing.span(
                f"{method} {path}", "server", **{
                    "http.request.method": method, "url.path": path,
                    "url.scheme": scope.get("scheme", "http")}) as current:
            try:
                await self.app(scope, receive, sending)
            finally:
                route = getattr(scope.get("route"), "path", None)
                if route:
                    current.update_name(f"{method} {route}")
                    current.set_attribute("http.route", route)
                current.set_attribute("http.response.status_code", status["code"])


def install_tracing(app: Any, settings: ServerSettings) -> None:
    """Turn tracing on as the settings or the ``OTEL_*`` environment say, and add the
    middleware (which costs one check per request while tracing is off)."""
    if settings.otel:
        if not tracing.enabled():
            tracing.configure(exporter=settings.otel_exporter,
                              record_results=settings.otel_record_results)
    else:
        tracing.configure_from_env(record_results=settings.otel_record_results or None)
    app.add_middleware(TraceMiddleware)

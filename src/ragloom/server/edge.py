"""The edge policy: what every request passes before any route runs.

:class:`EdgeMiddleware` is pure ASGI (no ``BaseHTTPMiddleware``); for each HTTP
request, in this order:

1. **Keyless mode** (no API key exists): only a loopback ``Host`` (``localhost``,
   ``127.0.0.1``, ``[::1]``, any port; plus ``allowed_hosts``) is served, so a
   DNS-rebound name cannot read the API; an unsafe method (POST, PUT, PATCH, DELETE)
   with a foreign ``Origin`` or a cross-site ``Sec-Fetch-Site`` is refused, so a web
   page the user opens cannot post into a knowledge base (CSRF). A client that sends
   neither header (curl, SDKs) is served. Both refusals are 403 with a JSON body
   saying why.
2. **Authentication** of ``/api`` and ``/v1`` (the :class:`Authenticator`), and the
   key's rate limit, before a byte of the body is read; the tenant goes to the
   request's state, where :func:`~ragloom.server.auth.current_tenant` finds it.
3. **Body size**: a ``Content-Length`` above the route's limit is a 413 at once; a
   body without one (chunked) is counted as it streams and answered 413 as soon as
   it passes the limit, without reading the rest. Uploads (multipart routes) may
   take ``max_upload_bytes``, every other body ``max_json_bytes``.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragloom.server.errors import ApiError, error_body

if TYPE_CHECKING:
    from ragloom.server.state import ServerState

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SAME_SITE = frozenset({"same-origin", "none"})
#: Routes that take multipart uploads (``max_upload_bytes``); other bodies are JSON.
UPLOAD_ROUTES = (re.compile(r"^/v1/files/?$"),
                 re.compile(r"^/api/knowledge-bases/[^/]+/documents/?$"))
PROTECTED_PREFIXES = ("/api/", "/v1/")


class BodyTooLarge(ApiError):
    """The request body passed its route's limit (raised from ``receive``)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than the limit of {limit} bytes",
                         type="invalid_request_error", code="request_too_large")


def host_name(host_header: str) -> str:
    """The name in a ``Host`` header, without its port (``[::1]`` keeps brackets)."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[:host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def route_path(scope: Scope) -> str:
    """The path routes match: without the root path (behind a proxy's sub-path)."""
    path, root = str(scope.get("path", "")), str(scope.get("root_path", ""))
    return path[len(root):] if root and path.startswith(root) else path


def is_upload_route(method: str, path: str) -> bool:
    return method == "POST" and any(pattern.match(path) for pattern in UPLOAD_ROUTES)


def keyless_refusal(method: str, headers: dict[str, str],
                    allowed_hosts: frozenset[str]) -> str | None:
    """Why a request to a server without API keys is refused, or None (served)."""
    host = host_name(headers.get("host", ""))
    if host not in LOOPBACK_HOSTS and host not in allowed_hosts:
        return (f"this server has no API keys and answers only requests addressed to "
                f"localhost, 127.0.0.1 or [::1], not Host {headers.get('host', '')!r} "
                "(create a key with: ragloom keys create --tenant NAME)")
    if method not in UNSAFE_METHODS:
        return None
    site = headers.get("sec-fetch-site")
    if site is not None and site.lower() not in SAME_SITE:
        return (f"cross-site {method} refused (Sec-Fetch-Site: {site}): without API keys "
                "only pages served by this server may change its data")
    origin = headers.get("origin")
    if origin is not None:
        parts = urlsplit(origin)
        if origin == "null" or parts.netloc.lower() != headers.get("host", "").lower():
            return (f"cross-origin {method} refused (Origin: {origin}): without API keys "
                    "only pages served by this server may change its data")
    return None


class EdgeMiddleware:
    """Keyless host and origin checks, authentication, body size limits (see module)."""

    def __init__(self, app: ASGIApp, state: ServerState) -> None:
        self.app = app
        self.state = state
        settings = state.settings
        self.max_upload_bytes = int(settings.max_upload_bytes)
        self.max_json_bytes = min(int(settings.max_json_bytes), self.max_upload_bytes)
        self.allowed_hosts = frozenset(h.lower() for h in settings.allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            await self._admit(scope)
        except ApiError as error:
            await _answer(send, error)
            return
        await self._serve_capped(scope, receive, send)

    async def _admit(self, scope: Scope) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        method = str(scope.get("method", "GET"))
        auth = self.state.auth
        keyed = auth.keys_configured_lately()
        if keyed is None:
            keyed = await _run(auth.keys_configured)
        if not keyed:
            why = keyless_refusal(method, headers, self.allowed_hosts)
            if why is not None:
                raise ApiError(403, why, type="permission_error", code="forbidden_origin")
        path = route_path(scope)
        if path.startswith(PROTECTED_PREFIXES):
            client = scope.get("client")
            host = client[0] if client else None
            authorization, api_key = headers.get("authorization"), headers.get("x-api-key")
            found = auth.recent(authorization, api_key, host)
            if found is None:
                found = await _run(auth.authenticate, authorization, api_key, host)
            bucket, tenant = found
            auth.check_rate(bucket)
            scope.setdefault("state", {})["tenant"] = tenant
        length = headers.get("content-length", "")
        limit = self._limit(method, path)
        if length.isdigit() and int(length) > limit:
            raise BodyTooLarge(limit)

    def _limit(self, method: str, path: str) -> int:
        return self.max_upload_bytes if is_upload_route(method, path) else self.max_json_bytes

    async def _serve_capped(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self._limit(str(scope.get("method", "GET")), route_path(scope))
        received = 0
        over = False
        started = False

        async def capped_receive() -> Message:
            nonlocal received, over
            if over:
                raise BodyTooLarge(limit)
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    over = True
                    raise BodyTooLarge(limit)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if over and not started:
                # Whatever a route made of the cut-off body (400, 500), the answer is 413.
                started = True
                await _answer(send, BodyTooLarge(limit))
                return
            if over:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, capped_receive, guarded_send)
        except BodyTooLarge as error:
            if not started:
                started = True
                await _answer(send, error)


async def _run(function: Any, *args: Any) -> Any:
    """A short blocking call (a database read) off the event loop."""
    return await anyio.to_thread.run_sync(function, *args)


async def _answer(send: Send, error: ApiError) -> None:
    body = json.dumps(error_body(error.message, error.type, error.code, error.param)).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode("latin-1"), v.encode("latin-1"))
                for k, v in error.headers.items()]
    if error.status == 413:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

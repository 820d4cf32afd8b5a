"""The web page served at ``/``: a static single-page app over the native API.

``index.html``, ``app.css`` and one script per screen ship in the wheel and are served
by ragloom itself (no CDN, works offline). The page sends a Content-Security-Policy
that allows only its own script and style, so even a rendering mistake could not run
a script carried by a document or an answer.
"""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI
from fastapi.responses import Response

from ragloom.server.errors import ApiError

SCRIPTS = ("core", "kbs", "docs", "chat", "search", "graph", "app")
ASSETS = {**{f"{name}.js": "text/javascript; charset=utf-8" for name in SCRIPTS},
          "app.css": "text/css; charset=utf-8"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer", "Cache-Control": "no-cache"}


def _read(name: str) -> bytes:
    return files(__name__).joinpath(name).read_bytes()


def mount_web(app: FastAPI) -> None:
    """``GET /`` (the page) and ``GET /web/{asset}`` (its script and style)."""

    @app.get("/", include_in_schema=False)
    async def page() -> Response:
        return Response(_read("index.html"), media_type="text/html; charset=utf-8",
                        headers=HEADERS)

    @app.get("/web/{asset}", include_in_schema=False)
    async def asset(asset: str) -> Response:
        media_type = ASSETS.get(asset)
        if media_type is None:
            raise ApiError(404, f"no web asset named {asset!r}", type="not_found_error",
                           code="not_found")
        return Response(_read(asset), media_type=media_type, headers=HEADERS)


__all__ = ["mount_web"]

"""``/v1/openai/v1/…`` as another name of ``/v1/…``: Llama Stack's 0.2 clients send
every OpenAI-style call (files, vector stores, chat completions, responses, embeddings)
under that prefix.

The alias is one route that rewrites the path and hands the request back to the
application's router, so every ``/v1`` route answers under both names without a
second copy in the OpenAPI schema.
"""

from __future__ import annotations

from starlette.routing import Route
from starlette.types import Receive, Scope, Send

PREFIX = "/v1/openai/v1"
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


class _Rewrite:
    """An ASGI endpoint: the same request under ``/v1`` (the app's middleware and
    error handlers still wrap it, once)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope["path"])
        root = str(scope.get("root_path", ""))
        inner = path[len(root):] if root and path.startswith(root) else path
        rewritten = "/v1" + inner[len(PREFIX):]
        scope = {**scope, "path": root + rewritten if root and path.startswith(root)
                 else rewritten, "raw_path": (root + rewritten).encode()}
        scope.pop("route", None)
        scope.pop("endpoint", None)
        scope["path_params"] = {}
        await scope["router"](scope, receive, send)


def alias_route() -> Route:
    return Route(PREFIX + "/{rest:path}", endpoint=_Rewrite(), methods=METHODS,
                 include_in_schema=False)

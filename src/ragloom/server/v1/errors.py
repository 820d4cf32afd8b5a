"""OpenAI's error body for every failure under ``/v1``, without app-wide handlers.

:class:`OpenAIRoute` wraps each endpoint of the router: an :class:`OpenAIError`, a
request validation error or a ragloom error becomes a JSON response
``{"error": {"message", "type", "param", "code"}}`` with the right status (404 for a
missing object, 400 for a bad request, never 422), so the connection stays usable.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError

from ragloom.errors import RagError

log = logging.getLogger("ragloom.server.openai")


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorBody(BaseModel):
    """OpenAI's error body."""

    error: ErrorDetail


#: Documented on every route of the router (the status codes it answers with).
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": what}
    for status, what in ((400, "Invalid request or unsupported option"),
                         (401, "Missing or unknown API key"),
                         (404, "No such object for this tenant"),
                         (413, "Upload too large"), (429, "Rate limit reached"),
                         (500, "Server error"), (502, "The model provider failed"),
                         (504, "The model provider timed out"))}


class OpenAIError(Exception):
    """An error answered with OpenAI's body."""

    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param,
                          "code": self.code}}


def not_found(kind: str, object_id: str, param: str | None = None) -> OpenAIError:
    return OpenAIError(404, f"No {kind} found with id '{object_id}'.", param=param,
                       code="not_found")


def bad_request(message: str, param: str | None = None,
                code: str | None = "invalid_value") -> OpenAIError:
    return OpenAIError(400, message, param=param, code=code)


def not_allowed(what: str, name: str, allowed: list[str], param: str = "model") -> OpenAIError:
    """A model or embedder this server does not let its tenants name: a 400 listing
    the allowed ones."""
    listed = ", ".join(repr(a) for a in allowed) or "none"
    return OpenAIError(400, f"{what} {name!r} is not allowed on this server; allowed: "
                       f"{listed}", param=param, code="model_not_allowed")


def _validation_message(errors: list[Any]) -> tuple[str, str | None]:
    if not errors:
        return "invalid request", None
    first = errors[0]
    loc = [str(part) for part in first.get("loc", ()) if part not in ("body", "query", "path")]
    param = ".".join(loc) or None
    where = f" at '{param}'" if param else ""
    return f"Invalid request{where}: {first.get('msg', 'invalid value')}", param


def translate(exc: Exception) -> OpenAIError:
    """The OpenAI error for an exception raised while serving a request."""
    if isinstance(exc, OpenAIError):
        return exc
    if isinstance(exc, (RequestValidationError, ValidationError)):
        message, param = _validation_message(list(exc.errors()))
        return bad_request(message, param)
    if isinstance(exc, RagError):  # the one table the native API answers from too
        from ragloom.server.errors import rag_error_parts

        status, kind, code, message, headers = rag_error_parts(exc)
        if status >= 500:
            log.error("an OpenAI-compatible route failed", exc_info=exc)
        return OpenAIError(status, message, type=kind, code=code, headers=headers)
    log.exception("unexpected error in an OpenAI-compatible route", exc_info=exc)
    return OpenAIError(500, f"internal error: {type(exc).__name__}", type="server_error",
                       code="server_error")


def error_response(exc: Exception) -> JSONResponse:
    error = translate(exc)
    return JSONResponse(error.body(), status_code=error.status, headers=error.headers or None)


class OpenAIRoute(APIRoute):
    """An APIRoute whose failures are answered with OpenAI's error body."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:
                from starlette.exceptions import HTTPException

                if isinstance(exc, HTTPException):
                    if exc.status_code in (401, 403, 413, 429):
                        raise  # the core's auth, size and rate limits answer these itself
                    # FastAPI's own refusals, e.g. a body that is not JSON or not UTF-8.
                    exc = OpenAIError(exc.status_code if exc.status_code < 500 else 400,
                                      str(exc.detail), code="invalid_body")
                status, body = getattr(exc, "status", None), getattr(exc, "body", None)
                if isinstance(status, int) and callable(body):  # the core's ApiError
                    return JSONResponse(body(), status_code=status,
                                        headers=getattr(exc, "headers", None))
                return error_response(exc)

        return guarded

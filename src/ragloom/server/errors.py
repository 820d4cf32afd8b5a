"""One error shape for every route, native and OpenAI-compatible::

    {"error": {"message": "...", "type": "not_found_error", "param": null, "code": "not_found"}}

``type`` and ``code`` are stable strings a client may branch on; ``message`` says
what was wrong and what to do. Library errors map by class: not found -> 404, bad
input or configuration -> 400, provider rate limit -> 429, other provider failures
-> 502; anything unexpected -> 500 with no internals in the body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragloom.errors import (
    ConfigurationError,
    EmbedderMismatchError,
    InvalidInputError,
    NotFoundError,
    ProviderError,
    RagError,
    RateLimitError,
)


class ApiError(Exception):
    """An error the API answers with on purpose."""

    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error",
                 code: str | None = None, param: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        return error_body(self.message, self.type, self.code, self.param)


def error_body(message: str, type: str, code: str | None = None,
               param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def not_found(what: str, ident: str) -> ApiError:
    """The same answer whether the object is missing or belongs to another tenant."""
    return ApiError(404, f"no {what} with id {ident!r}", type="not_found_error",
                    code="not_found")


def bad_request(message: str, param: str | None = None) -> ApiError:
    return ApiError(400, message, type="invalid_request_error", code="invalid_value",
                    param=param)


def from_rag_error(exc: RagError) -> ApiError:
    if isinstance(exc, NotFoundError):
        return ApiError(404, str(exc), type="not_found_error", code="not_found")
    if isinstance(exc, EmbedderMismatchError):
        return ApiError(409, str(exc), type="invalid_request_error", code="embedder_mismatch")
    if isinstance(exc, (InvalidInputError, ConfigurationError)):
        return bad_request(str(exc))
    if isinstance(exc, RateLimitError):
        headers = {"Retry-After": str(max(1, round(exc.retry_after or 1)))}
        return ApiError(429, str(exc), type="rate_limit_error", code="provider_rate_limited",
                        headers=headers)
    if isinstance(exc, ProviderError):
        return ApiError(502, str(exc), type="provider_error", code="provider_failed")
    return ApiError(500, f"the server failed: {type(exc).__name__}", type="server_error",
                    code="server_error")

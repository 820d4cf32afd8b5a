"""One error shape for every route, native and OpenAI-compatible::

    {"error": {"message": "...", "type": "not_found_error", "param": null, "code": "not_found"}}

``type`` and ``code`` are stable strings a client may branch on; ``message`` says
what was wrong and what to do. Library errors map by class through one table,
:data:`RAG_ERRORS` (used by ``/api`` and ``/v1`` alike): not found -> 404, bad input
or configuration -> 400, an embedder mismatch -> 409, a provider's rate limit -> 429,
a provider's timeout -> 504, other provider failures -> 502, store failures -> 500.
An answer of 500 or more never carries the error's own text (it may hold file paths
or SQL): it names the kind of failure and points to the server log.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ragloom.errors as errors
from ragloom.errors import RagError


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


@dataclass(frozen=True)
class ErrorKind:
    """How one ``RagError`` class is answered: status, ``type``, ``code``, and
    whether its own message is safe to show (no paths, SQL or provider URLs)."""

    status: int
    type: str
    code: str
    shows_message: bool = True


_BAD = "invalid_request_error"
_PROVIDER = "provider_error"
#: ``RagError`` subclass -> how it is answered; the most specific class wins (the
#: error's MRO is walked). Every class of :mod:`ragloom.errors` has its own row.
RAG_ERRORS: dict[type[RagError], ErrorKind] = {
    errors.KnowledgeBaseNotFoundError: ErrorKind(404, "not_found_error", "not_found"),
    errors.CollectionDroppedError: ErrorKind(404, "not_found_error", "collection_deleted"),
    errors.NotFoundError: ErrorKind(404, "not_found_error", "not_found"),
    errors.EmbedderMismatchError: ErrorKind(409, _BAD, "embedder_mismatch"),
    errors.DimensionMismatchError: ErrorKind(409, _BAD, "dimension_mismatch"),
    errors.UnsupportedEmbeddingError: ErrorKind(400, _BAD, "unsupported_embedding"),
    errors.StoreError: ErrorKind(500, "server_error", "store_error", False),
    errors.MissingDependencyError: ErrorKind(500, "server_error", "missing_dependency"),
    errors.ConfigurationError: ErrorKind(400, _BAD, "invalid_value"),
    errors.FilterError: ErrorKind(400, _BAD, "invalid_filter"),
    errors.QueryError: ErrorKind(400, _BAD, "invalid_query"),
    errors.ParseError: ErrorKind(400, _BAD, "invalid_file"),
    errors.InvalidInputError: ErrorKind(400, _BAD, "invalid_value"),
    errors.AuthenticationError: ErrorKind(502, _PROVIDER, "provider_auth_failed", False),
    errors.RateLimitError: ErrorKind(429, "rate_limit_error", "provider_rate_limited"),
    errors.ProviderTimeoutError: ErrorKind(504, _PROVIDER, "provider_timeout", False),
    errors.ProviderConnectionError: ErrorKind(502, _PROVIDER, "provider_unreachable", False),
    errors.BadResponseError: ErrorKind(502, _PROVIDER, "provider_bad_response", False),
    errors.ModelNotFoundError: ErrorKind(502, _PROVIDER, "provider_model_not_found", False),
    errors.ProviderError: ErrorKind(502, _PROVIDER, "provider_failed", False),
    RagError: ErrorKind(500, "server_error", "server_error", False),
}
_HIDDEN_MESSAGES = {
    "store_error": "the knowledge base storage failed; see the server log",
    "provider_auth_failed": "the model provider refused the server's credentials; see the "
                            "server log",
    "provider_timeout": "the model provider did not answer in time; try again",
    "provider_unreachable": "the model provider could not be reached; try again later",
    "provider_bad_response": "the model provider answered with something unusable; see "
                             "the server log",
    "provider_model_not_found": "the model provider does not know the configured model; "
                                "see the server log",
    "provider_failed": "the model provider failed; see the server log",
    "server_error": "the server failed; see its log",
}


def error_kind(exc: RagError) -> ErrorKind:
    """The row of :data:`RAG_ERRORS` for ``exc`` (its most specific class)."""
    for cls in type(exc).__mro__:
        kind = RAG_ERRORS.get(cls)
        if kind is not None:
            return kind
    return RAG_ERRORS[RagError]


def rag_error_parts(exc: RagError) -> tuple[int, str, str, str, dict[str, str]]:
    """(status, type, code, message, headers) for a library error, for either API."""
    kind = error_kind(exc)
    if isinstance(exc, errors.ParseError):
        message = f"the file could not be read: {exc.reason}"
    elif kind.shows_message:
        message = str(exc)
    else:
        message = _HIDDEN_MESSAGES.get(kind.code, _HIDDEN_MESSAGES["server_error"])
    headers: dict[str, str] = {}
    if isinstance(exc, errors.RateLimitError):
        headers["Retry-After"] = str(max(1, round(exc.retry_after or 1)))
    return kind.status, kind.type, kind.code, message, headers


def from_rag_error(exc: RagError) -> ApiError:
    status, kind, code, message, headers = rag_error_parts(exc)
    return ApiError(status, message, type=kind, code=code, headers=headers)

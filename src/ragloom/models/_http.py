"""Helpers shared by the remote providers (chat and embeddings).

Each vendor SDK raises its own exceptions; these helpers turn HTTP statuses and
transport failures into the one ragloom error tree, parse tool-call arguments, and
read API keys from the environment without ever echoing them.
"""

from __future__ import annotations

import email.utils
import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ragloom.errors import (
    AuthenticationError,
    BadResponseError,
    ModelNotFoundError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
)

DEFAULT_TIMEOUT = 60.0
# OpenAI-compatible local servers (vLLM, llama.cpp, LM Studio) ignore the key, but
# the SDK refuses to start without one.
PLACEHOLDER_KEY = "not-needed"


def env_value(names: Sequence[str]) -> str | None:
    """The first non-empty environment variable among ``names``."""
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def scrub(text: str, secret: str | None) -> str:
    """Remove a secret from text that may end up in an error message."""
    if secret and len(secret) >= 4:
        text = text.replace(secret, "***")
    return text


def elapsed(started: float) -> float:
    return time.perf_counter() - started


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def header(headers: Any, name: str) -> str | None:
    """A header value from any mapping-like headers object (case-insensitive)."""
    if headers is None:
        return None
    try:
        value = headers.get(name)
    except AttributeError:
        return None
    if value is None and isinstance(headers, Mapping):
        lowered = {str(k).lower(): v for k, v in headers.items()}
        value = lowered.get(name.lower())
    return None if value is None else str(value)


def status_error(
    status: int,
    detail: str,
    *,
    provider: str,
    model: str,
    headers: Any = None,
    key_env: str = "",
    secret: str | None = None,
) -> ProviderError:
    """The ragloom error for an HTTP error status from a provider."""
    detail = scrub(detail, secret)[:300]
    where: dict[str, Any] = {"provider": provider, "model": model}
    if status in (401, 403):
        hint = f"set {key_env} to a valid key" if key_env else "check the provider's credentials"
        return AuthenticationError(
            f"the provider refused the credentials (HTTP {status}); {hint}", **where
        )
    if status == 404:
        return ModelNotFoundError(
            f"the provider does not know this model or endpoint (HTTP 404): {detail}; "
            "check the model name and the base URL", **where
        )
    if status == 429:
        retry_after = parse_retry_after(header(headers, "retry-after"))
        return RateLimitError(
            f"rate limited (HTTP 429){_wait_hint(retry_after)}: {detail}",
            retry_after=retry_after, **where,
        )
    if status == 408:
        return ProviderTimeoutError(f"the provider timed out (HTTP 408): {detail}", **where)
    if status >= 500:
        return BadResponseError(
            f"the provider failed (HTTP {status}): {detail}; try again later",
            retryable=True, **where,
        )
    return BadResponseError(f"the provider rejected the request (HTTP {status}): {detail}",
                            **where)


def _wait_hint(retry_after: float | None) -> str:
    return f", retry after {retry_after:g} s" if retry_after is not None else ""


def _class_names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def transport_error(
    exc: BaseException, *, provider: str, model: str, timeout: float, secret: str | None = None
) -> ProviderError | None:
    """A timeout or connection failure from httpx, httpx2, requests or the stdlib.

    Matched by class name because the SDKs ship different HTTP stacks (httpx and its
    fork httpx2) and ragloom depends on neither.
    """
    names = _class_names(exc)
    where: dict[str, Any] = {"provider": provider, "model": model}
    if names & {"TimeoutException", "TimeoutError", "APITimeoutError", "ReadTimeout",
                "Timeout"}:
        return ProviderTimeoutError(
            f"no answer within {timeout:g} s; raise the timeout option or check the server",
            **where,
        )
    if names & {"ConnectError", "ConnectionError", "APIConnectionError", "NetworkError",
                "RemoteProtocolError", "TransportError"}:
        reason = scrub(str(exc), secret)[:200]
        return ProviderConnectionError(
            f"could not reach the provider ({reason}); check that the server runs and "
            "the base URL is right", **where,
        )
    return None


def parse_arguments(raw: Any, *, provider: str, model: str) -> dict[str, Any]:
    """Tool-call arguments as a dict, from a JSON string or an already-parsed mapping."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = json.loads(raw)
    except (TypeError, ValueError) as exc:
        raise BadResponseError(
            f"the model sent tool-call arguments that are not JSON: {str(raw)[:200]!r}",
            provider=provider, model=model,
        ) from exc
    if not isinstance(value, dict):
        raise BadResponseError(
            f"the model sent tool-call arguments that are not a JSON object: {str(raw)[:200]!r}",
            provider=provider, model=model,
        )
    return value


def bad_response(detail: str, *, provider: str, model: str) -> BadResponseError:
    return BadResponseError(f"the provider answered with an unusable body: {detail[:300]}",
                            provider=provider, model=model)


_MALFORMED = {"JSONDecodeError", "ValidationError", "APIResponseValidationError",
              "UnknownApiResponseError", "DecodingError"}


def sdk_error(
    exc: BaseException,
    *,
    provider: str,
    model: str,
    timeout: float,
    status: int | None = None,
    headers: Any = None,
    detail: str = "",
    key_env: str = "",
    secret: str | None = None,
) -> ProviderError | None:
    """The ragloom error for an SDK exception, or None when it is not a provider failure."""
    if isinstance(exc, ProviderError):
        return exc
    if status is not None:
        return status_error(status, detail or str(exc), provider=provider, model=model,
                            headers=headers, key_env=key_env, secret=secret)
    mapped = transport_error(exc, provider=provider, model=model, timeout=timeout, secret=secret)
    if mapped is not None:
        return mapped
    if _class_names(exc) & _MALFORMED:
        return bad_response(scrub(str(exc), secret), provider=provider, model=model)
    return None

"""Retrying any chat model or embedder on failures that may pass.

Rate limits (waiting what the provider asked for), timeouts, unreachable hosts and
5xx answers are retried with exponential backoff and jitter; anything else is
raised at once. Waits go through an injected ``sleep`` so tests count them.
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard, TypeVar

from ragloom.errors import InvalidInputError, ProviderError, RateLimitError
from ragloom.protocols import EmbeddingProvider, ModelProvider
from ragloom.types import ChatDelta, ChatMessage, ChatResponse, Embedding, Tool

T = TypeVar("T")
Sleep = Callable[[float], None]


def is_model(provider: object) -> TypeGuard[ModelProvider]:
    # Look at the class, not the instance: isinstance() with the protocols would read
    # an embedder's ``dimension`` property, which may call the provider.
    return callable(getattr(type(provider), "chat", None))


def is_embedder(provider: object) -> TypeGuard[EmbeddingProvider]:
    return callable(getattr(type(provider), "embed_documents", None))


def is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, ProviderError) and exc.retryable


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait: ``base_delay * 2**(attempt-1)``, capped at
    ``max_delay``, minus up to ``jitter`` (a fraction) at random so clients that
    failed together do not retry together. A rate limit's ``retry_after`` wins."""

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.25

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise InvalidInputError("max_attempts must be at least 1")
        if not 0 <= self.jitter <= 1:
            raise InvalidInputError("jitter is a fraction between 0 and 1")

    def delay(self, attempt: int, error: BaseException, draw: Callable[[], float]) -> float:
        if isinstance(error, RateLimitError) and error.retry_after is not None:
            return max(0.0, float(error.retry_after))
        backoff = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return backoff * (1 - self.jitter * draw())


class _Retrier:
    def __init__(self, policy: RetryPolicy, sleep: Sleep, draw: Callable[[], float]) -> None:
        self.policy = policy
        self.sleep = sleep
        self.draw = draw
        self.retries = 0

    def call(self, fn: Callable[[], T]) -> T:
        attempt = 1
        while True:
            try:
                return fn()
            except ProviderError as exc:
                if not exc.retryable or attempt >= self.policy.max_attempts:
                    raise
                self.sleep(self.policy.delay(attempt, exc, self.draw))
                self.retries += 1
                attempt += 1

    def stream(self, start: Callable[[], Iterator[ChatDelta]]) -> Iterator[ChatDelta]:
        """Retry a stream only until its first delta: after that the caller has
        seen text, and starting over would repeat it."""
        attempt = 1
        while True:
            iterator = start()
            try:
                first = next(iterator)
            except StopIteration:
                return
            except ProviderError as exc:
                if not exc.retryable or attempt >= self.policy.max_attempts:
                    raise
                self.sleep(self.policy.delay(attempt, exc, self.draw))
                self.retries += 1
                attempt += 1
                continue
            yield first
            yield from iterator
            return


class RetryingModel:
    """A chat model that retries transient failures of the model it wraps."""

    def __init__(
        self,
        model: ModelProvider,
        *,
        policy: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.inner = model
        self._retrier = _Retrier(policy or RetryPolicy(), sleep, random)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def supports_response_format(self) -> bool:
        """Whether the wrapped model takes ``response_format`` (structured output)."""
        return bool(getattr(self.inner, "supports_response_format", False))

    @property
    def retries(self) -> int:
        """Retries made so far (for logs and tests)."""
        return self._retrier.retries

    def chat(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage],
        *,
        tools: Sequence[Tool] = (),
        stop: Sequence[str] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_format: Mapping[str, Any] | None = None,
    ) -> ChatResponse:
        return self._retrier.call(lambda: self.inner.chat(
            messages, tools=tools, stop=stop, temperature=temperature, max_tokens=max_tokens,
            **formatted(response_format)))

    def stream(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage],
        *,
        tools: Sequence[Tool] = (),
        stop: Sequence[str] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_format: Mapping[str, Any] | None = None,
    ) -> Iterator[ChatDelta]:
        return self._retrier.stream(lambda: self.inner.stream(
            messages, tools=tools, stop=stop, temperature=temperature, max_tokens=max_tokens,
            **formatted(response_format)))


class RetryingEmbedder:
    """An embedder that retries transient failures of the embedder it wraps."""

    def __init__(
        self,
        embedder: EmbeddingProvider,
        *,
        policy: RetryPolicy | None = None,
        sleep: Sleep = time.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.inner = embedder
        self._retrier = _Retrier(policy or RetryPolicy(), sleep, random)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimension(self) -> int:
        # The first read may probe the provider, so it is retried like any call.
        return self._retrier.call(lambda: self.inner.dimension)

    @property
    def retries(self) -> int:
        return self._retrier.retries

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        return self._retrier.call(lambda: self.inner.embed_documents(texts))

    def embed_query(self, text: str) -> Embedding:
        return self._retrier.call(lambda: self.inner.embed_query(text))


def Retrying(
    provider: ModelProvider | EmbeddingProvider,
    *,
    max_attempts: int = 4,
    base_delay: float = 0.5,
    max_delay: float = 30.0,
    jitter: float = 0.25,
    sleep: Sleep = time.sleep,
    random: Callable[[], float] = _random.random,
) -> RetryingModel | RetryingEmbedder:
    """Wrap a chat model (-> :class:`RetryingModel`) or an embedder
    (-> :class:`RetryingEmbedder`) with the same retry policy."""
    policy = RetryPolicy(max_attempts=max_attempts, base_delay=base_delay,
                         max_delay=max_delay, jitter=jitter)
    if is_model(provider):
        return RetryingModel(provider, policy=policy, sleep=sleep, random=random)
    if is_embedder(provider):
        return RetryingEmbedder(provider, policy=policy, sleep=sleep, random=random)
    raise InvalidInputError(f"cannot retry {type(provider).__name__}: it is neither a chat "
                            "model nor an embedder")


def formatted(response_format: Mapping[str, Any] | None) -> dict[str, Any]:
    """``response_format`` as a keyword argument, only when given (models without
    structured output do not take it)."""
    return {} if response_format is None else {"response_format": response_format}

"""Client-side rate limits (requests and tokens per minute) with token buckets.

Staying under a provider's limits is cheaper than being told off with a 429. The
token count of a request is estimated before the call (about four characters a
token) and corrected with the usage the provider reports afterwards.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ragloom.errors import InvalidInputError
from ragloom.protocols import EmbeddingProvider, ModelProvider, as_messages
from ragloom.resilience.retry import formatted, is_embedder, is_model
from ragloom.types import ChatDelta, ChatMessage, ChatResponse, Embedding, Tool

Clock = Callable[[], float]
Sleep = Callable[[float], None]


def estimate_tokens(text: str) -> int:
    return len(text) // 4 + 1


class TokenBucket:
    """Holds up to ``per_minute`` units and refills ``per_minute / 60`` a second.

    ``acquire`` waits (through ``sleep``) until the units are there; ``charge``
    takes units after the fact and may leave a debt that later callers wait off.
    """

    def __init__(self, per_minute: float, *, clock: Clock = time.monotonic,
                 sleep: Sleep = time.sleep) -> None:
        if per_minute <= 0:
            raise InvalidInputError(f"a rate limit must be positive, not {per_minute}")
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.clock = clock
        self.sleep = sleep
        self._tokens = self.capacity
        self._stamp = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self.clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    def acquire(self, amount: float = 1.0) -> float:
        """Take ``amount`` units, waiting if needed; returns the seconds waited."""
        # A request larger than the whole bucket could never pass; let it through
        # when the bucket is full instead.
        amount = min(float(amount), self.capacity)
        waited = 0.0
        with self._lock:
            self._refill()
            while self._tokens < amount:
                wait = (amount - self._tokens) / self.rate
                self.sleep(wait)
                waited += wait
                self._refill()
            self._tokens -= amount
        return waited

    def charge(self, amount: float) -> None:
        with self._lock:
            self._refill()
            self._tokens -= amount


class _Limits:
    def __init__(self, rpm: float | None, tpm: float | None, clock: Clock, sleep: Sleep) -> None:
        self.requests = TokenBucket(rpm, clock=clock, sleep=sleep) if rpm else None
        self.tokens = TokenBucket(tpm, clock=clock, sleep=sleep) if tpm else None

    def before(self, estimate: int) -> None:
        if self.requests is not None:
            self.requests.acquire(1)
        if self.tokens is not None:
            self.tokens.acquire(estimate)

    def after(self, estimate: int, actual: int) -> None:
        if self.tokens is not None and actual > estimate:
            self.tokens.charge(actual - estimate)


class RateLimitedModel:
    """A chat model kept under requests- and tokens-per-minute limits."""

    def __init__(self, model: ModelProvider, *, requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None, clock: Clock = time.monotonic,
                 sleep: Sleep = time.sleep) -> None:
        self.inner = model
        self._limits = _Limits(requests_per_minute, tokens_per_minute, clock, sleep)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def supports_response_format(self) -> bool:
        """Whether the wrapped model takes ``response_format`` (structured output)."""
        return bool(getattr(self.inner, "supports_response_format", False))

    @staticmethod
    def _estimate(messages: str | ChatMessage | Sequence[ChatMessage],
                  max_tokens: int | None) -> int:
        text = sum(estimate_tokens(m.content) for m in as_messages(messages))
        return text + (max_tokens or 0)

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
        estimate = self._estimate(messages, max_tokens)
        self._limits.before(estimate)
        response = self.inner.chat(messages, tools=tools, stop=stop, temperature=temperature,
                                   max_tokens=max_tokens,
            **formatted(response_format))
        self._limits.after(estimate, response.usage.input_tokens + response.usage.output_tokens)
        return response

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
        estimate = self._estimate(messages, max_tokens)
        self._limits.before(estimate)
        for delta in self.inner.stream(messages, tools=tools, stop=stop,
                                       temperature=temperature, max_tokens=max_tokens,
            **formatted(response_format)):
            if delta.response is not None:
                usage = delta.response.usage
                self._limits.after(estimate, usage.input_tokens + usage.output_tokens)
            yield delta


class RateLimitedEmbedder:
    """An embedder kept under requests- and tokens-per-minute limits."""

    def __init__(self, embedder: EmbeddingProvider, *, requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None, clock: Clock = time.monotonic,
                 sleep: Sleep = time.sleep) -> None:
        self.inner = embedder
        self._limits = _Limits(requests_per_minute, tokens_per_minute, clock, sleep)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        self._limits.before(sum(estimate_tokens(t) for t in texts))
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Embedding:
        self._limits.before(estimate_tokens(text))
        return self.inner.embed_query(text)


def RateLimited(
    provider: ModelProvider | EmbeddingProvider,
    *,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    clock: Clock = time.monotonic,
    sleep: Sleep = time.sleep,
) -> RateLimitedModel | RateLimitedEmbedder:
    """Wrap a chat model or an embedder with client-side rate limits."""
    if is_model(provider):
        return RateLimitedModel(provider, requests_per_minute=requests_per_minute,
                                tokens_per_minute=tokens_per_minute, clock=clock, sleep=sleep)
    if is_embedder(provider):
        return RateLimitedEmbedder(provider, requests_per_minute=requests_per_minute,
                                   tokens_per_minute=tokens_per_minute, clock=clock, sleep=sleep)
    raise InvalidInputError(f"cannot rate-limit {type(provider).__name__}: it is neither a "
                            "chat model nor an embedder")


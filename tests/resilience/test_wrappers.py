"""Retry, rate-limit and fallback wrappers around fake providers, with injected time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from ragloom.errors import (
    AuthenticationError,
    BadResponseError,
    InvalidInputError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
)
from ragloom.resilience import (
    FallbackChain,
    RateLimited,
    Retrying,
    RetryingEmbedder,
    RetryingModel,
    TokenBucket,
)
from ragloom.testing.fakes import HashingEmbedder, ScriptedModel
from ragloom.types import ChatDelta, ChatResponse


class FlakyModel(ScriptedModel):
    """Raises the given errors first, then answers."""

    def __init__(self, errors: Sequence[Exception], name: str = "fake:flaky") -> None:
        super().__init__(["ok"], name=name)
        self.errors = list(errors)
        self.attempts = 0

    def chat(self, messages: Any, **kwargs: Any) -> ChatResponse:
        self.attempts += 1
        if self.errors:
            raise self.errors.pop(0)
        return super().chat(messages, **kwargs)

    def stream(self, messages: Any, **kwargs: Any) -> Iterator[ChatDelta]:
        self.attempts += 1
        if self.errors:
            raise self.errors.pop(0)
        yield from super().stream(messages, **kwargs)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_backoff_is_exponential_capped_and_jittered() -> None:
    errors = [ProviderConnectionError("down")] * 5
    model = FlakyModel(errors)
    waits: list[float] = []
    wrapped = Retrying(model, max_attempts=6, base_delay=1, max_delay=5, jitter=0.5,
                       sleep=waits.append, random=lambda: 1.0)
    assert isinstance(wrapped, RetryingModel)
    assert wrapped.chat("hi").text == "ok"
    assert waits == [0.5, 1.0, 2.0, 2.5, 2.5]  # 1,2,4,5,5 halved by full jitter
    assert model.attempts == 6 and wrapped.retries == 5


def test_retry_after_is_honoured_exactly() -> None:
    model = FlakyModel([RateLimitError("slow down", retry_after=42.0)])
    waits: list[float] = []
    assert Retrying(model, sleep=waits.append).chat("hi").text == "ok"
    assert waits == [42.0]


def test_gives_up_after_max_attempts() -> None:
    model = FlakyModel([ProviderTimeoutError("slow")] * 5)
    waits: list[float] = []
    with pytest.raises(ProviderTimeoutError):
        Retrying(model, max_attempts=3, sleep=waits.append).chat("hi")
    assert model.attempts == 3 and len(waits) == 2


@pytest.mark.parametrize("error", [
    AuthenticationError("no"), BadResponseError("garbage"), InvalidInputError("bad")])
def test_permanent_errors_are_not_retried(error: Exception) -> None:
    model = FlakyModel([error])
    waits: list[float] = []
    with pytest.raises(type(error)):
        Retrying(model, sleep=waits.append).chat("hi")
    assert model.attempts == 1 and waits == []


def test_server_errors_marked_retryable_are_retried() -> None:
    model = FlakyModel([BadResponseError("HTTP 502", retryable=True)])
    waits: list[float] = []
    assert Retrying(model, sleep=waits.append).chat("hi").text == "ok"
    assert len(waits) == 1


def test_stream_retries_only_before_the_first_delta() -> None:
    model = FlakyModel([ProviderConnectionError("down")])
    waits: list[float] = []
    deltas = list(Retrying(model, sleep=waits.append).stream("hi"))
    assert deltas[-1].response is not None and deltas[-1].response.text == "ok"
    assert model.errors == [] and len(waits) == 1


def test_retrying_wraps_embedders_too() -> None:
    class FlakyEmbedder(HashingEmbedder):
        failures = 2

        def embed_documents(self, texts: Sequence[str]) -> list[Any]:
            if self.failures:
                self.failures -= 1
                raise RateLimitError("slow", retry_after=1.5)
            return super().embed_documents(texts)

    waits: list[float] = []
    wrapped = Retrying(FlakyEmbedder(8), sleep=waits.append)
    assert isinstance(wrapped, RetryingEmbedder)
    assert len(wrapped.embed_documents(["a", "b"])) == 2
    assert waits == [1.5, 1.5] and wrapped.dimension == 8


def test_token_bucket_waits_for_refill() -> None:
    clock = Clock()
    bucket = TokenBucket(60, clock=clock, sleep=clock.sleep)  # one unit a second
    for _ in range(60):
        assert bucket.acquire() == 0
    assert bucket.acquire() == pytest.approx(1.0)
    assert bucket.acquire(3) == pytest.approx(3.0)
    assert clock.sleeps == [pytest.approx(1.0), pytest.approx(3.0)]


def test_rate_limited_model_spaces_requests() -> None:
    clock = Clock()
    model = ScriptedModel(["answer"])
    limited = RateLimited(model, requests_per_minute=2, clock=clock, sleep=clock.sleep)
    for _ in range(4):
        limited.chat("hi")  # type: ignore[union-attr]
    assert len(model.calls) == 4
    assert clock.sleeps == [pytest.approx(30.0), pytest.approx(30.0)]


def test_rate_limited_tokens_charge_actual_usage() -> None:
    clock = Clock()
    model = ScriptedModel(["one two three four five six seven eight nine ten"])
    limited = RateLimited(model, tokens_per_minute=10, clock=clock, sleep=clock.sleep)
    limited.chat("hi")  # type: ignore[union-attr]  # estimate 1, actual 1 + 10 -> debt
    assert clock.sleeps == []
    limited.chat("hi")  # type: ignore[union-attr]
    assert clock.sleeps == [pytest.approx(12.0)]  # a debt of 1 + the 1 needed, at 1/6 per s


def test_rate_limited_embedder() -> None:
    clock = Clock()
    embedder = HashingEmbedder(8)
    limited = RateLimited(embedder, requests_per_minute=1, clock=clock, sleep=clock.sleep)
    limited.embed_query("a")  # type: ignore[union-attr]
    limited.embed_query("b")  # type: ignore[union-attr]
    assert clock.sleeps == [pytest.approx(60.0)]


def test_fallback_moves_on_after_provider_errors_only() -> None:
    first = FlakyModel([ProviderConnectionError("down")], name="fake:first")
    second = ScriptedModel(["from second"], name="fake:second")
    chain = FallbackChain([first, second])
    response = chain.chat("hi")
    assert response.text == "from second" and response.model == "fake:second"
    assert chain.name == "fake:first"
    bad_input = FlakyModel([InvalidInputError("empty question")], name="fake:first")
    third = ScriptedModel(["never"])
    with pytest.raises(InvalidInputError):
        FallbackChain([bad_input, third]).chat("hi")
    assert third.calls == []


def test_fallback_raises_when_every_model_fails() -> None:
    chain = FallbackChain([FlakyModel([ProviderConnectionError("a down")]),
                           FlakyModel([ProviderTimeoutError("b slow")])])
    with pytest.raises(ProviderError, match="all 2 models failed") as info:
        chain.chat("hi")
    assert isinstance(info.value.__cause__, ProviderTimeoutError)
    with pytest.raises(InvalidInputError):
        FallbackChain([])


def test_fallback_stream() -> None:
    chain = FallbackChain([FlakyModel([ProviderConnectionError("down")]),
                           ScriptedModel(["streamed answer"], name="fake:b")])
    deltas = list(chain.stream("hi"))
    assert "".join(d.text for d in deltas) == "streamed answer"
    assert deltas[-1].response is not None and deltas[-1].response.model == "fake:b"

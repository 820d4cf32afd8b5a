"""Answering from the next chat model when one fails."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ragloom.errors import InvalidInputError, ProviderError
from ragloom.protocols import ModelProvider
from ragloom.resilience.retry import formatted
from ragloom.types import ChatDelta, ChatMessage, ChatResponse, Tool


class FallbackChain:
    """Tries each model in order; a :class:`ProviderError` moves on to the next.

    ``InvalidInputError`` is raised at once: the next model would refuse the same
    input. ``ChatResponse.model`` tells which model answered. Embedders are not
    chained on purpose: vectors from two models cannot share one index.
    """

    def __init__(self, models: Sequence[ModelProvider]) -> None:
        if not models:
            raise InvalidInputError("FallbackChain needs at least one model")
        self.models = tuple(models)
        self.failures: list[ProviderError] = []

    @property
    def name(self) -> str:
        return self.models[0].name

    @property
    def supports_response_format(self) -> bool:
        """Structured output only when every model in the chain can honour it."""
        return all(getattr(m, "supports_response_format", False) for m in self.models)

    def _exhausted(self, errors: list[ProviderError]) -> ProviderError:
        summary = "; ".join(str(e) for e in errors)
        return ProviderError(f"all {len(errors)} models failed: {summary}",
                             provider="fallback")

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
        errors: list[ProviderError] = []
        for model in self.models:
            try:
                return model.chat(messages, tools=tools, stop=stop, temperature=temperature,
                                  max_tokens=max_tokens, **formatted(response_format))
            except ProviderError as exc:
                errors.append(exc)
                self.failures.append(exc)
        raise self._exhausted(errors) from errors[-1]

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
        errors: list[ProviderError] = []
        for model in self.models:
            iterator = model.stream(messages, tools=tools, stop=stop, temperature=temperature,
                                    max_tokens=max_tokens, **formatted(response_format))
            try:
                first = next(iterator)
            except StopIteration:
                return
            except ProviderError as exc:
                # Only before the first delta: once text is out, switching models
                # would splice two answers together.
                errors.append(exc)
                self.failures.append(exc)
                continue
            yield first
            yield from iterator
            return
        raise self._exhausted(errors) from errors[-1]

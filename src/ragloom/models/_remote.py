"""The call skeleton shared by the hosted chat providers.

Each vendor module keeps its wire shapes (request building, response parsing, stream
events); this base owns what is the same everywhere: the name, turning SDK
exceptions into ragloom errors, timing, and assembling the final ChatResponse.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import Any, NoReturn

from ragloom.errors import BadResponseError, ConfigurationError, InvalidInputError, ProviderError
from ragloom.models._http import bad_response, elapsed, parse_arguments, sdk_error
from ragloom.tracing import chat_span, record_usage, start_chat_span
from ragloom.types import ChatDelta, ChatMessage, ChatResponse, Tool, ToolCall, Usage

# What a finished stream hands back: its tool calls, its token counts and finish reason.
StreamEnd = tuple[Sequence[ToolCall], Usage, str]
# A vendor's stream yields text pieces, then returns how to finish; the finisher runs
# outside the SDK error mapping, so its own BadResponseError passes unchanged.
StreamEvents = Generator[str, None, Callable[[], StreamEnd]]


def no_turns(provider: str) -> InvalidInputError:
    """The error for a conversation of system messages only, which the vendors whose
    APIs keep the system prompt apart (Anthropic, Gemini) cannot send."""
    return InvalidInputError(
        f"{provider}: the conversation has no user or assistant message; send the "
        "question as a user message (a str is one)")


class ProviderBound:
    """Something that calls one model of one provider and maps that SDK's errors."""

    provider: str
    model: str

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    def error(self, exc: Exception) -> ProviderError | None:
        """The ragloom error for an SDK exception, or None to let it through unchanged."""
        raise NotImplementedError

    def _raise(self, exc: Exception) -> NoReturn:
        mapped = self.error(exc)
        if mapped is None:
            raise exc
        raise mapped from exc

    def _bad(self, detail: str) -> BadResponseError:
        return bad_response(detail, provider=self.provider, model=self.model)

    def _arguments(self, raw: Any) -> dict[str, Any]:
        return parse_arguments(raw, provider=self.provider, model=self.model)


class RemoteChatModel(ProviderBound):
    """chat() and stream() around the per-vendor hooks ``_request``, ``_create``,
    ``_parse`` and ``_stream_events``."""

    base_url: str | None
    #: Whether ``response_format`` (OpenAI's json_object / json_schema shape) can be
    #: handed to this vendor's API (see ``_format``).
    supports_response_format: bool = False

    def __init__(self, model: str, *, provider: str, timeout: float) -> None:
        self.model = model
        self.provider = provider
        self.timeout = float(timeout)
        self._client: Any = None
        # Kept only to scrub the key from error messages.
        self._key: str | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    def client(self) -> Any:
        raise NotImplementedError

    def _request(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage],
        tools: Sequence[Tool],
        stop: Sequence[str] | None,
        temperature: float | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        raise NotImplementedError

    def _format(self, request: dict[str, Any], response_format: Mapping[str, Any]) -> None:
        """Put OpenAI's ``response_format`` into a request in the vendor's terms."""
        raise ConfigurationError(f"{self.name} cannot honour response_format "
                                 f"{response_format.get('type')!r}")

    def _prepared(self, messages: str | ChatMessage | Sequence[ChatMessage],
                  tools: Sequence[Tool],
                  stop: Sequence[str] | None, temperature: float | None,
                  max_tokens: int | None, response_format: Mapping[str, Any] | None
                  ) -> dict[str, Any]:
        request = self._request(messages, tools, stop, temperature, max_tokens)
        if response_format and response_format.get("type") != "text":
            self._format(request, response_format)
        return request

    def _create(self, client: Any, request: dict[str, Any]) -> Any:
        """Send one non-streaming request; SDK exceptions are mapped by the caller."""
        raise NotImplementedError

    def _parse(self, response: Any) -> tuple[ChatMessage, Usage, str]:
        """The reply, its token counts (no latency) and its finish reason."""
        raise NotImplementedError

    def _stream_events(self, client: Any, request: dict[str, Any]) -> StreamEvents:
        raise NotImplementedError

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
        request = self._prepared(messages, tools, stop, temperature, max_tokens,
                                 response_format)
        with chat_span(self.name, max_tokens, temperature) as current:
            started = time.perf_counter()
            client = self.client()
            try:
                response = self._create(client, request)
            except Exception as exc:
                self._raise(exc)
            message, usage, finish = self._parse(response)
            record_usage(current, usage.input_tokens, usage.output_tokens, finish)
        return ChatResponse(message=message,
                            usage=dataclasses.replace(usage, latency_s=elapsed(started)),
                            model=self.name, finish_reason=finish)

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
        request = self._prepared(messages, tools, stop, temperature, max_tokens,
                                 response_format)
        # Not made current: a stream is resumed from other contexts (threads).
        current = start_chat_span(self.name, max_tokens, temperature)
        try:
            started = time.perf_counter()
            client = self.client()
            text: list[str] = []
            events = self._stream_events(client, request)
            try:
                while True:
                    piece = next(events)
                    text.append(piece)
                    yield ChatDelta(text=piece)
            except StopIteration as done:
                finish_stream = done.value
            except Exception as exc:
                self._raise(exc)
            calls, usage, finish = finish_stream()
            record_usage(current, usage.input_tokens, usage.output_tokens, finish)
        finally:
            current.end()
        yield ChatDelta(response=ChatResponse(
            message=ChatMessage.assistant("".join(text), calls),
            usage=dataclasses.replace(usage, latency_s=elapsed(started)),
            model=self.name, finish_reason=finish))


def status_sdk_error(
    owner: RemoteChatModel, sdk: Any, exc: Exception, *, key_env: str, secret: str | None
) -> ProviderError | None:
    """``error()`` for SDKs whose HTTP failures are ``sdk.APIStatusError`` (openai, anthropic)."""
    status = headers = None
    detail = ""
    if isinstance(exc, sdk.APIStatusError):
        status, headers, detail = exc.status_code, exc.response.headers, exc.message
    return sdk_error(exc, provider=owner.provider, model=owner.model, timeout=owner.timeout,
                     status=status, headers=headers, detail=detail, key_env=key_env,
                     secret=secret)

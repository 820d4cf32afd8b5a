"""Chat through the OpenAI API or any OpenAI-compatible server (``openai:`` names).

vLLM, llama.cpp's server, LM Studio, Groq and others speak the same
``/v1/chat/completions`` protocol: point ``base_url`` (or ``OPENAI_BASE_URL``) at
them. The key comes only from ``OPENAI_API_KEY``; a server given by base URL may
need none. Needs the ``openai`` extra.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragloom._optional import require
from ragloom.errors import AuthenticationError, ProviderError
from ragloom.models import attachments
from ragloom.models._http import DEFAULT_TIMEOUT, PLACEHOLDER_KEY, env_value
from ragloom.models._remote import RemoteChatModel, StreamEnd, StreamEvents, status_sdk_error
from ragloom.protocols import as_messages
from ragloom.types import ChatMessage, Tool, ToolCall, Usage

KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"


def tool_schema(tool: Tool) -> dict[str, Any]:
    return {"type": "function", "function": {"name": tool.name, "description": tool.description,
                                             "parameters": dict(tool.parameters)}}


ACCEPTED_TYPES = (*sorted(attachments.IMAGE_TYPES), attachments.PDF_TYPE)


def message_content(message: ChatMessage, provider: str = "openai") -> str | list[dict[str, Any]]:
    """A string, unless binary attachments need the list-of-parts form.

    Text attachments alone stay in one string, which every compatible server reads.
    """
    if not message.attachments:
        return message.content
    attachments.check_role(message, provider)
    items = list(attachments.parts(message))
    if all(isinstance(item, str) for item in items):
        return attachments.joined(message.content, [str(item) for item in items])
    content: list[dict[str, Any]] = []
    if message.content:
        content.append({"type": "text", "text": message.content})
    number = 0
    for item in items:
        if isinstance(item, str):
            content.append({"type": "text", "text": item})
            continue
        number += 1
        if attachments.is_image(item):
            content.append({"type": "image_url",
                            "image_url": {"url": attachments.data_url(item)}})
        elif attachments.is_pdf(item):
            content.append({"type": "file", "file": {
                "filename": attachments.filename(item, number),
                "file_data": attachments.data_url(item)}})
        else:
            raise attachments.unsupported(item, provider, ACCEPTED_TYPES)
    return content


def message_dict(message: ChatMessage, provider: str = "openai") -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "",
                "content": message.content}
    data: dict[str, Any] = {"role": message.role,
                            "content": message_content(message, provider)}
    if message.name:
        data["name"] = message.name
    if message.tool_calls:
        data["content"] = data["content"] or None
        data["tool_calls"] = [
            {"id": call.id, "type": "function",
             "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))}}
            for call in message.tool_calls
        ]
    return data


class OpenAIChatModel(RemoteChatModel):
    """A chat model served by the OpenAI API or an OpenAI-compatible server."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        provider: str = "openai",
        stream_usage: bool = True,
    ) -> None:
        super().__init__(model, provider=provider, timeout=timeout)
        self.base_url = base_url or env_value([BASE_URL_ENV])
        # Some compatible servers reject stream_options; let users turn it off.
        self.stream_usage = stream_usage

    # ------------------------------------------------------------------ plumbing

    def _sdk(self) -> Any:
        return require("openai", package="openai", extra="openai", purpose=self.name)

    def client(self) -> Any:
        if self._client is None:
            key = env_value([KEY_ENV])
            if key is None:
                if not self.base_url:
                    raise AuthenticationError(
                        f"no API key: set {KEY_ENV}, or set a base_url for a server that "
                        "needs none", provider=self.provider, model=self.model)
                key = PLACEHOLDER_KEY
            self._key = key
            # Retries belong to ragloom.resilience, so the SDK must not retry on its own.
            self._client = self._sdk().OpenAI(api_key=key, base_url=self.base_url,
                                              timeout=self.timeout, max_retries=0)
        return self._client

    def error(self, exc: Exception) -> ProviderError | None:
        return status_sdk_error(self, self._sdk(), exc, key_env=KEY_ENV, secret=self._key)

    def _request(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage],
        tools: Sequence[Tool],
        stop: Sequence[str] | None,
        temperature: float | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [message_dict(m, self.provider) for m in as_messages(messages)],
        }
        if tools:
            request["tools"] = [tool_schema(t) for t in tools]
        if stop:
            request["stop"] = list(stop)
        if temperature is not None:
            request["temperature"] = temperature
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        return request

    # ------------------------------------------------------------------ vendor hooks

    supports_response_format = True

    def _format(self, request: dict[str, Any], response_format: Mapping[str, Any]) -> None:
        request["response_format"] = dict(response_format)

    def _create(self, client: Any, request: dict[str, Any]) -> Any:
        return client.chat.completions.create(**request)

    def _parse(self, response: Any) -> tuple[ChatMessage, Usage, str]:
        try:
            choice = response.choices[0]
            message = choice.message
            calls = tuple(
                ToolCall(id=call.id, name=call.function.name,
                         arguments=self._arguments(call.function.arguments))
                for call in (message.tool_calls or ())
            )
            usage = response.usage
            return (ChatMessage.assistant(message.content or "", calls),
                    Usage(input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                          output_tokens=int(getattr(usage, "completion_tokens", 0) or 0)),
                    choice.finish_reason or "stop")
        except (AttributeError, IndexError, TypeError) as exc:
            raise self._bad(f"no choices in {str(response)[:200]!r}") from exc

    def _stream_events(self, client: Any, request: dict[str, Any]) -> StreamEvents:
        request["stream"] = True
        if self.stream_usage:
            request["stream_options"] = {"include_usage": True}
        calls: dict[int, dict[str, str]] = {}
        usage = Usage()
        finish = "stop"
        received = 0
        for chunk in client.chat.completions.create(**request):
            received += 1
            if getattr(chunk, "usage", None) is not None:
                usage = Usage(input_tokens=int(chunk.usage.prompt_tokens or 0),
                              output_tokens=int(chunk.usage.completion_tokens or 0))
            for choice in chunk.choices or ():
                delta = choice.delta
                if choice.finish_reason:
                    finish = choice.finish_reason
                for call in getattr(delta, "tool_calls", None) or ():
                    slot = calls.setdefault(call.index, {"id": "", "name": "", "args": ""})
                    slot["id"] = call.id or slot["id"]
                    if call.function is not None:
                        slot["name"] += call.function.name or ""
                        slot["args"] += call.function.arguments or ""
                if delta.content:
                    yield delta.content

        def end() -> StreamEnd:
            if not received:
                raise self._bad("the stream ended without a single event")
            tool_calls = [ToolCall(id=slot["id"], name=slot["name"],
                                   arguments=self._arguments(slot["args"]))
                          for _, slot in sorted(calls.items())]
            return tool_calls, usage, finish
        return end


def create_model(model: str, *, provider: str = "openai", **options: Any) -> OpenAIChatModel:
    """Registry entry: ``openai:gpt-4o-mini``; options ``base_url``, ``timeout``."""
    return OpenAIChatModel(model, provider=provider, **options)

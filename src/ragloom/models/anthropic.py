"""Chat through Anthropic's Messages API (``anthropic:`` names).

The key comes only from ``ANTHROPIC_API_KEY``; ``ANTHROPIC_BASE_URL`` or the
``base_url`` option points at a proxy or gateway. Needs the ``anthropic`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragloom._optional import require
from ragloom.errors import AuthenticationError, ProviderError
from ragloom.models import attachments
from ragloom.models._http import DEFAULT_TIMEOUT, env_value
from ragloom.models._remote import (
    RemoteChatModel,
    StreamEnd,
    StreamEvents,
    no_turns,
    status_sdk_error,
)
from ragloom.protocols import as_messages
from ragloom.types import ChatMessage, Tool, ToolCall, Usage

KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
DEFAULT_MAX_TOKENS = 1024


def tool_schema(tool: Tool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description,
            "input_schema": dict(tool.parameters)}


ACCEPTED_TYPES = (*sorted(attachments.IMAGE_TYPES), attachments.PDF_TYPE)


def attachment_blocks(message: ChatMessage, provider: str = "anthropic") -> list[dict[str, Any]]:
    """Text attachments as text blocks, images as image blocks, PDFs as document blocks."""
    if not message.attachments:
        return []
    attachments.check_role(message, provider)
    blocks: list[dict[str, Any]] = []
    for item in attachments.parts(message):
        if isinstance(item, str):
            blocks.append({"type": "text", "text": item})
        elif attachments.is_image(item) or attachments.is_pdf(item):
            kind = "image" if attachments.is_image(item) else "document"
            blocks.append({"type": kind, "source": {
                "type": "base64", "media_type": item.mime_type.lower(),
                "data": attachments.base64_of(item)}})
        else:
            raise attachments.unsupported(item, provider, ACCEPTED_TYPES)
    return blocks


def split_messages(
    messages: Sequence[ChatMessage], provider: str = "anthropic"
) -> tuple[str, list[dict[str, Any]]]:
    """The system prompt and the conversation in Anthropic's shape.

    Tool results travel as ``tool_result`` blocks in a user turn; consecutive turns
    of one role are merged because the API wants user and assistant to alternate.
    """
    system = "\n\n".join(_system_text(m, provider) for m in messages if m.role == "system")
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        blocks: list[dict[str, Any]]
        if message.role == "tool":
            role = "user"
            blocks = [{"type": "tool_result", "tool_use_id": message.tool_call_id or "",
                       "content": message.content}]
        else:
            role = message.role
            blocks = [{"type": "text", "text": message.content}] if message.content else []
            blocks += attachment_blocks(message, provider)
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
                       for c in message.tool_calls]
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return system, turns


def _system_text(message: ChatMessage, provider: str) -> str:
    # The system prompt is a plain string here, so its attachments can only be text.
    if not message.attachments:
        return message.content
    attachments.check_role(message, provider)
    return attachments.joined(message.content, [str(p) for p in attachments.parts(message)])


class AnthropicChatModel(RemoteChatModel):
    """A Claude model through the Messages API."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        provider: str = "anthropic",
    ) -> None:
        super().__init__(model, provider=provider, timeout=timeout)
        self.base_url = base_url or env_value([BASE_URL_ENV])
        self.max_tokens = max_tokens

    def _sdk(self) -> Any:
        return require("anthropic", package="anthropic", extra="anthropic", purpose=self.name)

    def client(self) -> Any:
        if self._client is None:
            key = env_value([KEY_ENV])
            if key is None:
                raise AuthenticationError(f"no API key: set {KEY_ENV}",
                                          provider=self.provider, model=self.model)
            self._key = key
            # Retries belong to ragloom.resilience, so the SDK must not retry on its own.
            self._client = self._sdk().Anthropic(api_key=key, base_url=self.base_url,
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
        system, turns = split_messages(as_messages(messages), self.provider)
        if not turns:
            raise no_turns(self.provider)
        request: dict[str, Any] = {"model": self.model, "messages": turns,
                                   "max_tokens": max_tokens or self.max_tokens}
        if system:
            request["system"] = system
        if tools:
            request["tools"] = [tool_schema(t) for t in tools]
        if stop:
            request["stop_sequences"] = list(stop)
        if temperature is not None:
            # Recent SDKs dropped the typed argument; the API still reads the field.
            request["extra_body"] = {"temperature": temperature}
        return request

    def _create(self, client: Any, request: dict[str, Any]) -> Any:
        return client.messages.create(**request)

    def _parse(self, response: Any) -> tuple[ChatMessage, Usage, str]:
        try:
            text = "".join(b.text for b in response.content if b.type == "text")
            calls = tuple(ToolCall(id=b.id, name=b.name, arguments=self._arguments(b.input))
                          for b in response.content if b.type == "tool_use")
            usage = Usage(input_tokens=int(response.usage.input_tokens or 0),
                          output_tokens=int(response.usage.output_tokens or 0))
            finish = str(response.stop_reason or "stop")
        except (AttributeError, TypeError) as exc:
            raise self._bad(f"no content in {str(response)[:200]!r}") from exc
        return ChatMessage.assistant(text, calls), usage, finish

    def _stream_events(self, client: Any, request: dict[str, Any]) -> StreamEvents:
        request["stream"] = True
        blocks: dict[int, dict[str, str]] = {}
        input_tokens = output_tokens = 0
        finish = "stop"
        ended = False
        for event in client.messages.create(**request):
            kind = event.type
            if kind == "message_start":
                input_tokens = int(event.message.usage.input_tokens or 0)
            elif kind == "content_block_start" and event.content_block.type == "tool_use":
                blocks[event.index] = {"id": event.content_block.id,
                                       "name": event.content_block.name, "json": ""}
            elif kind == "content_block_delta":
                if event.delta.type == "text_delta":
                    yield event.delta.text
                elif event.delta.type == "input_json_delta":
                    blocks[event.index]["json"] += event.delta.partial_json
            elif kind == "message_delta":
                finish = str(event.delta.stop_reason or finish)
                output_tokens = int(event.usage.output_tokens or 0)
            elif kind == "message_stop":
                ended = True

        def end() -> StreamEnd:
            if not ended:
                raise self._bad("the stream ended before message_stop")
            calls = [ToolCall(id=b["id"], name=b["name"],
                              arguments=self._arguments(b["json"] or "{}"))
                     for _, b in sorted(blocks.items())]
            return calls, Usage(input_tokens=input_tokens, output_tokens=output_tokens), finish
        return end


def create_model(model: str, *, provider: str = "anthropic", **options: Any) -> AnthropicChatModel:
    """Registry entry: ``anthropic:claude-...``; options ``base_url``, ``timeout``,
    ``max_tokens`` (the API requires one; default 1024)."""
    return AnthropicChatModel(model, provider=provider, **options)

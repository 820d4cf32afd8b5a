"""Chat with a model served by Ollama (``ollama:`` names).

The server comes from the ``host`` option or ``OLLAMA_HOST`` (default
``http://127.0.0.1:11434``); no key is needed. Needs the ``ollama`` extra.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragloom._optional import require
from ragloom.errors import ProviderError
from ragloom.models import attachments
from ragloom.models._http import DEFAULT_TIMEOUT, bad_response, env_value, sdk_error
from ragloom.models._remote import ProviderBound, RemoteChatModel, StreamEnd, StreamEvents
from ragloom.protocols import as_messages
from ragloom.types import ChatMessage, Tool, ToolCall, Usage

HOST_ENV = "OLLAMA_HOST"
DEFAULT_HOST = "http://127.0.0.1:11434"


def resolve_host(host: str | None) -> str:
    return host or env_value([HOST_ENV]) or DEFAULT_HOST


def tool_schema(tool: Tool) -> dict[str, Any]:
    return {"type": "function", "function": {"name": tool.name, "description": tool.description,
                                             "parameters": dict(tool.parameters)}}


def with_attachments(message: ChatMessage, data: dict[str, Any], provider: str) -> None:
    """Text attachments join the content; images go in ``images`` (Ollama reads no files).

    Images are handed to the SDK as bytes: it base64-encodes them for the wire, and a
    base64 string would first be probed as a file path.
    """
    if not message.attachments:
        return
    attachments.check_role(message, provider)
    texts: list[str] = []
    images: list[bytes] = []
    for item in attachments.parts(message):
        if isinstance(item, str):
            texts.append(item)
        elif attachments.is_image(item):
            images.append(item.data)
        else:
            raise attachments.unsupported(item, provider, sorted(attachments.IMAGE_TYPES))
    if texts:
        data["content"] = attachments.joined(message.content, texts)
    if images:
        data["images"] = images


def message_dicts(
    messages: Sequence[ChatMessage], provider: str = "ollama"
) -> list[dict[str, Any]]:
    """Ollama names tool results by function name, not by call id, so look the name up."""
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for message in messages:
        data: dict[str, Any] = {"role": message.role, "content": message.content}
        with_attachments(message, data, provider)
        if message.tool_calls:
            names.update({c.id: c.name for c in message.tool_calls})
            data["tool_calls"] = [{"function": {"name": c.name, "arguments": dict(c.arguments)}}
                                  for c in message.tool_calls]
        if message.role == "tool":
            data["tool_name"] = message.name or names.get(message.tool_call_id or "", "")
        out.append(data)
    return out


class OllamaClientMixin(ProviderBound):
    """Client creation and error mapping shared by the chat model and the embedder."""

    host: str
    timeout: float
    _client: Any

    def _sdk(self) -> Any:
        return require("ollama", package="ollama", extra="ollama",
                       purpose=self.name)

    def client(self) -> Any:
        if self._client is None:
            self._client = self._sdk().Client(host=self.host, timeout=self.timeout)
        return self._client

    def error(self, exc: Exception) -> ProviderError | None:
        sdk = self._sdk()
        where: dict[str, Any] = {"provider": self.provider, "model": self.model}
        if isinstance(exc, sdk.ResponseError):
            status = int(getattr(exc, "status_code", -1) or -1)
            if status < 100:
                return bad_response(str(exc.error), **where)
            return sdk_error(exc, timeout=self.timeout, status=status, detail=str(exc.error),
                             **where)
        return sdk_error(exc, timeout=self.timeout, **where)


class OllamaChatModel(OllamaClientMixin, RemoteChatModel):
    """A chat model on an Ollama server."""

    def __init__(
        self,
        model: str,
        *,
        host: str | None = None,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        provider: str = "ollama",
        keep_alive: str | None = None,
    ) -> None:
        super().__init__(model, provider=provider, timeout=timeout)
        self.host = resolve_host(host or base_url)
        self.keep_alive = keep_alive

    def __repr__(self) -> str:
        return f"OllamaChatModel(model={self.model!r}, host={self.host!r})"

    def _request(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage],
        tools: Sequence[Tool],
        stop: Sequence[str] | None,
        temperature: float | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if stop:
            options["stop"] = list(stop)
        if temperature is not None:
            options["temperature"] = temperature
        if max_tokens is not None:
            options["num_predict"] = max_tokens
        request: dict[str, Any] = {"model": self.model,
                                   "messages": message_dicts(as_messages(messages),
                                                         self.provider)}
        if tools:
            request["tools"] = [tool_schema(t) for t in tools]
        if options:
            request["options"] = options
        if self.keep_alive is not None:
            request["keep_alive"] = self.keep_alive
        return request

    supports_response_format = True

    def _format(self, request: dict[str, Any], response_format: Mapping[str, Any]) -> None:
        # Ollama's "format": "json", or a JSON schema it decodes under.
        spec = response_format.get("json_schema")
        request["format"] = (dict(spec.get("schema", {})) if isinstance(spec, Mapping)
                             else "json")

    def _calls(self, message: Any, start: int = 0) -> list[ToolCall]:
        return [
            ToolCall(id=str(getattr(call, "id", None) or f"call_{start + i}"),
                     name=call.function.name, arguments=self._arguments(call.function.arguments))
            for i, call in enumerate(getattr(message, "tool_calls", None) or ())
        ]

    def _create(self, client: Any, request: dict[str, Any]) -> Any:
        return client.chat(**request)

    def _parse(self, response: Any) -> tuple[ChatMessage, Usage, str]:
        if getattr(response, "message", None) is None:
            raise self._bad("no message in the answer")
        usage = Usage(input_tokens=int(response.prompt_eval_count or 0),
                      output_tokens=int(response.eval_count or 0))
        message = ChatMessage.assistant(response.message.content or "",
                                        self._calls(response.message))
        return message, usage, str(response.done_reason or "stop")

    def _stream_events(self, client: Any, request: dict[str, Any]) -> StreamEvents:
        calls: list[ToolCall] = []
        last: Any = None
        for part in client.chat(stream=True, **request):
            last = part
            message = part.message
            if message is not None:
                calls += self._calls(message, len(calls))
                if message.content:
                    yield message.content

        def end() -> StreamEnd:
            if last is None or not last.done:
                raise self._bad("the stream ended before a part with done=true")
            usage = Usage(input_tokens=int(last.prompt_eval_count or 0),
                          output_tokens=int(last.eval_count or 0))
            return calls, usage, str(last.done_reason or "stop")
        return end


def create_model(model: str, *, provider: str = "ollama", **options: Any) -> OllamaChatModel:
    """Registry entry: ``ollama:llama3.2``; options ``host`` (or ``base_url``), ``timeout``."""
    return OllamaChatModel(model, provider=provider, **options)

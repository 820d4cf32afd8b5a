"""Chat with Google's Gemini models through the Gemini API (``gemini:`` names).

The key comes only from ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``; the ``base_url``
option (or ``GEMINI_BASE_URL``) points at a proxy or a test server. Needs the
``gemini`` extra (the ``google-genai`` SDK).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragloom._optional import require
from ragloom.errors import AuthenticationError, ProviderError
from ragloom.models import attachments
from ragloom.models._http import DEFAULT_TIMEOUT, env_value, header, sdk_error
from ragloom.models._remote import RemoteChatModel, StreamEnd, StreamEvents, no_turns
from ragloom.protocols import as_messages
from ragloom.types import BinaryDocument, ChatMessage, Tool, ToolCall, Usage

KEY_ENVS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
BASE_URL_ENV = "GEMINI_BASE_URL"


def accepts(doc: BinaryDocument) -> bool:
    """Gemini reads images, PDFs, audio and video inline."""
    kind = doc.mime_type.lower()
    return (attachments.is_image(doc) or attachments.is_pdf(doc)
            or kind.startswith(("audio/", "video/")))


def attachment_parts(message: ChatMessage, provider: str = "gemini") -> list[dict[str, Any]]:
    """Text attachments as text parts, binary ones as ``inline_data`` parts.

    Plain dicts of the shape ``types.Part.from_bytes`` builds, so this stays importable
    without the SDK; the SDK validates them into ``Part`` objects and base64-encodes.
    """
    if not message.attachments:
        return []
    attachments.check_role(message, provider)
    out: list[dict[str, Any]] = []
    for item in attachments.parts(message):
        if isinstance(item, str):
            out.append({"text": item})
        elif accepts(item):
            out.append({"inline_data": {"mime_type": item.mime_type, "data": item.data}})
        else:
            raise attachments.unsupported(
                item, provider, (*sorted(attachments.IMAGE_TYPES), attachments.PDF_TYPE,
                                 "audio/*", "video/*"))
    return out


def _system_text(message: ChatMessage, provider: str) -> str:
    if not message.attachments:
        return message.content
    attachments.check_role(message, provider)
    return attachments.joined(message.content, [str(p) for p in attachments.parts(message)])


def contents(
    messages: Sequence[ChatMessage], provider: str = "gemini"
) -> tuple[str, list[dict[str, Any]]]:
    """The system instruction and the conversation as Gemini ``contents``.

    Gemini answers function calls by function name, so tool results look the name
    up from the assistant's earlier calls.
    """
    system = "\n\n".join(_system_text(m, provider) for m in messages if m.role == "system")
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        parts: list[dict[str, Any]] = []
        if message.role == "tool":
            role = "user"
            call_id = message.tool_call_id or ""
            parts.append({"function_response": {
                "id": call_id or None, "name": message.name or names.get(call_id, ""),
                "response": {"result": message.content}}})
        else:
            role = "model" if message.role == "assistant" else "user"
            if message.content:
                parts.append({"text": message.content})
            parts += attachment_parts(message, provider)
            for call in message.tool_calls:
                names[call.id] = call.name
                parts.append({"function_call": {"id": call.id, "name": call.name,
                                                "args": dict(call.arguments)}})
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})
    return system, out


class GeminiChatModel(RemoteChatModel):
    """A Gemini model through the google-genai SDK."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        provider: str = "gemini",
    ) -> None:
        super().__init__(model, provider=provider, timeout=timeout)
        self.base_url = base_url or env_value([BASE_URL_ENV])

    def _sdk(self) -> Any:
        return require("google.genai", package="google-genai", extra="gemini",
                       purpose=self.name)

    def client(self) -> Any:
        if self._client is None:
            key = env_value(KEY_ENVS)
            if key is None:
                raise AuthenticationError("no API key: set GEMINI_API_KEY (or GOOGLE_API_KEY)",
                                          provider=self.provider, model=self.model)
            self._key = key
            options: dict[str, Any] = {"timeout": int(self.timeout * 1000)}
            if self.base_url:
                options["base_url"] = self.base_url
            # No retry_options: the SDK then sends each request once, and
            # ragloom.resilience owns retrying.
            self._client = self._sdk().Client(api_key=key, http_options=options)
        return self._client

    def error(self, exc: Exception) -> ProviderError | None:
        errors = require("google.genai.errors", package="google-genai", extra="gemini",
                         purpose=self.name)
        status = headers = None
        detail = ""
        if isinstance(exc, errors.APIError):
            status, detail = int(exc.code), str(exc.message or exc.status or "")
            headers = getattr(getattr(exc, "response", None), "headers", None)
            if header(headers, "retry-after") is None:
                headers = None
        return sdk_error(exc, provider=self.provider, model=self.model, timeout=self.timeout,
                         status=status, headers=headers, detail=detail,
                         key_env="GEMINI_API_KEY", secret=self._key)

    def _request(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage],
        tools: Sequence[Tool],
        stop: Sequence[str] | None,
        temperature: float | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        system, conversation = contents(as_messages(messages), self.provider)
        if not conversation:
            raise no_turns(self.provider)
        # Tools are declarations only: the SDK must not try to call Python functions.
        config: dict[str, Any] = {"automatic_function_calling": {"disable": True}}
        if system:
            config["system_instruction"] = system
        if tools:
            config["tools"] = [{"function_declarations": [
                {"name": t.name, "description": t.description,
                 "parameters_json_schema": dict(t.parameters)} for t in tools]}]
        if stop:
            config["stop_sequences"] = list(stop)
        if temperature is not None:
            config["temperature"] = temperature
        if max_tokens is not None:
            config["max_output_tokens"] = max_tokens
        return {"model": self.model, "contents": conversation, "config": config}

    supports_response_format = True

    def _format(self, request: dict[str, Any], response_format: Mapping[str, Any]) -> None:
        config = request["config"]
        config["response_mime_type"] = "application/json"
        spec = response_format.get("json_schema")
        if isinstance(spec, Mapping):
            config["response_json_schema"] = dict(spec.get("schema", {}))

    def _parts(self, response: Any) -> tuple[str, list[ToolCall], str]:
        candidates = getattr(response, "candidates", None) or []
        if not candidates:
            return "", [], ""
        candidate = candidates[0]
        text: list[str] = []
        calls: list[ToolCall] = []
        for part in getattr(candidate.content, "parts", None) or ():
            if part.text and not getattr(part, "thought", False):
                text.append(part.text)
            if part.function_call is not None:
                call = part.function_call
                calls.append(ToolCall(id=call.id or f"call_{len(calls)}", name=call.name or "",
                                      arguments=self._arguments(call.args)))
        reason = candidate.finish_reason
        finish = str(getattr(reason, "value", reason) or "").lower()
        return "".join(text), calls, finish

    @staticmethod
    def _usage(response: Any) -> Usage:
        meta = getattr(response, "usage_metadata", None)
        return Usage(input_tokens=int(getattr(meta, "prompt_token_count", 0) or 0),
                     output_tokens=int(getattr(meta, "candidates_token_count", 0) or 0))

    def _create(self, client: Any, request: dict[str, Any]) -> Any:
        return client.models.generate_content(**request)

    def _parse(self, response: Any) -> tuple[ChatMessage, Usage, str]:
        if not getattr(response, "candidates", None):
            raise self._bad("no candidates in the answer")
        text, calls, finish = self._parts(response)
        return ChatMessage.assistant(text, calls), self._usage(response), finish or "stop"

    def _stream_events(self, client: Any, request: dict[str, Any]) -> StreamEvents:
        calls: list[ToolCall] = []
        finish = ""
        last: Any = None
        for chunk in client.models.generate_content_stream(**request):
            last = chunk
            piece, chunk_calls, chunk_finish = self._parts(chunk)
            calls += chunk_calls
            finish = chunk_finish or finish
            if piece:
                yield piece

        def end() -> StreamEnd:
            if last is None:
                raise self._bad("the stream ended without a single chunk")
            return calls, self._usage(last), finish or "stop"
        return end


def create_model(model: str, *, provider: str = "gemini", **options: Any) -> GeminiChatModel:
    """Registry entry: ``gemini:gemini-2.0-flash``; options ``base_url``, ``timeout``."""
    return GeminiChatModel(model, provider=provider, **options)

"""The ``/v1/responses`` request, its input items, and the stored conversation."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragloom.server.v1.errors import bad_request
from ragloom.types import ChatMessage

INCLUDABLE = ("file_search_call.results", "message.output_text.logprobs")


class FileSearchTool(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: str
    vector_store_ids: list[str] = Field(min_length=1)
    filters: dict[str, Any] | None = None
    max_num_results: int = Field(5, ge=1, le=50)
    ranking_options: dict[str, Any] | None = None


class ResponseCreate(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str
    input: str | list[dict[str, Any]]
    instructions: str | None = None
    tools: list[dict[str, Any]] = []
    tool_choice: str | dict[str, Any] = "auto"
    include: list[str] = []
    stream: bool = False
    store: bool = True
    previous_response_id: str | None = None
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = Field(None, ge=0.0, le=1.0)
    max_output_tokens: int | None = Field(None, ge=1)
    metadata: dict[str, str] | None = None
    parallel_tool_calls: bool | None = None
    conversation: Any = None
    background: bool | None = None
    user: str | None = None
    truncation: str | None = None
    text: dict[str, Any] | None = None

    def rag_tool(self) -> dict[str, Any] | None:
        """The args of Llama Stack's ``builtin::rag`` tool group given as a tool
        (``{"name": "builtin::rag", "args": {"vector_db_ids": …, "query_config": …}}``)."""
        for tool in self.tools:
            if is_rag_tool(tool):
                return dict(tool.get("args") or {})
        return None

    def file_search(self) -> FileSearchTool | None:
        """The file_search tool, if any; other tools (but ``builtin::rag``) are refused
        with a 400."""
        found = None
        for index, tool in enumerate(self.tools):
            if is_rag_tool(tool):
                continue
            if tool.get("type") != "file_search":
                raise bad_request(f"tool type {tool.get('type')!r} is not supported; only "
                                  "'file_search' is", f"tools[{index}].type",
                                  code="unsupported_value")
            found = FileSearchTool.model_validate(tool)
        return found

    def check(self) -> None:
        for item in self.include:
            if item not in INCLUDABLE:
                raise bad_request(f"include value {item!r} is not supported",
                                  "include", code="unsupported_value")
        if self.conversation is not None and self.previous_response_id:
            raise bad_request("send conversation or previous_response_id, not both",
                              "conversation")
        if self.background:
            raise bad_request("background responses are not supported", "background",
                              code="unsupported_parameter")
        choice = self.tool_choice
        kind = choice.get("type") if isinstance(choice, dict) else choice
        if kind not in ("auto", "none", "required", "file_search"):
            raise bad_request(f"tool_choice {kind!r} is not supported", "tool_choice",
                              code="unsupported_value")

    def searches(self) -> bool:
        choice = self.tool_choice
        kind = choice.get("type") if isinstance(choice, dict) else choice
        return kind != "none"


def is_rag_tool(tool: dict[str, Any]) -> bool:
    name = str(tool.get("name", ""))
    return tool.get("type") in (None, "builtin::rag") and name.split("/")[0] == "builtin::rag"


def _text_of(content: Any, param: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for index, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind not in ("input_text", "output_text", "text"):
                raise bad_request(f"content part type {kind!r} is not supported; send text",
                                  f"{param}.content[{index}].type", code="unsupported_value")
            parts.append(str(part.get("text", "")))
        return "".join(parts)
    raise bad_request("message content must be text or a list of text parts",
                      f"{param}.content")


def input_messages(value: str | list[dict[str, Any]]) -> list[dict[str, str]]:
    """The request's input as ``{"role", "content"}`` messages."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    messages = []
    for index, item in enumerate(value):
        kind = item.get("type", "message")
        role = item.get("role")
        if kind != "message" or role not in ("user", "system", "developer", "assistant"):
            raise bad_request(f"input item {index} is not supported (type {kind!r}, role "
                              f"{role!r}); send messages", f"input[{index}]",
                              code="unsupported_value")
        messages.append({"role": "system" if role == "developer" else role,
                         "content": _text_of(item.get("content"), f"input[{index}]")})
    if not messages:
        raise bad_request("input must not be empty", "input")
    return messages


def chat_messages(messages: list[dict[str, str]]) -> list[ChatMessage]:
    return [ChatMessage(role=m["role"], content=m["content"])  # type: ignore[arg-type]
            for m in messages]


def input_item(item_id: str, message: dict[str, str]) -> dict[str, Any]:
    kind = "output_text" if message["role"] == "assistant" else "input_text"
    return {"id": item_id, "type": "message", "role": message["role"], "status": "completed",
            "content": [{"type": kind, "text": message["content"]}]}

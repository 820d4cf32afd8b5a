"""Chat: tools, messages, usage, responses and streamed deltas, and ``Prompt`` (a
template whose insertions may be documents and chunks). Re-exported by :mod:`ragloom.types`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from ragloom._types.documents import BinaryDocument, Chunk, Document, TextChunk, TextDocument

# --------------------------------------------------------------------------------- chat

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A function the model may call; ``parameters`` is a JSON Schema object."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object",
                                                                   "properties": {}})


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ChatMessage:
    """One message of a conversation.

    ``attachments`` carries documents or chunks for models that accept files or
    images; text-only providers render them into ``content`` via :class:`Prompt`.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    attachments: tuple[Document | Chunk, ...] = ()

    @classmethod
    def system(cls, content: str) -> ChatMessage:
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str) -> ChatMessage:
        return cls(role="user", content=content)

    @classmethod
    def assistant(cls, content: str, tool_calls: Sequence[ToolCall] = ()) -> ChatMessage:
        return cls(role="assistant", content=content, tool_calls=tuple(tool_calls))

    @classmethod
    def tool(cls, content: str, tool_call_id: str) -> ChatMessage:
        return cls(role="tool", content=content, tool_call_id=tool_call_id)


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Tokens and time spent on one model call."""

    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(input_tokens=self.input_tokens + other.input_tokens,
                     output_tokens=self.output_tokens + other.output_tokens,
                     latency_s=self.latency_s + other.latency_s)


@dataclass(frozen=True, kw_only=True)
class ChatResponse:
    """A model's answer: the assistant message plus usage."""

    message: ChatMessage
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str = "stop"

    @property
    def text(self) -> str:
        return self.message.content


@dataclass(frozen=True, kw_only=True)
class ChatDelta:
    """One piece of a streamed answer. The last one carries the full response."""

    text: str = ""
    response: ChatResponse | None = None


# ------------------------------------------------------------------------------- prompt

PromptPart: TypeAlias = str | Document | Chunk


def part_text(part: PromptPart) -> str:
    """The text of a prompt insertion, for text-only models."""
    if isinstance(part, str):
        return part
    if isinstance(part, (TextDocument, TextChunk)):
        return part.text
    if isinstance(part, BinaryDocument):
        return part.placeholder()
    return f"[{type(part).__name__} {part.id}]"


@dataclass(frozen=True)
class Prompt:
    """A template with named insertions, e.g. ``Prompt("Context:\\n{context}\\n\\n{question}")``.

    Insertions may be text, documents, chunks or sequences of them. ``fill`` keeps
    documents and chunks as parts (so multimodal providers can pass files through);
    ``render`` turns everything into text.
    """

    template: str

    def fill(self, **insertions: PromptPart | Sequence[PromptPart]) -> tuple[PromptPart, ...]:
        import string

        parts: list[PromptPart] = []
        for literal, name, spec, conversion in string.Formatter().parse(self.template):
            if literal:
                parts.append(literal)
            if name is None:
                continue
            if spec or conversion:
                raise ValueError(f"prompt field {{{name}}} may not use a format spec")
            if name not in insertions:
                raise KeyError(f"the prompt needs a value for {{{name}}}")
            value = insertions[name]
            if isinstance(value, (str, Document, Chunk)):
                parts.append(value)
            else:
                for index, item in enumerate(value):
                    if index:
                        parts.append("\n\n")
                    parts.append(item)
        return tuple(parts)

    def render(self, **insertions: PromptPart | Sequence[PromptPart]) -> str:
        return "".join(part_text(part) for part in self.fill(**insertions))

    def to_message(
        self, role: Role = "user", **insertions: PromptPart | Sequence[PromptPart]
    ) -> ChatMessage:
        """One message: text and text documents/chunks rendered into ``content`` (as
        :meth:`render` does), binary documents moved to ``attachments``.

        Each binary document leaves ``[attachment N: <mime type>]`` at its place in the
        text, so the prompt can refer to it and the model knows where it belongs.
        """
        text: list[str] = []
        attachments: list[BinaryDocument] = []
        for part in self.fill(**insertions):
            if isinstance(part, BinaryDocument):
                attachments.append(part)
                text.append(part.placeholder(len(attachments)))
            else:
                text.append(part_text(part))
        return ChatMessage(role=role, content="".join(text), attachments=tuple(attachments))

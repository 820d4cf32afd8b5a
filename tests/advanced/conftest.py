from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import as_messages
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.testing.fakes import HashingEmbedder
from ragloom.types import (
    ChatDelta,
    ChatMessage,
    ChatResponse,
    TextDocument,
    Tool,
    ToolCall,
    Usage,
)

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"

DOCS = {
    "warranty.md": "Frames carry a lifetime warranty for the original owner. Components "
                   "such as gears are covered for two years.",
    "battery.txt": "E-bike batteries are covered by a two year battery warranty. Keep the "
                   "battery between 20% and 80% charge.",
    "delivery.md": "We deliver assembled bicycles free of charge within 10 miles.",
    "service.md": "A standard service costs 65 pounds and takes one working day.",
}


def small_kb(name: str = "default", docs: dict[str, str] | None = None) -> VectorKnowledgeBase:
    kb = VectorKnowledgeBase(InMemoryVectorStore(), HashingEmbedder(256), name=name)
    kb.ingest([TextDocument.create(text, source=source,
                                   metadata={"file_name": source})
               for source, text in (docs or DOCS).items()])
    return kb


@pytest.fixture
def kb() -> VectorKnowledgeBase:
    return small_kb()


Step = str | ToolCall | Sequence[ToolCall] | Callable[[list[ChatMessage]], str]


class ToolModel:
    """A scripted model that can call tools: each step is text, a tool call (or
    several), or a function of the conversation. Records messages and tools."""

    def __init__(self, steps: Sequence[Step], *, name: str = "openai:scripted") -> None:
        self.steps = list(steps)
        self._name = name
        self.calls: list[list[ChatMessage]] = []
        self.tools: list[list[str]] = []

    @property
    def name(self) -> str:
        return self._name

    def chat(self, messages: str | Sequence[ChatMessage], *, tools: Sequence[Tool] = (),
             stop: Sequence[str] | None = None, temperature: float | None = None,
             max_tokens: int | None = None) -> ChatResponse:
        conversation = as_messages(messages)
        self.calls.append(conversation)
        self.tools.append([t.name for t in tools])
        step = self.steps[min(len(self.calls), len(self.steps)) - 1]
        if isinstance(step, ToolCall):
            step = [step]
        if isinstance(step, str):
            message = ChatMessage.assistant(step)
        elif callable(step):
            message = ChatMessage.assistant(step(conversation))
        else:
            message = ChatMessage.assistant("", list(step))
        return ChatResponse(message=message, usage=Usage(input_tokens=3, output_tokens=2),
                            model=self._name)

    def stream(self, messages: str | Sequence[ChatMessage], *, tools: Sequence[Tool] = (),
               stop: Sequence[str] | None = None, temperature: float | None = None,
               max_tokens: int | None = None) -> Iterator[ChatDelta]:
        response = self.chat(messages, tools=tools)
        for word in re.findall(r"\S+\s*", response.text):
            time.sleep(0)
            yield ChatDelta(text=word)
        yield ChatDelta(response=response)


def tool_model(*steps: Step, name: str = "openai:scripted") -> ToolModel:
    return ToolModel(steps, name=name)


def last_user(messages: list[ChatMessage]) -> str:
    return [m.content for m in messages if m.role == "user"][-1]


def reply_by_prompt(rules: dict[str, str], default: str = "") -> Callable[[list[Any]], str]:
    """A reply chosen by a phrase in the last user message."""
    def reply(messages: list[Any]) -> str:
        text = messages[-1].content
        for phrase, answer in rules.items():
            if phrase in text:
                return answer
        return default
    return reply

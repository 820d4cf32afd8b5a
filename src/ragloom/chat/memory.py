"""Chat memory: which earlier messages of a conversation reach the model.

Both memories keep system messages and drop the oldest turns first. A turn is a
user message with everything up to the next user message (the answer, tool calls
and tool results), so a tool result never loses the call it answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from ragloom.errors import InvalidInputError
from ragloom.protocols import TokenCounter
from ragloom.types import ChatMessage

__all__ = ["ChatMemory", "MessageWindowMemory", "TokenWindowMemory", "turns"]


@runtime_checkable
class ChatMemory(Protocol):
    """Picks the messages of a conversation that fit."""

    def select(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]: ...


def turns(messages: Sequence[ChatMessage]) -> list[list[ChatMessage]]:
    """Non-system messages grouped into turns, each starting at a user message."""
    groups: list[list[ChatMessage]] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "user" or not groups:
            groups.append([message])
        else:
            groups[-1].append(message)
    return groups


def _fit(messages: Sequence[ChatMessage], fits: Callable[[list[ChatMessage]], bool]
         ) -> list[ChatMessage]:
    system = [m for m in messages if m.role == "system"]
    groups = turns(messages)
    while groups:
        kept = [m for group in groups for m in group]
        if fits(kept):
            return system + kept
        groups.pop(0)
    return system


class MessageWindowMemory:
    """The last ``max_messages`` messages (system messages always kept), trimmed by
    whole turns so the window never starts mid-turn."""

    def __init__(self, max_messages: int = 10) -> None:
        if max_messages < 1:
            raise InvalidInputError("max_messages must be at least 1")
        self.max_messages = max_messages

    def select(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        return _fit(messages, lambda kept: len(kept) <= self.max_messages)


def _approx_tokens(text: str) -> int:
    return max(1, len(text.split()) * 4 // 3)


class TokenWindowMemory:
    """The newest turns whose text fits in ``max_tokens`` (counted by
    ``token_counter``, else about 4/3 tokens a word); system messages always kept."""

    def __init__(self, max_tokens: int = 1000, *, token_counter: TokenCounter | None = None
                 ) -> None:
        if max_tokens < 1:
            raise InvalidInputError("max_tokens must be at least 1")
        self.max_tokens = max_tokens
        self._count = token_counter.count_tokens if token_counter else _approx_tokens

    def tokens(self, messages: Sequence[ChatMessage]) -> int:
        return sum(self._count(m.content) + 4 for m in messages)

    def select(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        return _fit(messages, lambda kept: self.tokens(kept) <= self.max_tokens)

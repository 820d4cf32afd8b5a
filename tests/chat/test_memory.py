from __future__ import annotations

from ragloom.chat import MessageWindowMemory, TokenWindowMemory
from ragloom.types import ChatMessage, ToolCall

SYSTEM = ChatMessage.system("be brief")
CONVERSATION = [
    SYSTEM,
    ChatMessage.user("first question about batteries"),
    ChatMessage.assistant("first answer"),
    ChatMessage.user("second question"),
    ChatMessage.assistant("", tool_calls=[ToolCall(id="c1", name="knowledge_search")]),
    ChatMessage.tool("tool result", "c1"),
    ChatMessage.assistant("second answer"),
    ChatMessage.user("third question"),
]


def test_message_window_drops_oldest_whole_turns() -> None:
    kept = MessageWindowMemory(5).select(CONVERSATION)
    # the second turn has 4 messages + the third 1 = 5; the first turn goes
    assert kept[0] is SYSTEM
    assert [m.content for m in kept[1:]] == ["second question", "", "tool result",
                                             "second answer", "third question"]
    kept = MessageWindowMemory(3).select(CONVERSATION)
    assert [m.content for m in kept] == ["be brief", "third question"]


def test_message_window_keeps_everything_that_fits() -> None:
    assert MessageWindowMemory(100).select(CONVERSATION) == CONVERSATION


def test_token_window_drops_oldest_first() -> None:
    memory = TokenWindowMemory(10_000)
    assert memory.select(CONVERSATION) == CONVERSATION
    all_tokens = memory.tokens(CONVERSATION[1:])
    last_two = memory.tokens(CONVERSATION[3:])
    kept = TokenWindowMemory(last_two).select(CONVERSATION)
    assert kept == [SYSTEM, *CONVERSATION[3:]]
    assert all_tokens > last_two


class _CharCounter:
    def count_tokens(self, text: str) -> int:
        return len(text)


def test_token_window_uses_the_counter() -> None:
    memory = TokenWindowMemory(30, token_counter=_CharCounter())
    kept = memory.select(CONVERSATION)
    assert [m.content for m in kept] == ["be brief", "third question"]

"""Turning ragloom chat messages into a prompt that fits a local model's context.

Pure functions over a tokenizer given as callables, so they are tested without a
model. The system message is always kept; older turns go first, then the oldest
remaining message is cut from the left (its end, usually the question, survives).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragloom.errors import InvalidInputError
from ragloom.types import ChatMessage, part_text

TemplateMessage = dict[str, str]
Render = Callable[[list[TemplateMessage]], list[int]]
Encode = Callable[[str], list[int]]
Decode = Callable[[list[int]], str]


def template_messages(messages: Sequence[ChatMessage]) -> list[TemplateMessage]:
    """Plain ``{"role", "content"}`` dicts a Hugging Face chat template accepts.

    Attachments are appended as text (these models read text only). Tool results
    become user turns because small local templates know no ``tool`` role; tool
    calls the assistant made are not rendered.
    """
    rendered: list[TemplateMessage] = []
    for message in messages:
        content = message.content
        extra = [part_text(item) for item in message.attachments]
        if extra:
            content = "\n\n".join([content, *extra]) if content else "\n\n".join(extra)
        if message.role == "tool":
            rendered.append({"role": "user", "content": f"Tool result:\n{content}"})
        else:
            rendered.append({"role": message.role, "content": content})
    return rendered


def fit_prompt(
    messages: list[TemplateMessage],
    budget: int,
    *,
    render: Render,
    encode: Encode,
    decode: Decode,
) -> tuple[list[int], bool]:
    """Prompt token ids of at most ``budget`` tokens, and whether anything was cut."""
    if budget < 1:
        raise InvalidInputError("no room for a prompt: lower max_tokens")
    ids = render(messages)
    if len(ids) <= budget:
        return ids, False
    kept = list(messages)
    first = 1 if kept and kept[0]["role"] == "system" else 0
    while len(kept) - first > 1 and len(ids) > budget:
        del kept[first]
        ids = render(kept)
    # Cut the oldest remaining message from the left until the whole prompt fits;
    # template tokens around the content make the first estimate slightly off.
    for _ in range(8):
        if len(ids) <= budget or len(kept) <= first:
            break
        tokens = encode(kept[first]["content"])
        excess = len(ids) - budget
        keep = len(tokens) - excess - 1
        if keep <= 0:
            kept[first] = {**kept[first], "content": ""}
        else:
            kept[first] = {**kept[first], "content": decode(tokens[-keep:])}
        ids = render(kept)
    if len(ids) > budget:
        raise InvalidInputError(
            f"the prompt needs {len(ids)} tokens even after dropping older messages, but "
            f"only {budget} fit; shorten the system message or lower max_tokens"
        )
    return ids, True

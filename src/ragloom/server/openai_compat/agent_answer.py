"""The one place a Llama Stack agent's turn gets its answer from the model.

:func:`answer_stream` builds the messages the way ``/v1/responses`` with
``file_search`` does (the agent's instructions, the session so far, then the
retrieved passages numbered before the question, within a token budget) and streams
the model's reply. Every agent turn, streamed or not, calls it; to change how agents
answer, change this function.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ragloom.protocols import ModelProvider, TokenCounter
from ragloom.rag import DEFAULT_SYSTEM_PROMPT, augment_user_query
from ragloom.types import ChatDelta, ChatMessage, QueryMatch

CITE_HINT = ("Cite the passages you use by their number in square brackets, like [1], "
             "right after the sentence they support.")
CONTEXT_TOKENS = 1500


def answer_stream(model: ModelProvider, *, instructions: str | None,
                  history: Sequence[ChatMessage], question: str,
                  context: Sequence[QueryMatch], max_tokens: int,
                  temperature: float | None = None,
                  token_counter: object | None = None) -> Iterator[ChatDelta]:
    """The model's answer to ``question`` from ``context``, piece by piece; the last
    :class:`~ragloom.types.ChatDelta` carries the whole response (text and usage)."""
    system = instructions or DEFAULT_SYSTEM_PROMPT
    prompt = question
    if context:
        system = f"{system}\n\n{CITE_HINT}"
        counter = token_counter if isinstance(token_counter, TokenCounter) else None
        prompt = augment_user_query(context, question, max_tokens_in_context=CONTEXT_TOKENS,
                                    token_counter=counter)
    messages = [ChatMessage.system(system), *history, ChatMessage.user(prompt)]
    return model.stream(messages, max_tokens=max_tokens, temperature=temperature)

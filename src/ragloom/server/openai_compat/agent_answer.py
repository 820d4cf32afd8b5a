"""The one place a Llama Stack agent's turn gets its answer from the model.

:func:`answer_stream` is called by every agent turn, streamed or not. With passages
found by ``knowledge_search`` it answers through ragloom's grounded answerer (the one
:class:`~ragloom.rag.NaiveRag` uses: the best sentences of the passages, a short
greedy answer, checked against them, citing its passage as ``[n]``), sent as one
piece; without passages the model answers the conversation directly, streamed. To
change how agents answer, change this function.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ragloom.protocols import EmbeddingProvider, ModelProvider
from ragloom.rag import DEFAULT_SYSTEM_PROMPT
from ragloom.types import ChatDelta, ChatMessage, ChatResponse, QueryMatch


def answer_stream(model: ModelProvider, *, instructions: str | None,
                  history: Sequence[ChatMessage], question: str,
                  context: Sequence[QueryMatch], max_tokens: int,
                  temperature: float | None = None,
                  embedder: EmbeddingProvider | None = None) -> Iterator[ChatDelta]:
    """The model's answer to ``question`` from ``context``, piece by piece; the last
    :class:`~ragloom.types.ChatDelta` carries the whole response (text and usage)."""
    if not context:
        messages = [ChatMessage.system(instructions or DEFAULT_SYSTEM_PROMPT), *history,
                    ChatMessage.user(question)]
        yield from model.stream(messages, max_tokens=max_tokens, temperature=temperature)
        return
    from ragloom.answering.answerer import GroundedAnswerer
    from ragloom.answering.sentences import SentenceRanker

    grounded = GroundedAnswerer(SentenceRanker(embedder)).answer(question, context, model)
    usage = grounded.response.usage if grounded.response is not None else None
    response = ChatResponse(message=ChatMessage.assistant(grounded.answer), model=model.name)
    if usage is not None:
        response = ChatResponse(message=response.message, usage=usage, model=model.name)
    yield ChatDelta(text=grounded.answer)
    yield ChatDelta(response=response)

"""The one place a Llama Stack agent's turn gets its answer from the model.

:func:`answer_stream` is called by every agent turn, streamed or not. With passages
found by ``knowledge_search`` it answers through the answer engine
(:class:`~ragloom.answering.engine.AnswerEngine`, the one ``ragloom ask`` and
``NaiveRag`` use: by kind of question, checked against the passages, citing them as
``[n]``), with the agent's instructions, temperature and history, sent as one piece;
without passages the model answers the conversation directly, streamed.
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
    from ragloom.answering.engine import AnswerEngine
    from ragloom.answering.settings import GenerationSettings

    settings = GenerationSettings(temperature=temperature, system_prompt=instructions)
    answered = AnswerEngine(embedder, settings=settings).answer(
        question, context, model, history=history)
    response = ChatResponse(message=ChatMessage.assistant(answered.answer),
                            usage=answered.usage, model=model.name)
    yield ChatDelta(text=answered.answer)
    yield ChatDelta(response=response)

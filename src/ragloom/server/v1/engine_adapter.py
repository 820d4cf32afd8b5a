"""The OpenAI-compatible routes' door to the answer engine.

``/v1/chat/completions`` with ``knowledge_bases``/``vector_store_ids`` and
``/v1/responses`` with ``file_search`` answer through
:class:`~ragloom.answering.engine.AnswerEngine` (the one ``ragloom ask``, ``NaiveRag``
and ``/api/ask`` use) whenever passages were retrieved: the request's temperature,
token limit and system text become :class:`~ragloom.answering.settings.GenerationSettings`,
the earlier messages of the conversation are the history, and the answer is checked
against the passages before it is sent. Requests with structured output or without
retrieval keep the direct model path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragloom.answering.corpus import Corpus
from ragloom.answering.engine import AnswerEngine
from ragloom.answering.result import EngineAnswer
from ragloom.answering.settings import GenerationSettings
from ragloom.protocols import EmbeddingProvider, ModelProvider
from ragloom.server.v1.citations import Passage
from ragloom.types import ChatMessage, QueryMatch


def request_settings(*, temperature: float | None, max_tokens: int | None,
                     system: Sequence[str]) -> GenerationSettings:
    """The settings a request carries (system texts joined; none leaves the engine's)."""
    texts = [text for text in system if text and text.strip()]
    return GenerationSettings(temperature=temperature, max_tokens=max_tokens,
                              system_prompt="\n\n".join(texts) if texts else None)


def split_conversation(messages: Sequence[ChatMessage]
                       ) -> tuple[list[str], list[ChatMessage], str]:
    """The system texts, the earlier turns (history) and the last user question."""
    system = [m.content or "" for m in messages if m.role == "system"]
    turns = [m for m in messages if m.role in ("user", "assistant")]
    last = max((i for i, m in enumerate(turns) if m.role == "user"), default=None)
    if last is None:
        return system, turns, ""
    return system, turns[:last], turns[last].content or ""


def engine_answer(embedder: EmbeddingProvider | None, question: str,
                  matches: Sequence[QueryMatch], model: ModelProvider, *,
                  history: Sequence[ChatMessage], settings: GenerationSettings,
                  corpus: Corpus | None = None) -> EngineAnswer:
    """The engine's answer to ``question`` from ``matches`` with these settings."""
    engine = AnswerEngine(embedder, settings=settings)
    return engine.answer(question, matches, model, corpus=corpus, history=history,
                         settings=settings)


def answer_details(result: EngineAnswer) -> dict[str, Any]:
    """ragloom's extra fields for an engine answer (beside OpenAI's)."""
    data = result.details()
    data.update(citations=list(result.citations), refused=result.refused,
                quote=result.quote, origin=result.origin)
    data.setdefault("refusal_reason", "")
    data.setdefault("unsupported", [])
    return data


def file_passages(sources: Sequence[QueryMatch]) -> list[Passage]:
    """The engine's sources as numbered passages of files (``[n]`` is ``sources[n-1]``)."""
    passages = []
    for number, match in enumerate(sources, start=1):
        meta = match.chunk.metadata
        passages.append(Passage(number, str(meta.get("file_id") or match.chunk.source),
                                str(meta.get("filename") or match.chunk.source or ""),
                                match.chunk.text))
    return passages

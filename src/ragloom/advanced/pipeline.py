"""AugmentedRag: a retrieval augmentor, a chat model, chat memory and sessions.

::

    rag = AugmentedRag(augmentor, model, memory=MessageWindowMemory(10),
                       sessions=SessionStore(".ragloom"))
    first = rag.query("How long is the battery warranty?", session="support")
    second = rag.query("And for the frame?", session="support")
    second.queries      # ("How long is the warranty for the frame?",) with a compressor
    for event in rag.stream("...", session="support"):
        ...             # SourcesEvent, TokenEvent..., AnswerEvent (or ErrorEvent)

History comes from ``history=`` or from the session; the memory decides which of it
reaches the model. With a session, the question and the answer (with its sources
and the queries used) are appended to it.

With ``engine`` (an :class:`~ragloom.answering.engine.AnswerEngine`, as ``NaiveRag``
uses by default) the answer comes from the one answer engine: the model is asked the
standalone query (after compression) with the remembered history and the user's
``settings``, answers are composed by kind of question and checked against their
sources, and ``corpus`` lets lists, summaries and comparisons read beyond the
retrieved passages. An engine answer streams as one piece, after it is checked.
Without an engine the model's text is streamed as it comes, unchecked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

from ragloom.advanced.answer import (
    AnswerEvent,
    AugmentedAnswer,
    ErrorEvent,
    SourcesEvent,
    StreamEvent,
    TokenEvent,
)
from ragloom.advanced.augmentor import AugmentationResult, RetrievalAugmentor
from ragloom.answering.corpus import Corpus
from ragloom.answering.engine import AnswerEngine
from ragloom.answering.settings import GenerationSettings
from ragloom.chat.memory import ChatMemory, MessageWindowMemory
from ragloom.chat.sessions import SessionStore
from ragloom.filters import MetadataFilters
from ragloom.protocols import ModelProvider
from ragloom.rag import DEFAULT_SYSTEM_PROMPT, NO_CONTEXT_ANSWER
from ragloom.types import ChatMessage, ChatResponse

__all__ = ["CHAT_SYSTEM_PROMPT", "AugmentedRag"]

CHAT_SYSTEM_PROMPT = "You are a helpful assistant. Answer briefly."


class AugmentedRag:
    """Answers with a :class:`RetrievalAugmentor` (see the module docstring).

    ``model=None`` retrieves only. ``temperature`` and ``max_answer_tokens`` go to
    every model call.
    """

    def __init__(
        self,
        augmentor: RetrievalAugmentor,
        model: ModelProvider | None,
        *,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        memory: ChatMemory | None = None,
        sessions: SessionStore | None = None,
        temperature: float | None = None,
        max_answer_tokens: int = 256,
        no_context_answer: str = NO_CONTEXT_ANSWER,
        engine: AnswerEngine | None = None,
        settings: GenerationSettings | None = None,
        corpus: Corpus | None = None,
    ) -> None:
        self.augmentor = augmentor
        self.model = model
        self.system_prompt = system_prompt
        self.memory = memory or MessageWindowMemory(10)
        self.sessions = sessions
        self.temperature = temperature
        self.max_answer_tokens = max_answer_tokens
        self.no_context_answer = no_context_answer
        self.engine = engine
        self.settings = (settings or GenerationSettings()).with_(temperature=temperature)
        self.corpus = corpus

    # ---------------------------------------------------------------------- history
    def history(self, session: str | None, history: Sequence[ChatMessage] = ()
                ) -> list[ChatMessage]:
        messages = list(history)
        if session is not None and self.sessions is not None:
            messages = self.sessions.history(session) + messages
        return self.memory.select([m for m in messages if m.role != "system"])

    def _remember(self, session: str | None, answer: AugmentedAnswer) -> None:
        if session is None or self.sessions is None:
            return
        self.sessions.append(session, "user", answer.question)
        self.sessions.append(session, "assistant", answer.answer, sources=answer.sources,
                             metadata={"queries": list(answer.queries),
                                       "searches": [dict(s) for s in answer.searches],
                                       "model": answer.model})

    # -------------------------------------------------------------------- building
    def _augment(self, question: str, filters: MetadataFilters | None,
                 history: list[ChatMessage]) -> AugmentationResult:
        return self.augmentor.augment(question, history=history, filters=filters)

    def messages(self, result: AugmentationResult, history: list[ChatMessage]
                 ) -> list[ChatMessage]:
        system = CHAT_SYSTEM_PROMPT if result.retrieval_skipped else self.system_prompt
        return [ChatMessage.system(system), *history, result.message]

    def _answer(self, result: AugmentationResult, text: str, session: str | None,
                response: ChatResponse | None = None) -> AugmentedAnswer:
        extra: dict[str, Any] = {}
        if response is not None:
            extra = dict(usage=response.usage,
                         model=response.model or (self.model.name if self.model else ""))
        return AugmentedAnswer(
            question=result.question, answer=text, sources=list(result.contents),
            notice=result.notice, degraded=bool(result.notice),
            retrieval_seconds=result.seconds, queries=tuple(result.query_texts),
            routes={k: tuple(v) for k, v in result.routes.items()},
            retrieval_skipped=result.retrieval_skipped, session=session, **extra)

    def _canned(self, result: AugmentationResult) -> str | None:
        """The answer when no model call is needed (retrieval only, nothing found)."""
        if self.model is None:
            return ""
        if not result.retrieval_skipped and not result.contents:
            return self.no_context_answer
        return None

    def _grounded(self, result: AugmentationResult, session: str | None,
                  history: Sequence[ChatMessage]) -> AugmentedAnswer:
        assert self.model is not None and self.engine is not None
        question = result.query_texts[0] if result.query_texts else result.question
        answered = self.engine.answer(question, result.contents, self.model, corpus=self.corpus,
                                      history=history, settings=self.settings)
        answer = self._answer(result, answered.answer, session, answered.response)
        return dataclasses.replace(
            answer, sources=list(answered.sources), quote=answered.quote,
            citations=list(answered.citations), refused=answered.refused,
            origin=answered.origin, kind=answered.kind, reason=answered.reason,
            points=list(answered.points), unsupported=list(answered.unsupported))

    def _use_answerer(self, result: AugmentationResult) -> bool:
        return (self.engine is not None and self.model is not None
                and not result.retrieval_skipped and bool(result.contents))

    # ------------------------------------------------------------------------ query
    def query(self, question: str, filters: MetadataFilters | None = None, *,
              history: Sequence[ChatMessage] = (), session: str | None = None
              ) -> AugmentedAnswer:
        remembered = self.history(session, history)
        result = self._augment(question, filters, remembered)
        canned = self._canned(result)
        if canned is not None or self.model is None:
            answer = self._answer(result, canned or "", session)
        elif self._use_answerer(result):
            answer = self._grounded(result, session, remembered)
        else:
            response = self.model.chat(self.messages(result, remembered),
                                       temperature=self.temperature,
                                       max_tokens=self.max_answer_tokens)
            answer = self._answer(result, response.text.strip(), session, response)
        self._remember(session, answer)
        return answer

    def stream(self, question: str, filters: MetadataFilters | None = None, *,
               history: Sequence[ChatMessage] = (), session: str | None = None
               ) -> Iterator[StreamEvent]:
        """Sources first, then tokens, then the answer; a failure is an ErrorEvent."""
        try:
            remembered = self.history(session, history)
            result = self._augment(question, filters, remembered)
        except Exception as exc:  # surfaced as an event: a stream must not just stop
            yield ErrorEvent.of(exc)
            return
        yield SourcesEvent(sources=list(result.contents), queries=tuple(result.query_texts),
                           retrieval_skipped=result.retrieval_skipped)
        canned = self._canned(result)
        if canned is not None or self.model is None:
            if canned:
                yield TokenEvent(text=canned)
            answer = self._answer(result, canned or "", session)
        elif self._use_answerer(result):
            try:
                answer = self._grounded(result, session, remembered)
            except Exception as exc:
                yield ErrorEvent.of(exc)
                return
            if answer.answer:
                yield TokenEvent(text=answer.answer)
        else:
            response: ChatResponse | None = None
            pieces: list[str] = []
            try:
                for delta in self.model.stream(self.messages(result, remembered),
                                               temperature=self.temperature,
                                               max_tokens=self.max_answer_tokens):
                    if delta.response is not None:
                        response = delta.response
                    elif delta.text:
                        pieces.append(delta.text)
                        yield TokenEvent(text=delta.text)
            except Exception as exc:
                yield ErrorEvent.of(exc)
                return
            text = response.text if response is not None else "".join(pieces)
            answer = self._answer(result, text.strip(), session, response)
        try:
            self._remember(session, answer)
        except Exception as exc:
            yield ErrorEvent.of(exc)
        yield AnswerEvent(answer=answer)

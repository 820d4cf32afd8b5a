"""NaiveRag: retrieve, build a numbered context, ask the model, return answer and sources.

By default answers are *grounded* (:mod:`ragloom.answering`): the model sees the few
sentences that best answer the question, its answer is checked against them, and a
quote of the best sentence replaces an answer the sources do not support; weak
evidence gives a clear refusal. ``grounded=False`` keeps the plain pipeline (whole
passages in, the model's text out, unchecked).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragloom.answering.answerer import GroundedAnswer, GroundedAnswerer
from ragloom.answering.sentences import SentenceRanker
from ragloom.filters import MetadataFilters
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import ModelProvider, Reranker, TokenCounter
from ragloom.retrieval.options import SearchOptions
from ragloom.templates import check_template, render_template
from ragloom.types import (
    ChatMessage,
    Document,
    Prompt,
    QueryMatch,
    TextChunk,
    Usage,
)

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant. Answer the question using only the numbered context "
    "passages. Cite the passages you used by their number, like [1]. If the context does "
    "not contain the answer, say that you don't know."
)
DEFAULT_PROMPT = Prompt("Context:\n{context}\n\nQuestion: {question}")
DEFAULT_CHUNK_TEMPLATE = "[{number}] {text}"
NO_CONTEXT_ANSWER = "I could not find anything about that in the knowledge base."


def _words(text: str) -> int:
    return max(1, len(text.split()) * 4 // 3)


def augment_user_query(
    context: Sequence[QueryMatch | TextChunk],
    question: str,
    *,
    prompt: Prompt = DEFAULT_PROMPT,
    chunk_template: str = DEFAULT_CHUNK_TEMPLATE,
    metadata_keys: Sequence[str] = (),
    max_tokens_in_context: int | None = None,
    token_counter: TokenCounter | None = None,
) -> str:
    """The user message: numbered passages, then the question.

    ``chunk_template`` may use ``{number}``, ``{text}``, ``{source}`` and any key named
    in ``metadata_keys`` (missing keys render empty); nothing else (no format specs,
    conversions or attribute access: :func:`ragloom.templates.render_template`). Passages past
    ``max_tokens_in_context`` are left out whole, never cut mid-passage.
    """
    count: Callable[[str], int] = token_counter.count_tokens if token_counter else _words
    check_template(chunk_template, ("number", "text", "source", *metadata_keys))
    blocks: list[str] = []
    used = 0
    for number, item in enumerate(context, start=1):
        chunk = item.chunk if isinstance(item, QueryMatch) else item
        values: dict[str, Any] = {key: chunk.metadata.get(key, "") for key in metadata_keys}
        values.update(number=number, text=chunk.text.strip(), source=chunk.source)
        block = render_template(chunk_template, values)
        cost = count(block)
        if max_tokens_in_context is not None and used + cost > max_tokens_in_context and blocks:
            break
        blocks.append(block)
        used += cost
    return prompt.render(context="\n\n".join(blocks), question=question.strip())


@dataclass(frozen=True, kw_only=True)
class RagAnswer:
    """An answer with the passages it was given, numbered as in the prompt.

    Grounded answers also carry ``citations`` (numbers of the sources relied on),
    ``quote`` (the sentence that supports the answer), ``refused`` (the documents do
    not answer the question) and ``origin``: ``"model"`` (the model's answer, checked),
    ``"quote"`` (the model's answer was not supported, so the evidence is quoted) or
    ``"refusal"``.
    """

    question: str
    answer: str
    sources: list[QueryMatch] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    degraded: bool = False
    notice: str = ""
    retrieval_seconds: float = 0.0
    model: str = ""
    quote: str = ""
    citations: list[int] = field(default_factory=list)
    refused: bool = False
    origin: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "sources": [dict(number=n, **m.to_dict()) for n, m in enumerate(self.sources, 1)],
            "usage": {"input_tokens": self.usage.input_tokens,
                      "output_tokens": self.usage.output_tokens,
                      "latency_s": round(self.usage.latency_s, 3),
                      "retrieval_s": round(self.retrieval_seconds, 3)},
            "model": self.model,
            "degraded": self.degraded,
            "notice": self.notice,
            "quote": self.quote,
            "citations": list(self.citations),
            "refused": self.refused,
            "origin": self.origin,
        }


class NaiveRag:
    """``NaiveRag(knowledge_base, model)``: retrieve then generate — the simplest
    composition of :class:`~ragloom.advanced.RetrievalAugmentor` (one query, every
    knowledge base, RRF across several, an optional ``reranker``).

    ``knowledge_base`` is any knowledge base (a ``VectorKnowledgeBase`` searched with
    ``search`` options, or anything with ``retrieve(query, filters)``: a
    :class:`~ragloom.protocols.KnowledgeBase` or :class:`~ragloom.protocols.Retriever`),
    or a list of them. ``metadata_keys`` show with each passage (``prompt`` may name
    them in ``chunk_template``); ``temperature`` goes to the model.

    With ``model=None`` it only retrieves (``answer`` is empty). With no passage
    found it says so instead of letting the model guess. ``grounded`` (the default)
    checks answers against their sources (see the module notes); pass ``answerer``
    to change how.
    """

    def __init__(
        self,
        knowledge_base: VectorKnowledgeBase | Any,
        model: ModelProvider | None,
        *,
        prompt: Prompt = DEFAULT_PROMPT,
        reranker: Reranker | None = None,
        metadata_keys: Sequence[str] = (),
        chunk_template: str = DEFAULT_CHUNK_TEMPLATE,
        temperature: float | None = None,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        search: SearchOptions | None = None,
        max_tokens_in_context: int | None = 1500,
        max_answer_tokens: int = 256,
        grounded: bool = True,
        answerer: GroundedAnswerer | None = None,
    ) -> None:
        bases = (list(knowledge_base) if isinstance(knowledge_base, (list, tuple))
                 else [knowledge_base])
        self.knowledge_bases = bases
        self.knowledge_base = bases[0]
        self.reranker = reranker
        self.metadata_keys = tuple(metadata_keys)
        shown = [k for k in self.metadata_keys if "{" + k + "}" not in chunk_template]
        if shown:  # keys the template does not place go on a line after the passage
            chunk_template += "\n(" + "; ".join(f"{k}: {{{k}}}" for k in shown) + ")"
        self.chunk_template = chunk_template
        self.temperature = temperature
        self._augmentor: Any = None
        self.model = model
        self.prompt = prompt
        self.system_prompt = system_prompt
        self.search_options = search
        self.max_tokens_in_context = max_tokens_in_context
        self.max_answer_tokens = max_answer_tokens
        self.grounded = grounded
        self._answerer = answerer

    @property
    def answerer(self) -> GroundedAnswerer:
        """The grounding steps; by default ranking sentences with the KB's embedder."""
        if self._answerer is None:
            embedder = getattr(self.knowledge_base, "embedder", None)
            self._answerer = GroundedAnswerer(SentenceRanker(embedder))
        return self._answerer

    def ingest(self, documents: Sequence[Document]) -> Any:
        return self.knowledge_base.ingest(documents)

    @property
    def augmentor(self) -> Any:
        """The retrieval augmentor this RAG is: every knowledge base as a content
        retriever, default query transformer and router, RRF across several."""
        if self._augmentor is None:
            from ragloom.advanced import (
                DefaultContentAggregator,
                KnowledgeBaseContentRetriever,
                RetrievalAugmentor,
            )

            retrievers = [KnowledgeBaseContentRetriever(
                base, options=self.search_options,
                name=str(getattr(base, "name", "") or f"kb{i}")) for i, base in
                enumerate(self.knowledge_bases)]
            top_k = (self.search_options or getattr(self.knowledge_base, "search_options",
                                                    None) or SearchOptions()).top_k
            self._augmentor = RetrievalAugmentor(
                retrievers, content_aggregator=DefaultContentAggregator(),
                max_contents=top_k if len(retrievers) > 1 else None)
        return self._augmentor

    def _retrieve(self, question: str, filters: MetadataFilters | None) -> tuple[Any, float]:
        from ragloom.retrieval.search import SearchResult, check_query

        check_query(question)
        started = time.perf_counter()
        result = self.augmentor.retrieve(question, filters=filters)
        matches = list(result.contents)
        if self.reranker is not None:
            matches = self.reranker.rerank(question, matches)
        return (SearchResult(matches, degraded=bool(result.notice), notice=result.notice),
                time.perf_counter() - started)

    def messages(self, question: str, sources: Sequence[QueryMatch]) -> list[ChatMessage]:
        counter = getattr(self.knowledge_base, "embedder", None)
        user = augment_user_query(
            sources, question, prompt=self.prompt, chunk_template=self.chunk_template,
            metadata_keys=self.metadata_keys,
            max_tokens_in_context=self.max_tokens_in_context,
            token_counter=counter if isinstance(counter, TokenCounter) else None,
        )
        return [ChatMessage.system(self.system_prompt), ChatMessage.user(user)]

    def query(self, question: str, filters: MetadataFilters | None = None) -> RagAnswer:
        result, seconds = self._retrieve(question, filters)
        base = dict(question=question, sources=list(result.matches), degraded=result.degraded,
                    notice=result.notice, retrieval_seconds=seconds)
        if self.model is None:
            return RagAnswer(answer="", **base)
        if not result.matches:
            return RagAnswer(answer=NO_CONTEXT_ANSWER, refused=self.grounded,
                             origin="refusal" if self.grounded else "", **base)
        if self.grounded:
            return self._grounded(question, result.matches, base)
        response = self.model.chat(self.messages(question, result.matches),
                                   max_tokens=self.max_answer_tokens,
                                   temperature=self.temperature)
        return RagAnswer(answer=response.text.strip(), usage=response.usage,
                         model=response.model or self.model.name, **base)

    def _grounded(self, question: str, matches: list[QueryMatch],
                  base: dict[str, Any]) -> RagAnswer:
        assert self.model is not None
        grounded: GroundedAnswer = self.answerer.answer(question, matches, self.model)
        response = grounded.response
        return RagAnswer(
            answer=grounded.answer, quote=grounded.quote, citations=list(grounded.citations),
            refused=grounded.refused, origin=grounded.origin,
            usage=response.usage if response is not None else Usage(),
            model=(response.model if response is not None else "") or self.model.name, **base)

    def stream(
        self, question: str, filters: MetadataFilters | None = None
    ) -> Iterator[str | RagAnswer]:
        """Text deltas of the answer, then the full RagAnswer.

        A grounded answer is checked before it is shown, so it arrives as one delta.
        """
        if self.grounded and self.model is not None:
            answer = self.query(question, filters)
            if answer.answer:
                yield answer.answer
            yield answer
            return
        result, seconds = self._retrieve(question, filters)
        base = dict(question=question, sources=list(result.matches), degraded=result.degraded,
                    notice=result.notice, retrieval_seconds=seconds)
        if self.model is None or not result.matches:
            text = "" if self.model is None else NO_CONTEXT_ANSWER
            if text:
                yield text
            yield RagAnswer(answer=text, **base)
            return
        for delta in self.model.stream(self.messages(question, result.matches),
                                       max_tokens=self.max_answer_tokens,
                                       temperature=self.temperature):
            if delta.response is not None:
                yield RagAnswer(answer=delta.response.text.strip(), usage=delta.response.usage,
                                model=delta.response.model or self.model.name, **base)
            elif delta.text:
                yield delta.text

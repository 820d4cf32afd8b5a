"""NaiveRag: retrieve, then answer through the answer engine, with sources.

Answers come from :class:`~ragloom.answering.engine.AnswerEngine`, the one place a
question becomes an answer: the kind of question decides how it is answered (a
lookup's span and supporting sentence, every item of a list, both sides of a
comparison, the main points of a whole document, the steps of a procedure), every
answer cites its passages, and the grounding mode (``strict`` by default, ``check``,
``off``) decides how the model's answer is checked. The user's settings
(:class:`~ragloom.answering.settings.GenerationSettings`: temperature, max tokens,
system prompt, template, metadata keys, history window) reach the model.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

from ragloom.answering.corpus import Corpus, KnowledgeBaseCorpus
from ragloom.answering.engine import AnswerEngine, EngineAnswer
from ragloom.answering.prompting import (
    DEFAULT_CHUNK_TEMPLATE,
    DEFAULT_PROMPT,
    DEFAULT_SYSTEM_PROMPT,
    PromptBuilder,
    augment_user_query,
)
from ragloom.answering.settings import GenerationSettings
from ragloom.filters import MetadataFilters
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import ModelProvider, Reranker
from ragloom.retrieval.options import SearchOptions
from ragloom.types import (
    ChatMessage,
    Document,
    Prompt,
    QueryMatch,
    RagAnswer,
    Usage,
)

__all__ = ["DEFAULT_CHUNK_TEMPLATE", "DEFAULT_PROMPT", "DEFAULT_SYSTEM_PROMPT",
           "NO_CONTEXT_ANSWER", "NaiveRag", "RagAnswer", "augment_user_query", "rag_answer"]

NO_CONTEXT_ANSWER = "I could not find anything about that in the knowledge base."


def rag_answer(question: str, result: EngineAnswer, model: ModelProvider | None,
               **base: Any) -> dict[str, Any]:
    """The RagAnswer fields of an engine answer (``base``: retrieval fields)."""
    response = result.response
    return dict(base, question=question, answer=result.answer, sources=list(result.sources),
                quote=result.quote, citations=list(result.citations), refused=result.refused,
                origin=result.origin, kind=result.kind, reason=result.reason,
                points=list(result.points), unsupported=list(result.unsupported),
                usage=response.usage if response is not None else Usage(),
                model=((response.model if response is not None else "")
                       or (model.name if model is not None else "")))


def _default_parts() -> tuple[Any, ModelProvider | None]:
    """The bundled defaults: an in-memory knowledge base with the local embedder and
    the local model (nothing loads until first use)."""
    from ragloom.registry import DEFAULT_EMBEDDER, DEFAULT_MODEL, make_embedder, make_model
    from ragloom.stores.memory import InMemoryVectorStore

    embedder = make_embedder(DEFAULT_EMBEDDER)
    return VectorKnowledgeBase(InMemoryVectorStore(), embedder), make_model(DEFAULT_MODEL)


class NaiveRag:
    """``NaiveRag(knowledge_base, model)``: retrieve, then answer with the answer engine.

    ``NaiveRag()`` alone uses the bundled defaults (an in-memory knowledge base with
    the local embedder, the local model). ``knowledge_base`` is any knowledge base (a
    ``VectorKnowledgeBase`` searched with ``search`` options, or anything with
    ``retrieve(query, filters)``), or a list of them; several are fused with RRF.

    ``settings`` (:class:`~ragloom.answering.settings.GenerationSettings`) is what
    reaches the model; the keyword arguments ``temperature``, ``system_prompt``,
    ``prompt``, ``metadata_keys``, ``max_answer_tokens`` and ``grounding`` are
    shortcuts that fill it. ``prompt_builder`` replaces
    :func:`augment_user_query`. ``grounded=False`` is ``grounding="off"``. ``corpus``
    is what the engine may read beyond the retrieved passages (default: the knowledge
    bases themselves).

    With ``model=None`` it only retrieves (``answer`` is empty). With no passage found
    it says so instead of letting the model guess.
    """

    _DEFAULT = object()

    def __init__(
        self,
        knowledge_base: VectorKnowledgeBase | Any = _DEFAULT,
        model: ModelProvider | Any | None = _DEFAULT,
        *,
        prompt: Prompt | None = None,
        reranker: Reranker | None = None,
        metadata_keys: Sequence[str] = (),
        chunk_template: str = DEFAULT_CHUNK_TEMPLATE,
        temperature: float | None = None,
        system_prompt: str | None = None,
        search: SearchOptions | None = None,
        max_tokens_in_context: int | None = 1500,
        max_answer_tokens: int | None = None,
        grounded: bool = True,
        grounding: str | None = None,
        settings: GenerationSettings | None = None,
        engine: AnswerEngine | None = None,
        prompt_builder: PromptBuilder | None = None,
        corpus: Corpus | None = None,
    ) -> None:
        if knowledge_base is NaiveRag._DEFAULT or model is NaiveRag._DEFAULT:
            default_kb, default_model = _default_parts()
            knowledge_base = default_kb if knowledge_base is NaiveRag._DEFAULT else knowledge_base
            model = default_model if model is NaiveRag._DEFAULT else model
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
        self.model: ModelProvider | None = model
        self.search_options = search
        base = settings or GenerationSettings()
        self.settings = base.with_(
            temperature=temperature, system_prompt=system_prompt,
            template=prompt.template if prompt is not None else None,
            metadata_keys=self.metadata_keys or None, max_tokens=max_answer_tokens,
            grounding=grounding or (None if grounded else "off"))
        self.prompt = prompt or DEFAULT_PROMPT
        self.temperature = self.settings.temperature
        self.system_prompt = self.settings.system_prompt or DEFAULT_SYSTEM_PROMPT
        self.max_tokens_in_context = max_tokens_in_context
        self.grounded = self.settings.grounding != "off"
        self._engine = engine
        self.prompt_builder = prompt_builder
        self._corpus = corpus

    @property
    def engine(self) -> AnswerEngine:
        """The answer engine; by default ranking sentences with the KB's embedder."""
        if self._engine is None:
            self._engine = AnswerEngine(
                getattr(self.knowledge_base, "embedder", None), settings=self.settings,
                prompt_builder=self.prompt_builder, chunk_template=self.chunk_template,
                max_tokens_in_context=self.max_tokens_in_context)
        return self._engine

    def ingest(self, documents: Sequence[Document]) -> Any:
        return self.knowledge_base.ingest(documents)

    def _retrieve(self, question: str, filters: MetadataFilters | None) -> tuple[Any, float]:
        """Every knowledge base searched (its own search options when one; RRF across
        several, cut to ``top_k``), then the reranker, if any."""
        from ragloom.retrieval.multi import search_knowledge_bases
        from ragloom.retrieval.search import SearchResult, check_query

        check_query(question)
        started = time.perf_counter()
        named = [(str(getattr(base, "name", "") or f"kb{i}"), base)
                 for i, base in enumerate(self.knowledge_bases)]
        result = search_knowledge_bases(named, question, self.search_options, filters)
        matches = list(result.matches)
        if self.reranker is not None:
            matches = self.reranker.rerank(question, matches)
        return (SearchResult(matches, degraded=result.degraded, notice=result.notice),
                time.perf_counter() - started)

    def messages(self, question: str, sources: Sequence[QueryMatch],
                 history: Sequence[ChatMessage] = ()) -> list[ChatMessage]:
        """The messages a capable model is sent for ``question`` over ``sources``."""
        from ragloom.answering.prompting import ModelCall

        if self.model is None:
            return []
        call = ModelCall(self.model, self.settings, history=history,
                         prompt_builder=self.prompt_builder, chunk_template=self.chunk_template,
                         max_tokens_in_context=self.max_tokens_in_context)
        call.compact = False
        return call.messages(question, [], sources)

    def corpus(self, filters: MetadataFilters | None) -> Corpus:
        """What lists, summaries and comparisons may read: ``corpus`` when given, else
        every knowledge base, within the query's filters (else the search options')."""
        if self._corpus is not None:
            return self._corpus
        if filters is None and self.search_options is not None:
            filters = self.search_options.filters
        return KnowledgeBaseCorpus(self.knowledge_bases, filters=filters)

    def query(self, question: str, filters: MetadataFilters | None = None, *,
              history: Sequence[ChatMessage] = (),
              settings: GenerationSettings | None = None) -> RagAnswer:
        result, seconds = self._retrieve(question, filters)
        base = dict(question=question, sources=list(result.matches), degraded=result.degraded,
                    notice=result.notice, retrieval_seconds=seconds)
        if self.model is None:
            return RagAnswer(answer="", **base)
        if not result.matches:
            return RagAnswer(answer=NO_CONTEXT_ANSWER, refused=True, origin="refusal",
                             reason="nothing was retrieved", **base)
        answered = self.engine.answer(question, result.matches, self.model,
                                      corpus=self.corpus(filters), history=history,
                                      settings=settings or self.settings)
        base.pop("sources")
        base.pop("question")
        return RagAnswer(**rag_answer(question, answered, self.model, **base))

    def stream(
        self, question: str, filters: MetadataFilters | None = None, *,
        history: Sequence[ChatMessage] = (), settings: GenerationSettings | None = None
    ) -> Iterator[str | RagAnswer]:
        """The answer's text, then the full RagAnswer (answers are checked before
        they are shown, so the text arrives as one delta)."""
        answer = self.query(question, filters, history=history, settings=settings)
        if answer.answer:
            yield answer.answer
        yield answer

"""Search and answers for the routes: several knowledge bases, sessions, streaming.

Everything here is synchronous and CPU- or model-bound; routes run it in the bounded
thread pools of :class:`~ragloom.server.state.ServerState`. Answers go through
:class:`~ragloom.rag.NaiveRag`; retrieval happens first, on its own, so a stream can
send the sources before the first token.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ragloom.answering.corpus import KnowledgeBaseCorpus
from ragloom.answering.settings import GenerationSettings
from ragloom.filters import MetadataFilters
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import EmbeddingProvider, ModelProvider
from ragloom.rag import NaiveRag, RagAnswer
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import SearchResult
from ragloom.types import ChatMessage, QueryMatch

_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


@dataclass(frozen=True)
class Target:
    """A knowledge base to search, with the name results carry."""

    name: str
    knowledge_base: VectorKnowledgeBase


def search_targets(targets: Sequence[Target], query: str, options: SearchOptions,
                   embedder_for: Callable[[EmbeddingProvider], EmbeddingProvider] | None = None
                   ) -> SearchResult:
    """Search the targets; ``embedder_for`` may wrap each one's embedder (the server's
    query embedding cache)."""
    wrap = embedder_for or (lambda embedder: embedder)
    if len(targets) == 1:
        from ragloom.retrieval.search import search

        kb = targets[0].knowledge_base
        kb.check_embedder()
        return search(kb.store, wrap(kb.embedder), query, options, knowledge_base=kb.name)
    from ragloom.retrieval.multi import search_many

    for target in targets:
        target.knowledge_base.check_embedder()
    return search_many([(t.name, t.knowledge_base.store, wrap(t.knowledge_base.embedder))
                        for t in targets], query, options)


class _Retrieved:
    """Stands in for a knowledge base in NaiveRag: its search returns what was found."""

    def __init__(self, result: SearchResult, embedder: EmbeddingProvider,
                 options: SearchOptions) -> None:
        self.result = result
        self.embedder = embedder
        self.search_options = options
        self.name = "retrieved"

    def search(self, query: str, options: SearchOptions | None = None) -> SearchResult:
        return self.result


class _HistoryRag(NaiveRag):
    """NaiveRag over what was already retrieved, with the session's last turns sent to
    the model and the targets' knowledge bases as the engine's corpus."""

    history: Sequence[ChatMessage] = ()

    def query(self, question: str, filters: MetadataFilters | None = None, *,
              history: Sequence[ChatMessage] = (),
              settings: GenerationSettings | None = None) -> RagAnswer:
        return super().query(question, filters, history=history or self.history,
                             settings=settings)


def retrieval_query(question: str, history: Sequence[ChatMessage]) -> str:
    """The question, plus the previous one when there is a conversation."""
    previous = [m.content for m in history if m.role == "user"]
    return f"{previous[-1]}\n{question}" if previous else question


def make_rag(result: SearchResult, targets: Sequence[Target], model: ModelProvider | None,
             options: SearchOptions, history: Sequence[ChatMessage] = ()) -> NaiveRag:
    stand_in = _Retrieved(result, targets[0].knowledge_base.embedder, options)
    corpus = KnowledgeBaseCorpus([t.knowledge_base for t in targets], filters=options.filters)
    rag = _HistoryRag(cast(VectorKnowledgeBase, stand_in), model, search=options, corpus=corpus)
    rag.history = tuple(history)
    return rag


def citations(answer: str, source_count: int) -> list[int]:
    """Passage numbers the answer cites as [1] or [1, 2], in order, within range."""
    seen: dict[int, None] = {}
    for group in _CITATION.finditer(answer):
        for number in re.findall(r"\d+", group.group(1)):
            value = int(number)
            if 1 <= value <= source_count:
                seen.setdefault(value, None)
    return list(seen)


def match_dict(number: int, match: QueryMatch) -> dict[str, Any]:
    chunk = match.chunk
    return {"number": number, "chunk_id": chunk.id, "document_id": chunk.document_id,
            "source": chunk.source or chunk.document_id, "knowledge_base": match.knowledge_base,
            "score": match.score, "raw_score": match.raw_score, "index": chunk.index,
            "page": chunk.page, "text": chunk.text, "metadata": dict(chunk.metadata)}


def sources_payload(result: SearchResult) -> dict[str, Any]:
    return {"sources": [match_dict(n, m) for n, m in enumerate(result.matches, 1)],
            "degraded": result.degraded, "notice": result.notice}


def answer_payload(answer: RagAnswer) -> dict[str, Any]:
    """The answer with citations and supporting quotes (whatever RagAnswer offers)."""
    data = answer.to_dict()
    count = len(answer.sources)
    data["sources"] = [match_dict(n, m) for n, m in enumerate(answer.sources, 1)]
    given = [n for n in data.get("citations") or [] if isinstance(n, int)]
    numbers = [n for n in given if 1 <= n <= count] or citations(answer.answer, count)
    data["citations"] = [{"number": n, "source": answer.sources[n - 1].chunk.source,
                          "chunk_id": answer.sources[n - 1].chunk.id} for n in numbers]
    quotes = data.get("supporting_quotes", getattr(answer, "supporting_quotes", None))
    if quotes is None:
        quote = str(getattr(answer, "quote", "") or "")
        quotes = [{"text": quote, "number": numbers[0] if numbers else None}] if quote else []
    data["supporting_quotes"] = [q if isinstance(q, dict) else _quote_dict(q) for q in quotes]
    return data


def _quote_dict(quote: Any) -> dict[str, Any]:
    to_dict = getattr(quote, "to_dict", None)
    if callable(to_dict):
        value = to_dict()
        if isinstance(value, dict):
            return value
    return {"text": str(quote)}


def stream_answer(rag: NaiveRag, question: str) -> Iterator[str | RagAnswer]:
    """Text deltas, then the RagAnswer (NaiveRag.stream with the retrieval done)."""
    yield from rag.stream(question)

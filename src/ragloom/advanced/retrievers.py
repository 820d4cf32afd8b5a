"""Content retrievers: where the augmentor looks for content.

A :class:`ContentRetriever` has a ``name`` and a ``description`` (a language-model
router reads them) and returns matches for a :class:`~ragloom.advanced.query.Query`.
Content from anywhere (a knowledge base, the web, a SQL database) is a
:class:`~ragloom.types.QueryMatch` whose ``knowledge_base`` names the retriever, so
rerankers, fusion and answers treat it all alike.

* :class:`KnowledgeBaseContentRetriever`: any knowledge base, in any search mode
  (a ``VectorKnowledgeBase`` is searched with :class:`SearchOptions`; any other
  object with ``retrieve(query, filters)`` — a :class:`~ragloom.protocols.KnowledgeBase`
  or :class:`~ragloom.protocols.Retriever` — is called as it is).
* :mod:`ragloom.advanced.web` and :mod:`ragloom.advanced.sql` hold the others.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, runtime_checkable

from ragloom.advanced.query import Query
from ragloom.retrieval.options import SearchOptions
from ragloom.types import QueryMatch, TextChunk, TextDocument

__all__ = ["ContentRetriever", "KnowledgeBaseContentRetriever", "text_match"]


@runtime_checkable
class ContentRetriever(Protocol):
    """Finds content for a query."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def retrieve(self, query: Query) -> list[QueryMatch]: ...


class DescribedRetriever:
    """The read-only ``name`` and ``description`` of a content retriever (what a
    router chooses by), from ``_name`` and ``_description`` set by the subclass."""

    _name: str
    _description: str

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description


def text_match(text: str, *, source: str, retriever: str, score: float,
               metadata: dict[str, Any] | None = None, raw_score: float = 0.0) -> QueryMatch:
    """Content that is not in a knowledge base (a web page, SQL rows) as a match."""
    document = TextDocument.create(text, source=source, metadata=metadata)
    chunk = TextChunk.create(document, text, index=0, start=0, end=len(text))
    return QueryMatch(chunk=chunk, score=max(0.0, min(1.0, score)), raw_score=raw_score,
                      knowledge_base=retriever)


class KnowledgeBaseContentRetriever(DescribedRetriever):
    """A knowledge base (or any retriever) as a content retriever.

    ``options`` (mode, ranker, top_k, threshold...) apply when the knowledge base
    can ``search`` with them; the query's filters are added to them.
    """

    def __init__(self, knowledge_base: Any, *, options: SearchOptions | None = None,
                 name: str | None = None, description: str = "") -> None:
        self.knowledge_base = knowledge_base
        self.options = options
        self._name = name or str(getattr(knowledge_base, "name", "") or "knowledge base")
        self._description = description or f"documents in the knowledge base {self._name!r}"
        self.notice = ""

    def retrieve(self, query: Query) -> list[QueryMatch]:
        search = getattr(self.knowledge_base, "search", None)
        if callable(search) and (self.options is not None
                                 or hasattr(self.knowledge_base, "search_options")):
            options = self.options or self.knowledge_base.search_options
            if query.filters is not None:
                options = options.with_(filters=query.filters)
            result = search(query.text, options)
            self.notice = str(getattr(result, "notice", "") or "")
            matches: list[QueryMatch] = list(result.matches)
        else:
            matches = list(self.knowledge_base.retrieve(query.text, query.filters))
            if self.options is not None:
                matches = matches[: self.options.top_k]
        return [m if m.knowledge_base else dataclasses.replace(m, knowledge_base=self._name)
                for m in matches]

"""The seams the declared layers cut (docs/architecture.md).

* graph-aware search is a collaborator retrieval is given, never an import of the
  graph layer above it;
* ``NaiveRag`` searches its knowledge bases at the retrieval layer
  (:func:`~ragloom.retrieval.multi.search_knowledge_bases`) with the results the
  advanced pipeline's retrieval augmentor gives (which it used to build).
"""

from __future__ import annotations

import pytest

import ragloom.retrieval.search as search_module
from ragloom.advanced import (
    DefaultContentAggregator,
    KnowledgeBaseContentRetriever,
    RetrievalAugmentor,
)
from ragloom.errors import QueryError
from ragloom.filters import MetadataFilters, parse_filters
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import EmbeddingProvider, VectorStore
from ragloom.rag import NaiveRag
from ragloom.retrieval.multi import search_knowledge_bases
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import SearchResult, search
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.types import TextDocument

DOCS = {
    "warranty.md": "Bicycle frames carry a lifetime warranty. Wheels carry two years.",
    "returns.md": "Unused bicycles may be returned within 30 days with the receipt.",
    "delivery.md": "We deliver assembled bicycles free of charge within 10 miles.",
    "service.md": "A standard service costs 65 pounds and takes one working day.",
}
OTHER = {
    "frames.md": "Frames of other brands have a five year warranty on the frame.",
    "brakes.md": "Brake pads are replaced at every service for 12 pounds.",
}


def knowledge_base(name: str, docs: dict[str, str]) -> VectorKnowledgeBase:
    kb = VectorKnowledgeBase(InMemoryVectorStore(), HashingEmbedder(256), name=name)
    kb.ingest([TextDocument.create(text, source=source, metadata={"file_name": source})
               for source, text in docs.items()])
    return kb


def test_graph_search_is_a_collaborator() -> None:
    kb = knowledge_base("shop", DOCS)
    seen: list[SearchOptions] = []

    def fake_graph(store: VectorStore, embedder: EmbeddingProvider, query: str,
                   options: SearchOptions, knowledge_base: str = "") -> SearchResult:
        seen.append(options)
        return SearchResult([], notice=f"graph of {knowledge_base} for {query}")

    result = search(kb.store, kb.embedder, "frame warranty", SearchOptions(graph=True),
                    knowledge_base="shop", graph_search=fake_graph)
    assert result.notice == "graph of shop for frame warranty"
    assert seen and seen[0].graph
    plain = search(kb.store, kb.embedder, "frame warranty", SearchOptions(),
                   graph_search=fake_graph)
    assert plain.matches and len(seen) == 1  # graph=False never calls it


def test_graph_search_without_the_graph_layer_says_what_to_do(
        monkeypatch: pytest.MonkeyPatch) -> None:
    kb = knowledge_base("shop", DOCS)
    monkeypatch.setattr(search_module, "_graph_search", None)
    with pytest.raises(QueryError, match=r"import ragloom\.graph"):
        search(kb.store, kb.embedder, "frame warranty", SearchOptions(graph=True))


def test_importing_the_graph_layer_hands_retrieval_its_search() -> None:
    import ragloom.graph

    assert search_module._graph_search is ragloom.graph.graph_search


def _augmentor_result(bases: list[VectorKnowledgeBase], question: str,
                      options: SearchOptions | None,
                      filters: MetadataFilters | None) -> SearchResult:
    """What NaiveRag's retrieval was before the layers: the advanced augmentor."""
    retrievers = [KnowledgeBaseContentRetriever(base, options=options, name=base.name)
                  for base in bases]
    top_k = (options or bases[0].search_options or SearchOptions()).top_k
    augmentor = RetrievalAugmentor(retrievers, content_aggregator=DefaultContentAggregator(),
                                   max_contents=top_k if len(retrievers) > 1 else None)
    found = augmentor.retrieve(question, filters=filters)
    return SearchResult(list(found.contents), degraded=bool(found.notice),
                        notice=found.notice)


@pytest.mark.parametrize("several", [False, True])
@pytest.mark.parametrize("options", [None, SearchOptions(mode="keyword", top_k=3),
                                     SearchOptions(mode="hybrid", top_k=2)])
@pytest.mark.parametrize("question", ["frame warranty", "service cost in pounds",
                                      "returned bicycles receipt"])
def test_naive_rag_retrieves_as_the_augmentor_did(
        several: bool, options: SearchOptions | None, question: str) -> None:
    bases = [knowledge_base("shop", DOCS)]
    if several:
        bases.append(knowledge_base("other", OTHER))
    expected = _augmentor_result(bases, question, options, None)
    rag = NaiveRag(bases, None, search=options)
    answer = rag.query(question)
    assert answer.sources == expected.matches
    assert answer.notice == expected.notice and answer.degraded == expected.degraded
    direct = search_knowledge_bases([(b.name, b) for b in bases], question, options)
    assert direct.matches == expected.matches
    if several:
        named = {m.knowledge_base for m in direct.matches}
        assert named and named <= {"shop", "other"}
        if question == "frame warranty":  # both knowledge bases speak of it
            assert named == {"shop", "other"}
        assert len(direct.matches) <= (options or SearchOptions()).top_k
    else:
        one = bases[0].search(question, options or bases[0].search_options)
        assert direct.matches == one.matches  # one knowledge base: its own search


def test_filters_reach_every_knowledge_base() -> None:
    bases = [knowledge_base("shop", DOCS), knowledge_base("other", OTHER)]
    filters = parse_filters({"file_name": "service.md"})
    expected = _augmentor_result(bases, "service", None, filters)
    found = search_knowledge_bases([(b.name, b) for b in bases], "service", None, filters)
    assert found.matches == expected.matches
    assert [m.chunk.metadata["file_name"] for m in found.matches] == ["service.md"]


def test_no_knowledge_base_is_a_clear_error() -> None:
    with pytest.raises(QueryError, match="no knowledge bases"):
        search_knowledge_bases([], "anything")

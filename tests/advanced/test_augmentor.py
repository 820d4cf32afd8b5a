from __future__ import annotations

import threading
import time

import pytest

from ragloom.advanced import (
    DefaultContentAggregator,
    DefaultContentInjector,
    ExpandingQueryTransformer,
    KnowledgeBaseContentRetriever,
    LanguageModelQueryRouter,
    Query,
    QueryResults,
    RetrievalAugmentor,
)
from ragloom.errors import InvalidInputError
from ragloom.filters import parse_filters
from ragloom.retrieval.options import SearchOptions
from ragloom.testing import ScriptedModel
from ragloom.types import QueryMatch, TextChunk, TextDocument

from .conftest import small_kb


def _m(source: str, kb: str = "a", score: float = 0.5) -> QueryMatch:
    doc = TextDocument.create(f"text of {source}", source=source,
                              metadata={"file_name": source, "page": 3})
    chunk = TextChunk.create(doc, doc.text, index=0, start=0, end=len(doc.text))
    return QueryMatch(chunk=chunk, score=score, knowledge_base=kb)


def test_two_stage_rrf_rewards_agreement_across_queries_and_retrievers() -> None:
    a, b, c = _m("a"), _m("b"), _m("c")
    results = [QueryResults(query=Query(text="q1"), lists=[[a, b], [b, c]]),
               QueryResults(query=Query(text="q2"), lists=[[b], [c, a]])]
    fused = DefaultContentAggregator().aggregate("q1", results)
    assert fused[0].chunk.source == "b"
    assert {m.chunk.source for m in fused} == {"a", "b", "c"}
    assert all(0.0 <= m.score <= 1.0 for m in fused)


def test_one_list_keeps_its_scores() -> None:
    a, b = _m("a", score=0.9), _m("b", score=0.2)
    fused = DefaultContentAggregator().aggregate("q", [QueryResults(query=Query(text="q"),
                                                                    lists=[[a, b]])])
    assert fused == [a, b]


def test_same_chunk_from_two_knowledge_bases_stays_two_items() -> None:
    a1, a2 = _m("a", kb="x"), _m("a", kb="y")
    fused = DefaultContentAggregator().aggregate(
        "q", [QueryResults(query=Query(text="q"), lists=[[a1], [a2]])])
    assert len(fused) == 2


def test_injector_template_metadata_keys_and_budget() -> None:
    injector = DefaultContentInjector(template="Q: {question}\n---\n{contents}",
                                      metadata_keys=("file_name", "page"))
    message = injector.inject("What {is} it?", [_m("a"), _m("b")])
    assert message.content.startswith(
        "Q: What {is} it?\n---\n[1] text of a\n(file_name: a; page: 3)")
    assert "[2] text of b" in message.content
    tight = DefaultContentInjector(max_tokens_in_context=8)
    assert tight.fit([_m("a"), _m("b"), _m("c")]) == [_m("a")]
    with pytest.raises(InvalidInputError):
        DefaultContentInjector(template="no fields")
    custom = DefaultContentInjector(passage_template="<{file_name}> {text}",
                                    metadata_keys=("file_name",))
    assert "<a> text of a" in custom.inject("q", [_m("a")]).content


def test_augment_searches_every_knowledge_base_and_names_them() -> None:
    first = small_kb("first")
    second = small_kb("second", {"other.md": "Frames of other brands have five years."})
    augmentor = RetrievalAugmentor([KnowledgeBaseContentRetriever(first),
                                    KnowledgeBaseContentRetriever(second)])
    result = augmentor.augment("frame warranty")
    assert {m.knowledge_base for m in result.contents} == {"first", "second"}
    assert result.routes == {"frame warranty": ["first", "second"]}
    assert "[1]" in result.message.content and "Question: frame warranty" in result.message.content


def test_filters_reach_the_knowledge_base() -> None:
    augmentor = RetrievalAugmentor([KnowledgeBaseContentRetriever(small_kb())])
    filters = parse_filters({"file_name": "delivery.md"})
    result = augmentor.augment("warranty", filters=filters)
    assert {m.chunk.source for m in result.contents} == {"delivery.md"}


def test_search_options_apply() -> None:
    retriever = KnowledgeBaseContentRetriever(small_kb(),
                                              options=SearchOptions(mode="keyword", top_k=1))
    assert len(retriever.retrieve(Query(text="warranty"))) == 1


class _PlainKnowledgeBase:
    """Follows the KnowledgeBase protocol but is no VectorKnowledgeBase."""

    name = "plain"

    def retrieve(self, query: str, filters: object = None) -> list[QueryMatch]:
        return [_m("plain.md", kb="")]


def test_any_knowledge_base_protocol_object_works() -> None:
    result = RetrievalAugmentor([KnowledgeBaseContentRetriever(_PlainKnowledgeBase())]).augment("x")
    assert [m.knowledge_base for m in result.contents] == ["plain"]


class _SlowRetriever:
    def __init__(self, name: str, barrier: threading.Barrier) -> None:
        self.name = name
        self.description = name
        self.barrier = barrier
        self.threads: set[str] = set()

    def retrieve(self, query: Query) -> list[QueryMatch]:
        self.threads.add(threading.current_thread().name)
        self.barrier.wait(timeout=5)  # only passes if the others run at the same time
        time.sleep(0.01)
        return [_m(f"{self.name}-{query.text}", kb=self.name)]


def test_queries_and_retrievers_run_in_parallel_in_a_fixed_order() -> None:
    barrier = threading.Barrier(4)
    retrievers = [_SlowRetriever("r1", barrier), _SlowRetriever("r2", barrier)]
    expander = ExpandingQueryTransformer(ScriptedModel(["other words here"]), n=1)
    augmentor = RetrievalAugmentor(retrievers, query_transformer=expander, max_workers=4)
    result = augmentor.retrieve("the question")
    assert result.query_texts == ["the question", "other words here"]
    assert len(result.contents) == 4
    assert all(t.startswith("ragloom-retrieve") for r in retrievers for t in r.threads)


def test_router_can_skip_retrieval() -> None:
    kb = KnowledgeBaseContentRetriever(small_kb(), description="bicycle shop documents")
    router = LanguageModelQueryRouter(ScriptedModel(["0"]), [kb])
    result = RetrievalAugmentor(query_router=router).augment("hi")
    assert result.retrieval_skipped and result.contents == []
    assert result.message.content == "hi"


def test_router_picks_by_description() -> None:
    shop = KnowledgeBaseContentRetriever(small_kb("shop"), description="bicycle shop documents")
    hr = KnowledgeBaseContentRetriever(small_kb("hr", {"h.md": "Lunch break is 30 minutes"}),
                                       description="staff handbook")
    model = ScriptedModel(["2"])
    router = LanguageModelQueryRouter(model, [shop, hr])
    assert [r.name for r in router.route(Query(text="How long is lunch?"))] == ["hr"]
    assert "1: shop — bicycle shop documents" in model.calls[0][-1].content
    assert [r.name for r in LanguageModelQueryRouter(ScriptedModel(["I think shop"]),
                                                     [shop, hr]).route(Query(text="x"))] == ["shop"]
    assert len(LanguageModelQueryRouter(ScriptedModel(["???"]), [shop, hr]).route(
        Query(text="x"))) == 2
    assert LanguageModelQueryRouter(ScriptedModel(["???"]), [shop, hr], fallback="none").route(
        Query(text="x")) == []

"""search(): every mode on every shipped store, held to the score contract and filters."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragloom.errors import ProviderConnectionError, QueryError
from ragloom.filters import MetadataFilter, MetadataFilters, evaluate
from ragloom.retrieval.keyword import HybridRetriever, KeywordRetriever
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import search
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.types import (
    Embedding,
    TextChunk,
    TextDocument,
    Vector,
    VectorEntry,
    VectorMatch,
)

WORDS = ["gene", "cell", "virus", "brain", "protein", "mouse", "tumour", "immune", "running",
         "café", "naïve", "dna"]
MODES = ("vector", "keyword", "hybrid")


def make_entries(embedder: HashingEmbedder, n: int = 40, seed: int = 0) -> list[VectorEntry]:
    rng = np.random.default_rng(seed)
    entries = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS, size=int(rng.integers(2, 9))))
        doc = TextDocument.create(text, source=f"doc{i % 13}",
                                  metadata={"year": int(2000 + i % 7), "lang": ["en", "fr"][i % 2]})
        chunk = TextChunk.create(doc, text, index=i, start=0, end=len(text))
        entries.append(VectorEntry(chunk=chunk, embedding=embedder.embed_documents([text])[0]))
    return entries


def _sqlite(tmp_path: Path) -> Any:
    try:
        from ragloom.stores.sqlite import SqliteVectorStore
    except ImportError:
        pytest.skip("SqliteVectorStore is not available yet")
    return SqliteVectorStore(tmp_path / "kb.db", collection="default")


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    made = InMemoryVectorStore() if request.param == "memory" else _sqlite(tmp_path)
    made.add(make_entries(HashingEmbedder(32)))
    yield made
    close = getattr(made, "close", None)
    if callable(close):
        close()


class VectorOnlyStore:
    """A store with no keyword support, to check the refusals and the fallback."""

    name = "vectors"

    def __init__(self) -> None:
        self.inner = InMemoryVectorStore()

    def add(self, entries: Sequence[VectorEntry]) -> None:
        self.inner.add(entries)

    def query(self, embedding: Embedding, *, top_k: int = 10,
              filters: MetadataFilters | None = None) -> list[VectorMatch]:
        return self.inner.query(embedding, top_k=top_k, filters=filters)

    def delete(self, ids: Sequence[str]) -> int:
        return self.inner.delete(ids)

    def count(self) -> int:
        return self.inner.count()


class FailingEmbedder(HashingEmbedder):
    def embed_query(self, text: str) -> Embedding:
        raise ProviderConnectionError("connection refused", provider="fake")


filter_leaf = st.one_of(
    st.builds(MetadataFilter, st.just("year"), st.sampled_from([">", "<", ">=", "<=", "==", "!="]),
              st.integers(1999, 2008)),
    st.builds(MetadataFilter, st.just("lang"), st.sampled_from(["==", "!="]),
              st.sampled_from(["en", "fr", "de"])),
    st.builds(MetadataFilter, st.just("missing"), st.just("=="), st.just(1)),
)
filters_strategy = st.recursive(
    filter_leaf.map(lambda leaf: MetadataFilters((leaf,))),
    lambda inner: st.builds(MetadataFilters, st.lists(inner, max_size=3).map(tuple),
                            st.sampled_from(["and", "or"])),
    max_leaves=4,
)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("ranker", ["rrf", "weighted"])
def test_score_contract_in_every_mode(store: Any, mode: str, ranker: str) -> None:
    embedder = HashingEmbedder(32)
    for query in ["gene cell", "virus", "brain mouse running", "cafe naive"]:
        options = SearchOptions(mode=mode, ranker=ranker, top_k=20)  # type: ignore[arg-type]
        result = search(store, embedder, query, options, knowledge_base="kb")
        assert result.matches, f"{mode} found nothing for {query!r}"
        scores = [m.score for m in result.matches]
        assert all(0.0 <= s <= 1.0 for s in scores)
        if mode != "hybrid":
            assert scores == sorted(scores, reverse=True)
        else:  # absolute scores, in the fused order of the per-query ones
            per_query = search(store, embedder, query,
                               options.with_(score_normalization="per_query"))
            assert [m.chunk.id for m in per_query.matches] == [m.chunk.id for m in
                                                               result.matches]
            fused = [m.score for m in per_query.matches]
            assert fused == sorted(fused, reverse=True)
        assert len({m.chunk.id for m in result.matches}) == len(result.matches)
        assert all(m.knowledge_base == "kb" for m in result.matches)
        assert not result.degraded


@pytest.mark.parametrize("mode", MODES)
def test_threshold_and_top_k_mean_the_same_everywhere(store: Any, mode: str) -> None:
    embedder = HashingEmbedder(32)
    everything = search(store, embedder, "gene virus", SearchOptions(mode=mode, top_k=50))  # type: ignore[arg-type]
    cut = everything.matches[len(everything.matches) // 2].score
    kept = search(store, embedder, "gene virus",
                  SearchOptions(mode=mode, top_k=50, score_threshold=cut)).matches  # type: ignore[arg-type]
    if mode == "hybrid":
        # Per query, the threshold applies to each side before fusion: exactly the
        # chunks that vector or keyword search with that threshold returns are fused.
        per_query = search(store, embedder, "gene virus", SearchOptions(
            mode="hybrid", top_k=50, score_threshold=cut,
            score_normalization="per_query")).matches
        sides = {m.chunk.id for side in ("vector", "keyword") for m in search(
            store, embedder, "gene virus",
            SearchOptions(mode=side, top_k=100, score_threshold=cut)).matches}  # type: ignore[arg-type]
        assert per_query and {m.chunk.id for m in per_query} == sides
    assert kept and all(m.score >= cut for m in kept)
    assert [m.chunk.id for m in kept] == [m.chunk.id for m in everything.matches
                                          if m.score >= cut]
    assert len(search(store, embedder, "gene virus",
                      SearchOptions(mode=mode, top_k=3)).matches) == 3  # type: ignore[arg-type]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(filters=filters_strategy, mode=st.sampled_from(MODES))
def test_filters_match_the_reference_evaluator(store: Any, filters: MetadataFilters,
                                               mode: str) -> None:
    embedder = HashingEmbedder(32)
    options = SearchOptions(mode=mode, top_k=100, candidates=100, filters=filters)  # type: ignore[arg-type]
    result = search(store, embedder, "gene cell virus brain protein mouse tumour immune dna",
                    options)
    assert all(evaluate(filters, m.chunk.metadata) for m in result.matches)
    unfiltered = search(store, embedder, "gene cell virus brain protein mouse tumour immune dna",
                        options.with_(filters=None))
    expected = {m.chunk.id for m in unfiltered.matches if evaluate(filters, m.chunk.metadata)}
    assert {m.chunk.id for m in result.matches} >= expected


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 80), top_k=st.integers(1, 20),
       metric=st.sampled_from(["cosine", "dot", "euclidean"]))
def test_exact_vector_search_equals_brute_force(seed: int, n: int, top_k: int,
                                                metric: str) -> None:
    rng = np.random.default_rng(seed)
    matrix = rng.normal(size=(n, 8)).astype(np.float32)
    query = rng.normal(size=8).astype(np.float32)
    doc = TextDocument.create("x", source="s")
    chunks = [TextChunk.create(doc, f"t{i}", index=i, start=0, end=1) for i in range(n)]
    store = InMemoryVectorStore(metric)  # type: ignore[arg-type]
    store.add([VectorEntry(chunk=c, embedding=Vector(v))
               for c, v in zip(chunks, matrix, strict=True)])
    if metric == "cosine":
        measure = (matrix @ query) / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))
        order = np.argsort(-measure)
    elif metric == "dot":
        measure = matrix @ query
        order = np.argsort(-measure)
    else:
        measure = np.linalg.norm(matrix - query, axis=1)
        order = np.argsort(measure)

    class Fixed(HashingEmbedder):
        def embed_query(self, text: str) -> Embedding:
            return Vector(query)

    got = search(store, Fixed(8), "q", SearchOptions(mode="vector", top_k=top_k)).matches
    assert [m.chunk.id for m in got] == [chunks[i].id for i in order[:top_k]]
    assert [m.raw_score for m in got] == pytest.approx([float(measure[i]) for i in order[:top_k]],
                                                       rel=1e-4, abs=1e-5)
    assert all(0.0 <= m.score <= 1.0 for m in got)


NASTY = ['"', '"unterminated', 'a AND OR NOT b', "NEAR(gene cell)", "gene*", "col:gene",
         "^gene", "(((", "-gene", "😀🧬", "ﬁ ligature", "日本語のクエリ", "gene\x00cell",
         "' OR 1=1 --", "x" * 10_000, "gene " * 2_000, "\t\n"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query", NASTY, ids=range(len(NASTY)))
def test_nasty_queries_return_results_or_a_query_error(store: Any, mode: str,
                                                       query: str) -> None:
    try:
        result = search(store, HashingEmbedder(32), query,
                        SearchOptions(mode=mode))  # type: ignore[arg-type]
    except QueryError as exc:
        assert str(exc)
        return
    assert all(0.0 <= m.score <= 1.0 for m in result.matches)


@pytest.mark.parametrize("query", ["", "   ", "\n"])
def test_empty_query_is_a_clear_query_error(query: str) -> None:
    with pytest.raises(QueryError, match="empty"):
        search(InMemoryVectorStore(), HashingEmbedder(8), query, SearchOptions())


def test_keyword_mode_without_keyword_support_names_the_store() -> None:
    with pytest.raises(QueryError, match="VectorOnlyStore 'vectors' has no keyword search"):
        search(VectorOnlyStore(), HashingEmbedder(8), "gene", SearchOptions(mode="keyword"))


def test_hybrid_on_a_vector_only_store_runs_as_vector_and_says_so() -> None:
    embedder = HashingEmbedder(32)
    store = VectorOnlyStore()
    store.add(make_entries(embedder))
    result = search(store, embedder, "gene", SearchOptions(mode="hybrid"))
    assert result.matches and result.degraded
    assert "no keyword search" in result.notice


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_embedder_failure_degrades_to_keyword(mode: str) -> None:
    store = InMemoryVectorStore()
    store.add(make_entries(HashingEmbedder(32)))
    result = search(store, FailingEmbedder(32), "gene virus",
                    SearchOptions(mode=mode, top_k=5))  # type: ignore[arg-type]
    keyword = search(store, HashingEmbedder(32), "gene virus",
                     SearchOptions(mode="keyword", top_k=5))
    assert result.degraded and "keyword" in result.notice and "connection refused" in result.notice
    assert [m.chunk.id for m in result.matches] == [m.chunk.id for m in keyword.matches]


def test_embedder_failure_without_keyword_support_raises() -> None:
    with pytest.raises(ProviderConnectionError):
        search(VectorOnlyStore(), FailingEmbedder(8), "gene", SearchOptions(mode="hybrid"))


def test_hybrid_fuses_by_id_and_finds_what_either_side_finds() -> None:
    embedder = HashingEmbedder(32)
    store = InMemoryVectorStore()
    store.add(make_entries(embedder))
    options = SearchOptions(mode="hybrid", top_k=200, candidates=200)
    hybrid = {m.chunk.id for m in search(store, embedder, "virus", options).matches}
    vector = {m.chunk.id for m in search(store, embedder, "virus",
                                         options.with_(mode="vector")).matches}
    keyword = {m.chunk.id for m in search(store, embedder, "virus",
                                          options.with_(mode="keyword")).matches}
    assert hybrid == vector | keyword


def test_keyword_query_follows_adds_and_deletes() -> None:
    embedder = HashingEmbedder(16)
    store = InMemoryVectorStore()
    entries = make_entries(embedder, 20)
    store.add(entries)
    before = store.keyword_query("virus", top_k=50)
    assert before
    store.delete([m.chunk.id for m in before])
    assert store.keyword_query("virus", top_k=50) == []
    assert store.count() == 20 - len(before)


def test_retrievers_implement_the_protocol() -> None:
    from ragloom.protocols import Retriever

    embedder = HashingEmbedder(32)
    store = InMemoryVectorStore()
    store.add(make_entries(embedder))
    keyword = KeywordRetriever(store, top_k=3, knowledge_base="kb")
    hybrid = HybridRetriever(store, embedder, SearchOptions(top_k=4, mode="vector"))
    assert isinstance(keyword, Retriever) and isinstance(hybrid, Retriever)
    assert len(keyword.retrieve("gene")) == 3
    assert keyword.retrieve("gene")[0].knowledge_base == "kb"
    assert hybrid.options.mode == "hybrid"
    filters = MetadataFilters((MetadataFilter("lang", "==", "fr"),))
    found = hybrid.retrieve("gene", filters)
    assert len(found) == 4 and all(m.chunk.metadata["lang"] == "fr" for m in found)

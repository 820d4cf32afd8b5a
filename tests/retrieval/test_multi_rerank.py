"""search_many across knowledge bases, MMR re-ranking, documents from chunk matches."""

from __future__ import annotations

import numpy as np
import pytest

from ragloom.errors import InvalidInputError, QueryError
from ragloom.retrieval.documents import documents_from_matches
from ragloom.retrieval.multi import search_many
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.rerank import MaximalMarginalRelevance
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.types import QueryMatch, TextChunk, TextDocument, VectorEntry


def kb(texts: list[str], embedder: HashingEmbedder, source: str = "s") -> InMemoryVectorStore:
    store = InMemoryVectorStore()
    for i, text in enumerate(texts):
        doc = TextDocument.create(text, source=f"{source}{i}")
        chunk = TextChunk.create(doc, text, index=0, start=0, end=len(text))
        store.add([VectorEntry(chunk=chunk, embedding=embedder.embed_documents([text])[0])])
    return store


@pytest.mark.parametrize("ranker", ["rrf", "weighted"])
def test_search_many_labels_each_match_with_its_knowledge_base(ranker: str) -> None:
    embedder = HashingEmbedder(32)
    papers = kb(["gene therapy trial", "virus genome", "brain imaging"], embedder, "p")
    notes = kb(["gene notes", "lunch menu", "gene gene gene"], embedder, "n")
    # Per-query scores follow the fused order; absolute ones need not (see test_scores).
    options = SearchOptions(top_k=10, ranker=ranker,  # type: ignore[arg-type]
                            score_normalization="per_query")
    result = search_many([("papers", papers, embedder), ("notes", notes, embedder)], "gene",
                         options)
    by_kb = {m.knowledge_base for m in result.matches}
    assert by_kb == {"papers", "notes"}
    assert all(0.0 <= m.score <= 1.0 for m in result.matches)
    assert [m.score for m in result.matches] == sorted((m.score for m in result.matches),
                                                       reverse=True)
    for name, store in (("papers", papers), ("notes", notes)):
        ids = {m.chunk.id for m in result.matches if m.knowledge_base == name}
        assert ids <= {c.id for c in store.chunks()}


def test_search_many_keeps_the_same_chunk_from_two_knowledge_bases_apart() -> None:
    embedder = HashingEmbedder(32)
    one, two = kb(["gene x"], embedder), kb(["gene x"], embedder)
    result = search_many([("one", one, embedder), ("two", two, embedder)], "gene",
                         SearchOptions(mode="keyword", ranker="rrf"))
    assert sorted(m.knowledge_base for m in result.matches) == ["one", "two"]
    # Each keeps its own keyword score (the same text, the same score)...
    assert result.matches[0].score == result.matches[1].score < 1.0
    # ...where per-query RRF rescales the best to 1.
    rescaled = search_many([("one", one, embedder), ("two", two, embedder)], "gene",
                           SearchOptions(mode="keyword", ranker="rrf",
                                         score_normalization="per_query"))
    assert rescaled.matches[0].score == pytest.approx(1.0)


def test_search_many_refuses_no_targets_duplicates_and_empty_queries() -> None:
    embedder = HashingEmbedder(8)
    store = kb(["a"], embedder)
    with pytest.raises(QueryError, match="no knowledge bases"):
        search_many([], "gene")
    with pytest.raises(QueryError, match="distinct"):
        search_many([("a", store, embedder), ("a", store, embedder)], "gene")
    with pytest.raises(QueryError, match="empty"):
        search_many([("a", store, embedder)], " ")


def _matches(texts: list[str]) -> list[QueryMatch]:
    doc = TextDocument.create("d", source="d")
    return [QueryMatch(chunk=TextChunk.create(doc, t, index=i, start=0, end=1),
                       score=1.0 - i / 10) for i, t in enumerate(texts)]


def test_mmr_pushes_a_near_duplicate_down() -> None:
    embedder = HashingEmbedder(64)
    matches = _matches(["gene therapy cells", "gene therapy cells", "virus genome", "x"])
    relevant_only = MaximalMarginalRelevance(embedder, lambda_=1.0).rerank("gene therapy", matches)
    assert [m.chunk.text for m in relevant_only][:2] == ["gene therapy cells"] * 2
    diverse = MaximalMarginalRelevance(embedder, lambda_=0.3, top_k=3).rerank("gene therapy",
                                                                               matches)
    assert len(diverse) == 3
    assert [m.chunk.text for m in diverse][:2] == ["gene therapy cells", "virus genome"]
    scores = [m.score for m in diverse]
    assert all(0.0 <= s <= 1.0 for s in scores) and scores == sorted(scores, reverse=True)


def test_mmr_with_given_vectors_and_bad_settings() -> None:
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    matches = _matches(["a", "b", "c"])
    mmr = MaximalMarginalRelevance(HashingEmbedder(8), lambda_=0.4)
    order = mmr.rerank_vectors(np.array([1.0, 0.0]), vectors, matches)
    assert [m.chunk.text for m in order] == ["a", "c", "b"]
    assert mmr.rerank("q", []) == []
    with pytest.raises(InvalidInputError):
        MaximalMarginalRelevance(HashingEmbedder(8), lambda_=2.0)


def test_documents_from_matches_ranks_documents_by_their_best_chunk() -> None:
    docs = [TextDocument.create(f"doc {i}", source=f"src{i}") for i in range(3)]

    def match(doc: int, index: int, score: float) -> QueryMatch:
        chunk = TextChunk.create(docs[doc], f"c{index}", index=index, start=0, end=1)
        return QueryMatch(chunk=chunk, score=score)

    found = documents_from_matches([match(1, 0, 0.9), match(0, 0, 0.8), match(1, 1, 0.7),
                                    match(2, 0, 0.5), match(0, 1, 0.4)])
    assert [d.key for d in found] == ["src1", "src0", "src2"]
    assert [d.score for d in found] == [0.9, 0.8, 0.5]
    assert [d.chunks for d in found] == [2, 2, 1]
    assert [d.key for d in documents_from_matches(found and [match(2, 0, 0.5)], 1)] == ["src2"]
    assert len(documents_from_matches([match(0, 0, 0.9), match(1, 0, 0.8)], top_n=1)) == 1


@pytest.mark.parametrize("ranker", ["rrf", "weighted"])
@pytest.mark.parametrize("mode", ["vector", "keyword", "hybrid"])
@pytest.mark.parametrize("top_k", [1, 5, 12])
def test_one_knowledge_base_gives_what_the_deep_search_gives(
        ranker: str, mode: str, top_k: int) -> None:
    # One target reads back top_k + 1 chunks, not every candidate's; beside an empty
    # knowledge base (which takes the deep path) the answer must be the same, ties
    # at the cut included (the hashing embedder ties many of these texts).
    embedder = HashingEmbedder(32)
    texts = [f"gene {'therapy ' * (i % 4)}note {i % 7} {'virus' if i % 3 else 'brain'}"
             for i in range(40)]
    papers = kb(texts, embedder, "p")
    empty = InMemoryVectorStore()
    options = SearchOptions(top_k=top_k, mode=mode, ranker=ranker)  # type: ignore[arg-type]
    alone = search_many([("papers", papers, embedder)], "gene therapy virus", options)
    beside = search_many([("papers", papers, embedder), ("empty", empty, embedder)],
                         "gene therapy virus", options)
    assert len(alone.matches) == top_k
    assert [(m.chunk.id, round(m.score, 12), m.knowledge_base) for m in alone.matches] == [
        (m.chunk.id, round(m.score, 12), m.knowledge_base) for m in beside.matches]

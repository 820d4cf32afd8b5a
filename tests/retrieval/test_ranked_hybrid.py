"""Hybrid search over ranked ids (RankedSearchable): the same matches as fusing whole
matches, with only the returned chunks read back."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from ragloom.filters import MetadataFilter
from ragloom.protocols import KeywordSearchable, RankedSearchable
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import search
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.types import TextChunk, VectorEntry, VectorMatch
from tests.retrieval.word_stores import word_store

QUERIES = ["gene cell", "virus", "protein mouse brain", "immune tumour dna", "dna dna gene",
           "nothing matches", "cell"]
OPTIONS = [
    SearchOptions(top_k=5),
    SearchOptions(top_k=5, ranker="rrf"),
    SearchOptions(top_k=3, score_threshold=0.4),
    SearchOptions(top_k=5, candidates=4),
    SearchOptions(top_k=50),
    SearchOptions(top_k=5, extra={"normalization": "zscore"}),
    SearchOptions(top_k=5, filters=MetadataFilter("year", ">=", 2003)),
]


class ChunkReading:
    """The store seen only through query / keyword_query: the path that reads every
    candidate's chunk (and the reference the ranked path must equal)."""

    def __init__(self, store: SqliteVectorStore) -> None:
        self.store = store

    def add(self, entries: Sequence[VectorEntry]) -> None:
        self.store.add(entries)

    def query(self, embedding: Any, *, top_k: int = 10, filters: Any = None
              ) -> list[VectorMatch]:
        return self.store.query(embedding, top_k=top_k, filters=filters)

    def keyword_query(self, text: str, *, top_k: int = 10, filters: Any = None
                      ) -> list[VectorMatch]:
        return self.store.keyword_query(text, top_k=top_k, filters=filters)

    def delete(self, ids: Sequence[str]) -> int:
        return self.store.delete(ids)

    def count(self) -> int:
        return self.store.count()


@pytest.fixture(params=["fts", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqliteVectorStore]:
    made = word_store(tmp_path / "kb.db", request.param, count=60, seed=7)
    yield made
    made.close()


def key(matches: Sequence[Any]) -> list[tuple[Any, ...]]:
    return [(m.chunk.id, m.score, m.raw_score, m.chunk.text, m.chunk.metadata,
             m.knowledge_base) for m in matches]


def test_the_sqlite_store_ranks_ids() -> None:
    assert issubclass(SqliteVectorStore, RankedSearchable)
    assert not isinstance(ChunkReading.__new__(ChunkReading), RankedSearchable)
    assert isinstance(ChunkReading.__new__(ChunkReading), KeywordSearchable)


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: repr(o)[:60])
def test_ranked_hybrid_equals_fusing_whole_matches(store: SqliteVectorStore,
                                                   options: SearchOptions) -> None:
    embedder = HashingEmbedder(16)
    reference = ChunkReading(store)
    for query in QUERIES:
        fast = search(store, embedder, query, options, knowledge_base="kb").matches
        slow = search(reference, embedder, query, options, knowledge_base="kb").matches
        assert key(fast) == key(slow), query
        assert len(fast) <= options.top_k


def test_ranked_ids_match_the_matches(store: SqliteVectorStore) -> None:
    embedder = HashingEmbedder(16)
    for query in QUERIES:
        vector = embedder.embed_query(query)
        ranked = store.ranked_ids(vector, top_k=10)
        assert ranked == [(m.chunk.id, m.score, m.raw_score)
                          for m in store.query(vector, top_k=10)]
        words = store.keyword_ranked_ids(query, top_k=10)
        assert words == [(m.chunk.id, m.score, m.raw_score)
                         for m in store.keyword_query(query, top_k=10)]


def test_only_the_returned_chunks_are_read(store: SqliteVectorStore,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []
    read = store.get_chunks

    def counting(ids: Sequence[str]) -> list[TextChunk]:
        asked.append(len(ids))
        return read(ids)

    monkeypatch.setattr(store, "get_chunks", counting)
    found = search(store, HashingEmbedder(16), "gene cell protein",
                   SearchOptions(top_k=3, candidates=40)).matches
    assert len(found) == 3
    assert asked == [3]


def test_a_chunk_deleted_between_ranking_and_reading_is_left_out(
        store: SqliteVectorStore, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = HashingEmbedder(16)
    options = SearchOptions(top_k=4)
    before = search(store, embedder, "virus gene", options).matches
    read = store.get_chunks

    def deleted_first(ids: Sequence[str]) -> list[TextChunk]:
        store.delete([before[0].chunk.id])
        return read(ids)

    monkeypatch.setattr(store, "get_chunks", deleted_first)
    after = search(store, embedder, "virus gene", options).matches
    assert [m.chunk.id for m in after] == [m.chunk.id for m in before[1:]]

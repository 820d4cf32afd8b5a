"""The file search's passes read from one ranking (vector and keyword mode) and give
what searching again with a ``file_id nin`` filter gives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragloom.errors import ProviderError
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.server.v1 import search as search_module
from ragloom.server.v1.ranked_passes import RankedPasses
from ragloom.server.v1.search import SearchRequest, hit_json, run_search
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.types import Embedding, TextChunk, TextDocument, Vector, VectorEntry

WORDS = [f"w{n}" for n in range(40)]


class RandomEmbedder(HashingEmbedder):
    """Seeded random vectors: scores never tie, so the order is the same whatever the
    store's tie-breaking at a cut (ties are broken by id, but a shallower cut may
    keep other tied chunks than a deeper one)."""

    def embed_query(self, text: str) -> Embedding:
        seed = sum(text.encode())
        return Vector(np.random.default_rng(seed).normal(size=self.dimension))


class CountingStore(SqliteVectorStore):
    """Counts the store calls a search makes."""

    calls: dict[str, int]

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def query(self, *args: Any, **kwargs: Any) -> Any:
        self._count("query")
        return super().query(*args, **kwargs)

    def keyword_query(self, *args: Any, **kwargs: Any) -> Any:
        self._count("keyword_query")
        return super().keyword_query(*args, **kwargs)

    def ranked_ids(self, *args: Any, **kwargs: Any) -> Any:
        self._count("ranked_ids")
        return super().ranked_ids(*args, **kwargs)

    def keyword_ranked_ids(self, *args: Any, **kwargs: Any) -> Any:
        self._count("keyword_ranked_ids")
        return super().keyword_ranked_ids(*args, **kwargs)


def make_kb(path: Path, name: str, files: int, seed: int) -> VectorKnowledgeBase:
    """Files of 1 to 6 chunks with random vectors and random words."""
    rng = np.random.default_rng(seed)
    embedder = RandomEmbedder(16)
    store = CountingStore(path, collection=f"vs:{name}")
    store.calls = {}
    entries = []
    for n in range(files):
        file_id = f"file-{name}-{n}"
        texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(4, 30))))
                 for _ in range(int(rng.integers(1, 7)))]
        doc = TextDocument.create(" ".join(texts), source=file_id, metadata={
            "file_id": file_id, "filename": f"{file_id}.txt",
            "attributes": {"n": n, "even": n % 2 == 0}})
        entries += [VectorEntry(chunk=TextChunk.create(doc, text, index=i, start=0,
                                                       end=len(text)),
                                embedding=Vector(rng.normal(size=16)))
                    for i, text in enumerate(texts)]
    store.add(entries)
    return VectorKnowledgeBase(store, embedder, name=name)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[VectorKnowledgeBase]]:
    path = tmp_path_factory.mktemp("passes") / "vs.sqlite"
    made = [make_kb(path, "one", 40, 0), make_kb(path, "two", 15, 3)]
    yield made
    for kb in made:
        assert isinstance(kb.store, SqliteVectorStore)
        kb.store.close()


@pytest.fixture
def kbs(made: list[VectorKnowledgeBase]) -> list[VectorKnowledgeBase]:
    for kb in made:
        assert isinstance(kb.store, CountingStore)
        kb.store.calls = {}
    return made


def searched_again(kbs: list[VectorKnowledgeBase], request: SearchRequest,
                   monkeypatch: pytest.MonkeyPatch) -> Any:
    """The same search with every pass searching the store again (the reference)."""
    with monkeypatch.context() as patch:
        patch.setattr(search_module, "can_rank_once", lambda store, options: False)
        return run_search(kbs, request)


def page(hits: Any) -> list[dict[str, Any]]:
    return [hit_json(h) for h in hits]


REQUESTS = [
    {"query": "w1 w2 w3", "max_num_results": 10},
    {"query": "w4 w5 w6 w7", "max_num_results": 30},
    {"query": "w8 w9", "max_num_results": 5,
     "filters": {"type": "eq", "key": "even", "value": True}},
    {"query": "w10 w11 w12", "max_num_results": 8,
     "ranking_options": {"score_threshold": 0.25}},
    {"query": "w13 w1", "max_num_results": 50,
     "filters": {"type": "in", "key": "n", "value": [1, 2, 3, 4, 5, 6, 7, 8]}},
]


@pytest.mark.parametrize("mode", ["vector", "keyword"])
@pytest.mark.parametrize("body", REQUESTS)
def test_one_ranking_gives_what_searching_again_gives(
        kbs: list[VectorKnowledgeBase], mode: str, body: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    for targets in (kbs[:1], kbs):
        request = SearchRequest.model_validate({**body, "search_mode": mode})
        query, hits = run_search(targets, request)
        expected_query, expected = searched_again(targets, request, monkeypatch)
        assert query == expected_query
        assert page(hits) == page(expected)
        assert hits  # the requests are chosen to find something
        if mode == "vector":
            scores = [m.score for h in expected for m in h.chunks]
            assert len(set(scores)) == len(scores)  # no ties (see RandomEmbedder)


def test_later_passes_rank_once_and_read_few_chunks(
        kbs: list[VectorKnowledgeBase], monkeypatch: pytest.MonkeyPatch) -> None:
    kb = kbs[0]
    store = kb.store
    assert isinstance(store, CountingStore)
    read: list[str] = []
    real_get = SqliteVectorStore.get_chunks

    def get_chunks(self: SqliteVectorStore, ids: Any) -> Any:
        read.extend(ids)
        return real_get(self, ids)

    monkeypatch.setattr(CountingStore, "get_chunks", get_chunks)
    request = SearchRequest(query="w1 w2 w3", max_num_results=30,
                            search_mode="vector")
    _, hits = run_search([kb], request)
    assert len(hits) == 30
    assert store.calls == {"ranked_ids": 1}
    assert len(read) == len(set(read)) < store.count()  # each chunk read once, not all
    store.calls.clear()
    searched_again([kb], request, monkeypatch)
    assert store.calls["query"] >= 2  # the reference did need several passes


def test_hybrid_searches_again(kbs: list[VectorKnowledgeBase]) -> None:
    kb = kbs[0]
    store = kb.store
    assert isinstance(store, CountingStore)
    run_search([kb], SearchRequest(query="w1 w2 w3", max_num_results=30))
    assert "ranked_ids" in store.calls and "keyword_ranked_ids" in store.calls
    assert store.calls["ranked_ids"] >= 2


def test_a_ranking_goes_deeper_when_its_end_is_reached(
        kbs: list[VectorKnowledgeBase]) -> None:
    kb = kbs[0]
    assert isinstance(kb.store, CountingStore)
    options = kb.search_options.with_(mode="keyword", top_k=1)
    ranking = RankedPasses(kb.store, kb.embedder, "w1", options, kb.name)
    first, more = ranking.take(1)
    assert more and len(first) == 1
    everything, more = ranking.take(500)
    assert not more
    assert kb.store.calls["keyword_ranked_ids"] >= 2
    assert [m.chunk.id for m in everything[:1]] == [first[0].chunk.id]
    expected = kb.store.keyword_query("w1", top_k=500)
    assert [(m.chunk.id, m.score) for m in everything] == [
        (m.chunk.id, m.score) for m in expected]


def test_an_embedder_failure_gives_keyword_results_as_search_does(
        kbs: list[VectorKnowledgeBase], monkeypatch: pytest.MonkeyPatch) -> None:
    class Failing(HashingEmbedder):
        def embed_query(self, text: str) -> Embedding:
            raise ProviderError("the embedding service is down")

    kb = kbs[0]
    broken = VectorKnowledgeBase(kb.store, Failing(16), name=kb.name)
    request = SearchRequest(query="w1 w2", max_num_results=12, search_mode="vector")
    _, hits = run_search([broken], request)
    _, expected = searched_again([broken], request, monkeypatch)
    assert page(hits) == page(expected) and hits

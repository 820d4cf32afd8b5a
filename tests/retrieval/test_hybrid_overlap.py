"""Hybrid search that embeds the query on a worker while the keyword side ranks
(ragloom.retrieval.overlap): the one-thread path's results, errors and fallback."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from ragloom.errors import ProviderConnectionError, StoreError
from ragloom.filters import parse_filters
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.overlap import HybridOverlap
from ragloom.retrieval.search import search
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.types import Embedding
from tests.retrieval.word_stores import word_store

QUERIES = ["gene cell", "virus", "protein mouse brain", "immune tumour dna", "dna dna gene",
           "nothing matches"]
OPTIONS = [
    SearchOptions(top_k=5),
    SearchOptions(top_k=5, ranker="rrf"),
    SearchOptions(top_k=3, score_threshold=0.4),
    SearchOptions(top_k=5, candidates=4),
    SearchOptions(top_k=5, filters=parse_filters({"key": "year", "op": ">=", "value": 2003})),
]
ALWAYS = HybridOverlap(min_chunks=0)
NEVER = HybridOverlap(min_chunks=10**9)


class ThreadNoting(HashingEmbedder):
    """Notes the thread each query is embedded on; fails while ``failing`` is set."""

    def __init__(self) -> None:
        super().__init__(16)
        self.threads: list[str] = []
        self.failing = False

    def embed_query(self, text: str) -> Embedding:
        self.threads.append(threading.current_thread().name)
        if self.failing:
            raise ProviderConnectionError("the embedding service is unreachable")
        return super().embed_query(text)


@pytest.fixture(params=["fts", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqliteVectorStore]:
    made = word_store(tmp_path / "kb.db", request.param, count=80, seed=11)
    yield made
    made.close()


def key(result: Any) -> tuple[Any, ...]:
    return (result.degraded, result.notice,
            [(m.chunk.id, m.score, m.raw_score, m.knowledge_base) for m in result.matches])


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: repr(o)[:60])
def test_the_overlapped_path_returns_the_one_thread_paths_results(
        store: SqliteVectorStore, options: SearchOptions) -> None:
    embedder = ThreadNoting()
    for query in QUERIES:
        serial = search(store, embedder, query, options, knowledge_base="kb", overlap=NEVER)
        assert embedder.threads.pop() == threading.current_thread().name
        beside = search(store, embedder, query, options, knowledge_base="kb", overlap=ALWAYS)
        assert embedder.threads.pop().startswith("ragloom-embed")
        assert key(beside) == key(serial), query


def test_both_sides_rank_at_once_over_one_view(
        store: SqliteVectorStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The vector ranking runs on the worker while this thread ranks by keyword: each
    side waits to see the other started, which a one-after-the-other run never does."""
    from ragloom.stores import sqlite as sqlite_store

    started = {"vector": threading.Event(), "keyword": threading.Event()}
    saw: dict[str, tuple[str, bool]] = {}
    view = sqlite_store._RankingView
    real: dict[str, Any] = {"vector": view.ranked_ids, "keyword": view.keyword_ranked_ids}

    def side(name: str, other: str) -> Any:
        def run(self: Any, value: Any, top_k: int) -> Any:
            started[name].set()
            saw[name] = (threading.current_thread().name, started[other].wait(5))
            return real[name](self, value, top_k)
        return run

    monkeypatch.setattr(view, "ranked_ids", side("vector", "keyword"))
    monkeypatch.setattr(view, "keyword_ranked_ids", side("keyword", "vector"))
    embedder = HashingEmbedder(16)
    beside = search(store, embedder, "gene cell", SearchOptions(top_k=5), overlap=ALWAYS)
    assert saw["vector"][0].startswith("ragloom-embed") and saw["vector"][1]
    assert saw["keyword"] == (threading.current_thread().name, True)
    monkeypatch.undo()
    assert key(beside) == key(search(store, embedder, "gene cell", SearchOptions(top_k=5),
                                     overlap=NEVER))


def test_small_stores_and_other_modes_embed_on_the_callers_thread(
        store: SqliteVectorStore) -> None:
    embedder = ThreadNoting()
    here = threading.current_thread().name
    search(store, embedder, "gene cell", SearchOptions(top_k=3))  # the default threshold
    search(store, embedder, "gene cell", SearchOptions(mode="vector"), overlap=ALWAYS)
    search(store, embedder, "gene cell", SearchOptions(top_k=3), overlap=NEVER)
    assert embedder.threads == [here, here, here]


def test_an_embedding_failure_still_falls_back_to_keyword(store: SqliteVectorStore) -> None:
    embedder = ThreadNoting()
    embedder.failing = True
    for query in QUERIES:
        serial = search(store, embedder, query, SearchOptions(top_k=4), overlap=NEVER)
        beside = search(store, embedder, query, SearchOptions(top_k=4), overlap=ALWAYS)
        assert beside.degraded and "unreachable" in beside.notice
        assert key(beside) == key(serial)
    assert embedder.threads[1].startswith("ragloom-embed")


def test_keyword_errors_propagate_and_the_worker_is_free_again(
        store: SqliteVectorStore, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = ThreadNoting()
    embedded = threading.Event()

    def broken(conn: Any, text: str, top_k: int, filters: Any) -> Any:
        embedded.wait(5)  # the worker is embedding (or done) when the error comes
        raise StoreError("the keyword index is unreadable")

    real = embedder.embed_query

    def noting(text: str) -> Embedding:
        try:
            return real(text)
        finally:
            embedded.set()

    monkeypatch.setattr(embedder, "embed_query", noting)
    monkeypatch.setattr(store, "_keyword_ranked", broken)
    overlap = HybridOverlap(min_chunks=0)
    for chosen in (NEVER, overlap):
        embedded.clear()
        with pytest.raises(StoreError, match="unreadable"):
            search(store, embedder, "gene cell", SearchOptions(top_k=3), overlap=chosen)
    assert embedder.threads[-1].startswith("ragloom-embed")
    monkeypatch.undo()
    # The failed search waited for its worker: the next one gets it.
    search(store, embedder, "gene cell", SearchOptions(top_k=3), overlap=overlap)
    assert embedder.threads[-1].startswith("ragloom-embed")


def test_a_busy_worker_means_one_thread() -> None:
    overlap = HybridOverlap(min_chunks=0, workers=1)
    release = threading.Event()
    first = overlap.submit(lambda: release.wait(5))
    assert first is not None
    assert overlap.submit(lambda: True) is None
    release.set()
    assert first.result() is True
    second = overlap.submit(lambda: 42)
    assert second is not None and second.result() == 42


def test_a_store_that_cannot_count_keeps_one_thread() -> None:
    def broken() -> int:
        raise StoreError("closed")

    assert not HybridOverlap(min_chunks=0).wants(broken)
    assert HybridOverlap(min_chunks=5).wants(lambda: 5)
    assert not HybridOverlap(min_chunks=6).wants(lambda: 5)


def test_concurrent_searches_share_the_worker_with_the_same_results(
        store: SqliteVectorStore) -> None:
    embedder = HashingEmbedder(16)
    expected = {q: key(search(store, embedder, q, SearchOptions(top_k=5), overlap=NEVER))
                for q in QUERIES}
    errors: list[BaseException] = []

    def run(queries: Sequence[str]) -> None:
        try:
            for _ in range(5):
                for q in queries:
                    got = search(store, embedder, q, SearchOptions(top_k=5), overlap=ALWAYS)
                    assert key(got) == expected[q]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(QUERIES[i:] + QUERIES[:i],))
               for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []

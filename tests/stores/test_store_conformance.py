"""One suite every store passes: InMemoryVectorStore and SqliteVectorStore alike."""

from __future__ import annotations

import numpy as np
import pytest

from ragloom.errors import (
    DimensionMismatchError,
    EmbedderMismatchError,
    UnsupportedEmbeddingError,
)
from ragloom.filters import parse_filters
from ragloom.types import SparseVector, Vector, VectorEntry
from tests.stores.conftest import StoreFactory, document_entries, entry, make_chunk

METRICS = ["cosine", "euclidean", "dot"]


def brute_force(matrix: np.ndarray, ids: list[str], query: np.ndarray, metric: str,
                k: int) -> list[tuple[str, float]]:
    """Reference top-k: (id, raw measure), best first, ties by id."""
    if metric == "cosine":
        normed = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
        raw = normed @ (query / np.linalg.norm(query))
        key = raw
    elif metric == "dot":
        raw = matrix @ query
        key = raw
    else:
        raw = np.linalg.norm(matrix - query, axis=1)
        key = -raw
    order = sorted(range(len(ids)), key=lambda i: (-key[i], ids[i]))[:k]
    return [(ids[i], float(raw[i])) for i in order]


def random_store(make_store: StoreFactory, metric: str, n: int = 120, dim: int = 12):
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    ids = [f"c{i:04d}" for i in range(n)]
    store = make_store(metric)
    store.add([entry(make_chunk(cid, f"chunk {i}"), matrix[i]) for i, cid in enumerate(ids)])
    return store, matrix, ids, rng


@pytest.mark.parametrize("metric", METRICS)
def test_top_k_equals_brute_force(make_store: StoreFactory, metric: str) -> None:
    store, matrix, ids, rng = random_store(make_store, metric)
    for _ in range(5):
        query = rng.standard_normal(matrix.shape[1]).astype(np.float32)
        expected = brute_force(matrix, ids, query, metric, 10)
        got = store.query(Vector(query), top_k=10)
        assert [m.chunk.id for m in got] == [cid for cid, _ in expected]
        np.testing.assert_allclose([m.raw_score for m in got], [raw for _, raw in expected],
                                   rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("metric", METRICS)
def test_scores_in_unit_interval_and_monotone(make_store: StoreFactory, metric: str) -> None:
    store, matrix, _, rng = random_store(make_store, metric)
    query = rng.standard_normal(matrix.shape[1]).astype(np.float32) * 3
    got = store.query(Vector(query), top_k=len(matrix))
    scores = [m.score for m in got]
    assert len(got) == len(matrix)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)


def test_upsert_is_idempotent_and_replaces(make_store: StoreFactory) -> None:
    store = make_store("cosine")
    entries = [entry(make_chunk("a", "alpha"), [1, 0, 0]),
               entry(make_chunk("b", "beta"), [0, 1, 0])]
    store.add(entries)
    store.add(entries)
    assert store.count() == 2
    store.add([entry(make_chunk("a", "alpha two"), [0, 0, 1])])
    assert store.count() == 2
    best = store.query(Vector(np.array([0, 0, 1], dtype=np.float32)), top_k=1)[0]
    assert best.chunk.id == "a"
    assert best.chunk.text == "alpha two"
    assert best.score == pytest.approx(1.0)


def test_delete(make_store: StoreFactory) -> None:
    store, matrix, ids, _ = random_store(make_store, "cosine", n=20)
    assert store.delete([*ids[:5], "missing"]) == 5
    assert store.delete(ids[:5]) == 0
    assert store.count() == 15
    got = store.query(Vector(matrix[0]), top_k=20)
    assert {m.chunk.id for m in got} == set(ids[5:])


def test_filters_narrow_the_query(make_store: StoreFactory) -> None:
    store = make_store("cosine")
    store.add([entry(make_chunk(f"c{i}", metadata={"year": 2000 + i,
                                                   "lang": "en" if i % 2 else "de"}),
                     [1.0, float(i)]) for i in range(10)])
    filters = parse_filters({"and": [{"key": "year", "op": ">=", "value": 2005},
                                     {"key": "lang", "op": "==", "value": "en"}]})
    got = store.query(Vector(np.array([1.0, 0.0], dtype=np.float32)), top_k=10, filters=filters)
    assert sorted(m.chunk.id for m in got) == ["c5", "c7", "c9"]


def test_rejects_wrong_embeddings(make_store: StoreFactory) -> None:
    store = make_store("cosine")
    store.add([entry(make_chunk("a"), [1, 0, 0])])
    with pytest.raises(UnsupportedEmbeddingError):
        store.add([VectorEntry(chunk=make_chunk("s"), embedding=SparseVector((1,), (1.0,)))])
    with pytest.raises(UnsupportedEmbeddingError):
        store.query(SparseVector((1,), (1.0,)))
    with pytest.raises(DimensionMismatchError):
        store.add([entry(make_chunk("b"), [1, 0])])
    with pytest.raises(DimensionMismatchError):
        store.query(Vector(np.ones(5, dtype=np.float32)))


def test_replace_document_replaces_only_that_source(make_store: StoreFactory) -> None:
    rng = np.random.default_rng(1)
    store = make_store("cosine")
    doc_a, entries_a = document_entries("a.txt", ["one", "two", "three"], rng)
    doc_b, entries_b = document_entries("b.txt", ["four", "five"], rng)
    store.replace_document(doc_a, entries_a, settings="s1")
    store.replace_document(doc_b, entries_b)
    assert store.count() == 5
    new_a, new_entries = document_entries("a.txt", ["one changed"], rng)
    store.replace_document(new_a, new_entries, settings="s2")
    assert store.count() == 3
    stored = store.find_document("a.txt")
    assert stored is not None
    assert (stored.id, stored.chunk_count, stored.settings) == (new_a.id, 1, "s2")
    assert stored.content_hash == new_a.metadata["content_hash"]
    assert [d.source for d in store.list_documents()] == ["a.txt", "b.txt"]
    remaining = {m.chunk.id for m in store.query(new_entries[0].embedding, top_k=10)}
    assert remaining == {e.id for e in entries_b} | {new_entries[0].id}


def test_delete_documents(make_store: StoreFactory) -> None:
    rng = np.random.default_rng(2)
    store = make_store("cosine")
    doc_a, entries_a = document_entries("a.txt", ["one", "two"], rng)
    doc_b, entries_b = document_entries("b.txt", ["three"], rng)
    store.replace_document(doc_a, entries_a)
    store.replace_document(doc_b, entries_b)
    assert store.delete_documents([doc_a.id, "unknown"]) == 1
    assert store.count() == 1
    assert store.find_document("a.txt") is None
    assert [d.id for d in store.list_documents()] == [doc_b.id]
    assert store.delete_documents([]) == 0


def test_bind_embedder(make_store: StoreFactory) -> None:
    store = make_store("cosine")
    assert store.collection_info() is None
    info = store.bind_embedder("fake:one", 8)
    assert (info.embedder, info.dimension) == ("fake:one", 8)
    assert store.bind_embedder("fake:one", 8) == info
    assert store.collection_info() == info
    with pytest.raises(EmbedderMismatchError, match="fake:one"):
        store.bind_embedder("fake:two", 8)
    with pytest.raises(EmbedderMismatchError, match="fake:one"):
        store.bind_embedder("fake:one", 16)


def test_empty_store_answers_nothing(make_store: StoreFactory) -> None:
    store = make_store("cosine")
    assert store.count() == 0
    assert store.query(Vector(np.ones(3, dtype=np.float32))) == []
    assert store.delete(["x"]) == 0
    assert store.list_documents() == []
    assert store.find_document("x") is None

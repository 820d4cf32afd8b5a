"""Embedding caches: in-memory LRU and SQLite file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragloom.resilience import CachedEmbedder, LRUEmbeddingCache, SQLiteEmbeddingCache
from ragloom.testing.fakes import HashingEmbedder
from ragloom.types import Vector


def test_unchanged_texts_never_reach_the_model() -> None:
    inner = HashingEmbedder(16)
    embedder = CachedEmbedder(inner, LRUEmbeddingCache())
    first = embedder.embed_documents(["a cat", "a dog", "a cat"])
    assert inner.calls == [2]  # the duplicate is embedded once
    second = embedder.embed_documents(["a dog", "a cat", "a bird"])
    assert inner.calls == [2, 1]
    np.testing.assert_array_equal(first[1].values, second[0].values)  # type: ignore[union-attr]
    assert embedder.hits == 2 and embedder.misses == 3  # hits: texts already in the cache
    assert embedder.name == inner.name and embedder.dimension == 16


def test_queries_and_documents_are_cached_apart() -> None:
    cache = LRUEmbeddingCache()
    embedder = CachedEmbedder(HashingEmbedder(8), cache)
    embedder.embed_documents(["same text"])
    embedder.embed_query("same text")
    assert len(cache) == 2


def test_lru_forgets_the_least_recently_used() -> None:
    cache = LRUEmbeddingCache(max_entries=2)
    one = np.ones(3, dtype=np.float32)
    cache.put_many("m", {"a": one, "b": one})
    cache.get_many("m", ["a"])
    cache.put_many("m", {"c": one})
    assert set(cache.get_many("m", ["a", "b", "c"])) == {"a", "c"}
    assert cache.get_many("other-model", ["a"]) == {}


def test_sqlite_cache_persists_float32(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "emb.db"
    cache = SQLiteEmbeddingCache(path)
    assert not path.exists()  # cheap constructor
    vector = np.array([0.1, -2.5, 3.25], dtype=np.float32)
    cache.put_many("m", {"k": vector})
    cache.close()
    reopened = SQLiteEmbeddingCache(path)
    found = reopened.get_many("m", ["k", "missing"])
    assert list(found) == ["k"] and found["k"].dtype == np.float32
    np.testing.assert_array_equal(found["k"], vector)
    keys = [f"k{i}" for i in range(1200)]  # more than one SELECT batch
    reopened.put_many("m", {k: vector for k in keys})
    assert len(reopened.get_many("m", keys)) == 1200
    reopened.close()


def test_cached_embedder_over_sqlite_survives_restart(tmp_path: Path) -> None:
    inner = HashingEmbedder(8)
    CachedEmbedder(inner, SQLiteEmbeddingCache(tmp_path / "c.db")).embed_documents(["x", "y"])
    again = CachedEmbedder(inner, SQLiteEmbeddingCache(tmp_path / "c.db"))
    vectors = again.embed_documents(["x", "y"])
    assert inner.calls == [2] and all(isinstance(v, Vector) for v in vectors)
    assert again.misses == 0


def test_invalid_lru_size() -> None:
    from ragloom.errors import InvalidInputError

    with pytest.raises(InvalidInputError):
        LRUEmbeddingCache(0)

"""The SQLite store keeps the chunk ids a filter passes per collection generation:
a write by this object or by another process must never leave a stale answer."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ragloom.filters import parse_filters
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.types import TextChunk, TextDocument, Vector, VectorEntry

ENGLISH = parse_filters({"key": "lang", "op": "==", "value": "en"})


def _entry(n: int, lang: str) -> VectorEntry:
    rng = np.random.default_rng(n)
    doc = TextDocument.create(f"text number {n}", source=f"d{n}.txt", metadata={"lang": lang})
    chunk = TextChunk.create(doc, f"text number {n}", index=0, start=0, end=13)
    return VectorEntry(chunk=chunk, embedding=Vector(rng.standard_normal(4).tolist()))


def _sources(store: SqliteVectorStore) -> set[str]:
    vector = {m.chunk.metadata["source"]
              for m in store.query(Vector([1.0, 0.0, 0.0, 0.0]), top_k=50, filters=ENGLISH)}
    keyword = {m.chunk.metadata["source"]
               for m in store.keyword_query("text", top_k=50, filters=ENGLISH)}
    assert vector == keyword
    return vector


def test_a_write_from_this_store_or_another_process_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    store = SqliteVectorStore(path, ann="off", keyword_index="memory")
    store.bind_embedder("fake:4", 4)
    store.add([_entry(0, "en"), _entry(1, "de")])
    assert _sources(store) == {"d0.txt"}
    assert len(store._allowed_cache) == 1  # the filter's answer is kept ...
    assert _sources(store) == {"d0.txt"}

    store.add([_entry(2, "en")])  # ... and a write of this object replaces it
    assert _sources(store) == {"d0.txt", "d2.txt"}

    other = SqliteVectorStore(path, ann="off")  # another connection, as another process
    other.add([_entry(3, "en")])
    assert other.delete_where(parse_filters({"key": "source", "op": "==",
                                             "value": "d0.txt"})) == 1
    assert _sources(store) == {"d2.txt", "d3.txt"}


def test_the_cache_stays_small(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "kb.db", ann="off")
    store.bind_embedder("fake:4", 4)
    store.add([_entry(n, f"l{n}") for n in range(40)])
    for n in range(40):
        only = parse_filters({"key": "lang", "op": "==", "value": f"l{n}"})
        found = store.query(Vector([1.0, 0.0, 0.0, 0.0]), top_k=5, filters=only)
        assert [m.chunk.metadata["lang"] for m in found] == [f"l{n}"]
    assert len(store._allowed_cache) <= 16

"""``chunks(filters)``, the filtered listing the adapters use (Haystack's
filter_documents, LlamaIndex's get_nodes), picks what ragloom's reference evaluator picks,
in insertion order, on the in-memory, SQLite and PostgreSQL stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragloom.filters import MetadataFilter, MetadataFilters, evaluate, parse_filters
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing.store_conformance import entry, make_chunk

METADATA: list[dict[str, Any]] = [
    {"x": True}, {"x": 1}, {"x": "1"}, {"x": None}, {"x": [1]}, {}, {"x": {"y": 1}},
    {"x": 1.0}, {"x": 5, "lang": "en"}, {"x": "b", "lang": "fr"}]
TREES = [
    None, MetadataFilters((MetadataFilter("x", "==", 1),)),
    MetadataFilters((MetadataFilter("x", "!=", 1),)),
    MetadataFilters((MetadataFilter("x", "in", ()),)), MetadataFilters((), "or"),
    MetadataFilters((MetadataFilter("x.y", ">", 0),)),
    parse_filters({"or": [{"key": "x", "op": ">=", "value": 2}, {"lang": "fr"}]}),
    parse_filters({"and": [{"key": "x", "op": "nin", "value": [1, "b"]},
                           {"key": "x", "op": "<", "value": "z"}]}),
]


@pytest.fixture(params=["memory", "sqlite", "pgvector"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemoryVectorStore()
        return
    if request.param == "sqlite":
        built: Any = SqliteVectorStore(tmp_path / "kb.db", "listing")
    else:
        from ragloom.stores.pgvector import PgVectorStore

        built = PgVectorStore(request.getfixturevalue("pg_url"), f"listing{id(tmp_path)}")
    yield built
    built.close()


def test_filtered_listing_equals_the_reference(store: Any) -> None:
    assert store.chunks(TREES[1]) == []  # nothing yet, not even a collection
    chunks = [make_chunk(f"c{i}", "w", m) for i, m in enumerate(METADATA)]
    store.add([entry(c, [1.0, float(i + 1)]) for i, c in enumerate(reversed(chunks))])
    order = [c.id for c in reversed(chunks)]  # insertion order
    for tree in TREES:
        expected = [cid for cid in order
                    if evaluate(tree, METADATA[int(cid[1:])])]
        assert [c.id for c in store.chunks(tree)] == expected, tree
    assert [c.id for c in store.chunks()] == order


def test_a_store_without_filtered_listing_is_filtered_by_the_reference() -> None:
    from ragloom.integrations._base import list_chunks
    from ragloom.knowledge_base import VectorKnowledgeBase
    from ragloom.testing.fakes import HashingEmbedder

    class PlainListing(InMemoryVectorStore):
        def chunks(self) -> list[Any]:  # type: ignore[override]  # the older signature
            return super().chunks()

    store = PlainListing()
    store.add([entry(make_chunk(f"c{i}", "w", m), [1.0, float(i + 1)])
               for i, m in enumerate(METADATA)])
    knowledge_base = VectorKnowledgeBase(store, HashingEmbedder())
    tree = TREES[6]
    assert [c.id for c in list_chunks(knowledge_base, tree)] == [
        f"c{i}" for i, m in enumerate(METADATA) if evaluate(tree, m)]

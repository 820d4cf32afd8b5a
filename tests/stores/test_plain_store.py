"""A store that implements only VectorStore still backs a knowledge base: the
knowledge base keeps its document records (ragloom.stores.document_records)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from ragloom.filters import MetadataFilters
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import DocumentIndex, KeywordSearchable, VectorStore
from ragloom.stores.document_records import DocumentRecords
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.testing.store_conformance import StoreConformance, StoreFactory
from ragloom.types import Embedding, TextDocument, VectorEntry, VectorMatch


class PlainStore:
    """add / query / delete / count and nothing else."""

    def __init__(self, metric: str = "cosine") -> None:
        self._inner = InMemoryVectorStore(metric)  # type: ignore[arg-type]

    def add(self, entries: Sequence[VectorEntry]) -> None:
        self._inner.add(entries)

    def query(self, embedding: Embedding, *, top_k: int = 10,
              filters: MetadataFilters | None = None) -> list[VectorMatch]:
        return self._inner.query(embedding, top_k=top_k, filters=filters)

    def delete(self, ids: Sequence[str]) -> int:
        return self._inner.delete(ids)

    def count(self) -> int:
        return self._inner.count()


def test_plain_store_is_only_a_vector_store() -> None:
    store = PlainStore()
    assert isinstance(store, VectorStore)
    assert not isinstance(store, DocumentIndex)
    wrapped = DocumentRecords(store)
    assert isinstance(wrapped, DocumentIndex)
    assert not isinstance(wrapped, KeywordSearchable)


def test_knowledge_base_on_a_plain_store() -> None:
    store = PlainStore()
    kb = VectorKnowledgeBase(store, HashingEmbedder(32))
    first = kb.ingest([TextDocument.create("The lunch break is thirty minutes.", source="a.md"),
                       TextDocument.create("Parking is behind the office.", source="b.md")])
    assert len(first.new) == 2
    again = kb.ingest([TextDocument.create("The lunch break is thirty minutes.", source="a.md")])
    assert len(again.unchanged) == 1
    changed = kb.ingest([TextDocument.create("The lunch break is an hour.", source="a.md")])
    assert len(changed.replaced) == 1
    assert store.count() == 2
    best = kb.retrieve("lunch break", options=kb.search_options.with_(mode="vector", top_k=1))
    assert best[0].chunk.text == "The lunch break is an hour."
    assert kb.delete_sources(["b.md"]) == ["b.md"]
    assert store.count() == 1


class TestDocumentRecords(StoreConformance):
    """The wrapper honours the whole store contract over a plain store."""

    filter_examples = 20

    @pytest.fixture
    def make_store(self) -> StoreFactory:
        def factory(metric: str = "cosine") -> Any:
            return DocumentRecords(PlainStore(metric))

        return factory

    def test_implements_the_protocols(self, make_store: StoreFactory) -> None:
        assert isinstance(make_store("cosine"), DocumentIndex)

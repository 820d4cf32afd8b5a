"""LlamaIndex publishes no store suite: a round trip through
``VectorStoreIndex.from_vector_store(RagloomVectorStore(...))`` on SQLite and PostgreSQL,
against LlamaIndex's own ``SimpleVectorStore`` as the reference: insert, retrieve the
right node, filter, delete by document, reopen by path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_index.core", reason="needs pip install 'ragloom[llama-index]'")

from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import (
    ExactMatchFilter,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

from ragloom.errors import FilterError, QueryError
from ragloom.integrations.llama_index import RagloomEmbedding, RagloomVectorStore
from ragloom.testing.fakes import HashingEmbedder
from tests.integrations.conftest import new_location

DOCUMENTS = [
    ("sqlite", "SQLite keeps every chunk and vector in one file.", "en", 2020),
    ("postgres", "PostgreSQL with pgvector scales a knowledge base out.", "en", 2024),
    ("milvus", "Milvus est un serveur de vecteurs pour les grandes collections.", "fr", 2023),
]


def embed_model() -> RagloomEmbedding:
    return RagloomEmbedding(embedder=HashingEmbedder())


def make_index(kind: str, location: tuple[str, str] | None) -> tuple[VectorStoreIndex, Any]:
    if kind == "llama-simple":
        store: Any = SimpleVectorStore()
        context = StorageContext.from_defaults(vector_store=store)
        return VectorStoreIndex([], storage_context=context, embed_model=embed_model()), store
    assert location is not None
    store = RagloomVectorStore(path=location[0], collection=location[1],
                               embedder="fake:hashing-64")
    return VectorStoreIndex.from_vector_store(store, embed_model=embed_model()), store


@pytest.fixture(params=["ragloom-sqlite", "ragloom-pgvector", "llama-simple"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    kind = request.param
    location = new_location(kind.split("-")[1], request, tmp_path) if "ragloom" in kind else None
    built, store = make_index(kind, location)
    for doc_id, text, lang, year in DOCUMENTS:
        built.insert(Document(text=text, id_=doc_id, metadata={"lang": lang, "year": year}))
    yield built
    if isinstance(store, RagloomVectorStore):
        store.close()


def ids_of(nodes: list[Any]) -> list[str]:
    return [n.node.ref_doc_id for n in nodes]


def test_retrieves_the_right_node(index: VectorStoreIndex) -> None:
    found = index.as_retriever(similarity_top_k=1).retrieve("which file keeps every vector")
    assert ids_of(found) == ["sqlite"]
    assert found[0].node.metadata == {"lang": "en", "year": 2020}
    assert found[0].score is not None and 0 < found[0].score <= 1


def test_filters(index: VectorStoreIndex) -> None:
    french = MetadataFilters(filters=[ExactMatchFilter(key="lang", value="fr")])
    found = index.as_retriever(similarity_top_k=3, filters=french).retrieve("vector file")
    assert ids_of(found) == ["milvus"]
    recent = MetadataFilters(filters=[
        MetadataFilter(key="year", value=2023, operator=FilterOperator.GTE),
        MetadataFilter(key="lang", value="en")], condition=FilterCondition.AND)
    found = index.as_retriever(similarity_top_k=3, filters=recent).retrieve("vector file")
    assert ids_of(found) == ["postgres"]


def test_delete_ref_doc_and_insert_nodes(index: VectorStoreIndex) -> None:
    index.delete_ref_doc("sqlite")
    found = index.as_retriever(similarity_top_k=3).retrieve("which file keeps every vector")
    assert "sqlite" not in ids_of(found) and len(found) == 2
    index.insert_nodes([TextNode(text="DuckDB keeps vectors in a file too.", id_="duck",
                                 metadata={"lang": "en"})])
    found = index.as_retriever(similarity_top_k=1).retrieve("duckdb file")
    assert [n.node.node_id for n in found] == ["duck"]


def test_reopened_by_path_with_hybrid_and_text_modes(kb_location: tuple[str, str]) -> None:
    built, store = make_index("ragloom", kb_location)
    for doc_id, text, lang, year in DOCUMENTS:
        built.insert(Document(text=text, id_=doc_id, metadata={"lang": lang, "year": year}))
    store.close()
    reopened = RagloomVectorStore(path=kb_location[0], collection=kb_location[1])
    assert reopened.client.embedder.name == "fake:hashing-64"  # the recorded embedder
    for mode in (VectorStoreQueryMode.HYBRID, VectorStoreQueryMode.TEXT_SEARCH):
        result = reopened.query(VectorStoreQuery(query_str="pgvector postgresql",
                                                 similarity_top_k=1, mode=mode))
        assert [n.ref_doc_id for n in result.nodes] == ["postgres"]
    assert len(reopened.get_nodes(filters=MetadataFilters(
        filters=[ExactMatchFilter(key="lang", value="en")]))) == 2
    with pytest.raises(FilterError, match="text_match"):
        reopened.query(VectorStoreQuery(query_embedding=[0.0] * 64, filters=MetadataFilters(
            filters=[MetadataFilter(key="lang", value="e", operator=FilterOperator.TEXT_MATCH)])))
    with pytest.raises(QueryError, match="mmr"):
        reopened.query(VectorStoreQuery(query_embedding=[0.0] * 64,
                                        mode=VectorStoreQueryMode.MMR))
    reopened.close()

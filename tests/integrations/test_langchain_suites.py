"""LangChain's own standard suites against the ragloom adapters, on SQLite and PostgreSQL.

``VectorStoreIntegrationTests`` runs on :class:`RagloomVectorStore` (a fresh knowledge
base per test, LangChain's ``DeterministicFakeEmbedding`` embedding through the
adapter) and, as the reference, on LangChain's ``InMemoryVectorStore`` in the same job.
``RetrieversIntegrationTests`` runs on :class:`RagloomRetriever` opened by path over a
knowledge base ingested with ragloom's hashing embedder (found again by its name).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core", reason="needs pip install 'ragloom[langchain]'")
pytest.importorskip("langchain_tests", reason="needs pip install langchain-tests")

from langchain_core.vectorstores import InMemoryVectorStore, VectorStore
from langchain_tests.integration_tests import (
    RetrieversIntegrationTests,
    VectorStoreIntegrationTests,
)

from ragloom.integrations._base import open_knowledge_base
from ragloom.integrations.langchain import RagloomRetriever, RagloomVectorStore
from ragloom.testing.fakes import HashingEmbedder
from ragloom.types import TextDocument
from tests.integrations.conftest import new_location

KINDS = ["ragloom-sqlite", "ragloom-pgvector", "langchain-inmemory"]


class TestVectorStoreSuite(VectorStoreIntegrationTests):
    @pytest.fixture(params=KINDS)
    def vectorstore(self, request: pytest.FixtureRequest,
                    tmp_path: Path) -> Iterator[VectorStore]:  # type: ignore[override]
        if request.param == "langchain-inmemory":
            yield InMemoryVectorStore(embedding=self.get_embeddings())
            return
        path, name = new_location(request.param.split("-")[1], request, tmp_path)
        store = RagloomVectorStore(path=path, collection=name, embedding=self.get_embeddings())
        assert store.knowledge_base.store.count() == 0
        yield store
        store.knowledge_base.store.close()


PASSAGES = [
    ("sqlite.txt", "SQLite keeps every chunk, vector and keyword index in one file."),
    ("postgres.txt", "PostgreSQL with pgvector serves the same knowledge base to many hosts."),
    ("milvus.txt", "Milvus is a vector database server for very large collections."),
    ("bm25.txt", "BM25 ranks chunks by keyword relevance for hybrid search."),
    ("rrf.txt", "Reciprocal rank fusion merges the vector and keyword rankings."),
]


def build_knowledge_base(path: str, name: str) -> None:
    """Ingest PASSAGES with ragloom itself (hashing embedder, recorded by name)."""
    knowledge_base = open_knowledge_base(path, name, HashingEmbedder())
    knowledge_base.ingest([TextDocument.create(text, source=source, metadata={"file": source})
                           for source, text in PASSAGES])
    knowledge_base.store.close()


class TestRetrieverSuite(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True, params=["sqlite", "pgvector"])
    def _knowledge_base(self, request: pytest.FixtureRequest, tmp_path: Path) -> None:
        path, name = new_location(request.param, request, tmp_path)
        build_knowledge_base(path, name)
        self._params = {"path": path, "collection": name}

    @property
    def retriever_constructor(self) -> type[RagloomRetriever]:
        return RagloomRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return dict(self._params)

    @property
    def retriever_query_example(self) -> str:
        return "which vector database keeps chunks"

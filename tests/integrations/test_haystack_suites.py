"""Haystack's own ``DocumentStoreBaseTests`` (every filter test included) against
:class:`RagloomDocumentStore` on SQLite and PostgreSQL, and against Haystack's
``InMemoryDocumentStore`` as the reference, in the same job."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("haystack", reason="needs pip install 'ragloom[haystack]'")

from haystack import Document
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.testing.document_store import DocumentStoreBaseTests

from ragloom.integrations.haystack import RagloomDocumentStore
from tests.integrations.conftest import new_location

KINDS = ["ragloom-sqlite", "ragloom-pgvector", "haystack-inmemory"]


class TestDocumentStoreSuite(DocumentStoreBaseTests):
    @pytest.fixture(params=KINDS)
    def document_store(self, request: pytest.FixtureRequest,
                       tmp_path: Path) -> Iterator[Any]:  # type: ignore[override]
        if request.param == "haystack-inmemory":
            yield InMemoryDocumentStore()
            return
        path, name = new_location(request.param.split("-")[1], request, tmp_path)
        store = RagloomDocumentStore(path=path, collection=name, embedder="fake:hashing-64")
        assert store.count_documents() == 0
        yield store
        store.close()

    def test_write_documents(self, document_store: Any) -> None:
        """The default policy (NONE) fails on a duplicate id, as FAIL does."""
        doc = Document(content="test doc")
        assert document_store.write_documents([doc]) == 1
        with pytest.raises(DuplicateDocumentError):
            document_store.write_documents([doc])
        assert document_store.filter_documents() == [doc]

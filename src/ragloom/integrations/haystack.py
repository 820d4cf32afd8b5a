"""ragloom inside Haystack 2.x: a document store and a retriever component.

``pip install 'ragloom[haystack]'``::

    from haystack import Document, Pipeline
    from ragloom.integrations.haystack import RagloomDocumentStore, RagloomRetriever

    store = RagloomDocumentStore(path="kb.db", collection="notes")
    store.write_documents([Document(content="SQLite keeps the vectors", meta={"lang": "en"})])
    pipeline = Pipeline()
    pipeline.add_component("retriever", RagloomRetriever(document_store=store, top_k=3))
    pipeline.run({"retriever": {"query": "where are vectors kept?"}})

A Haystack document is one ragloom chunk: its id, content and ``meta`` as given. The
knowledge base's embedder (ragloom's default, or ``embedder="provider:model"``) embeds
the content; an embedding, sparse embedding or blob the document carries is kept with
it (so it reads back equal) but not searched. Filters are Haystack's syntax, translated
to ragloom's (see :mod:`ragloom.integrations._translate` and docs/integrations.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from ragloom._optional import require

require("haystack", package="haystack-ai", extra="haystack",
        purpose="ragloom.integrations.haystack")

from haystack import Document, component, default_from_dict, default_to_dict  # noqa: E402
from haystack.document_stores.errors import DuplicateDocumentError  # noqa: E402
from haystack.document_stores.types import DuplicatePolicy  # noqa: E402
from haystack.errors import FilterError  # noqa: E402
from haystack.utils.filters import document_matches_filter  # noqa: E402

from ragloom.errors import ConfigurationError  # noqa: E402
from ragloom.integrations._base import (  # noqa: E402
    Record,
    get_chunks,
    list_chunks,
    resolve_knowledge_base,
    write_records,
)
from ragloom.integrations._translate import UNTRANSLATED, haystack_filters  # noqa: E402
from ragloom.knowledge_base import VectorKnowledgeBase  # noqa: E402
from ragloom.retrieval.options import SearchOptions  # noqa: E402
from ragloom.types import TextChunk  # noqa: E402

__all__ = ["RagloomDocumentStore", "RagloomRetriever"]


def _trust_this_module() -> None:
    """Let ``Pipeline.loads`` rebuild these components once this module is imported, as
    Haystack trusts its own ``haystack_integrations`` packages by default. Their
    serialised form holds a path, a collection, a registry name (``provider:model``)
    and search settings: no import path, nothing executed."""
    try:
        from haystack.core.serialization_security import allow_deserialization_module
    except ImportError:  # Haystack before the deserialisation allowlist
        return
    allow_deserialization_module(__name__)


_trust_this_module()

#: The metadata key holding what a Haystack document carries besides content and meta
#: (embedding, sparse embedding, blob), as one JSON string.
EXTRAS_KEY = "_haystack"


def _record(document: Document) -> Record:
    data = document.to_dict(flatten=False)
    extras = {key: data[key] for key in ("embedding", "sparse_embedding", "blob")
              if data.get(key) is not None}
    if document.content is None:
        extras["content"] = None
    meta = json.loads(json.dumps(document.meta, default=str))
    if extras:
        meta[EXTRAS_KEY] = json.dumps(extras)
    return Record(id=document.id, text=document.content or "", metadata=meta)


def _document(chunk: TextChunk, score: float | None = None) -> Document:
    meta = dict(chunk.metadata)
    extras = json.loads(meta.pop(EXTRAS_KEY, None) or "{}")
    data = {"id": chunk.id, "content": chunk.text, "meta": meta, "score": score, **extras}
    return Document.from_dict(data)


class RagloomDocumentStore:
    """A Haystack ``DocumentStore`` over a ragloom knowledge base.

    ``RagloomDocumentStore(path=DB, collection=NAME)`` opens (or creates on first write)
    knowledge base ``NAME`` where ``ragloom --db DB`` would, embedding with the one it
    was built with (``embedder="provider:model"`` chooses for a new one);
    ``RagloomDocumentStore(knowledge_base=KB)`` wraps one you built (not serialisable).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None,
                 collection: str = "default", embedder: str | None = None, *,
                 knowledge_base: VectorKnowledgeBase | None = None) -> None:
        ragloom_embedder = None
        if embedder is not None:
            from ragloom.registry import make_embedder

            ragloom_embedder = make_embedder(embedder)
        self.path = None if path is None else os.fspath(path)
        self.collection = collection
        self.embedder = embedder
        self.knowledge_base = resolve_knowledge_base(
            knowledge_base, self.path, collection, ragloom_embedder, "RagloomDocumentStore")

    def to_dict(self) -> dict[str, Any]:
        if self.path is None:
            raise ConfigurationError(
                "a RagloomDocumentStore built from a knowledge base object cannot be "
                "serialised; open it with path=... and collection=... instead")
        return default_to_dict(self, path=self.path, collection=self.collection,
                               embedder=self.embedder)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RagloomDocumentStore:
        return default_from_dict(cls, data)

    def close(self) -> None:
        """Close the store's file or connections (reopened on next use)."""
        close = getattr(self.knowledge_base.store, "close", None)
        if callable(close):
            close()

    def count_documents(self) -> int:
        return int(self.knowledge_base.store.count())

    def filter_documents(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """The documents ``filters`` (Haystack's syntax) keeps, in the order written.

        The store applies the filter; parts ragloom's filters cannot express (``NOT``,
        ``!=``, ``not in``, ``== None``: they match documents without the field) are
        checked afterwards with Haystack's own evaluator, so the answer is exact."""
        pushed, exact = haystack_filters(filters, FilterError)
        documents = [_document(c) for c in list_chunks(self.knowledge_base, pushed)]
        if exact or not filters:
            return documents
        return [d for d in documents if document_matches_filter(filters, d)]

    def write_documents(self, documents: list[Document],
                        policy: DuplicatePolicy = DuplicatePolicy.NONE) -> int:
        """Write documents; a duplicate id fails unless ``policy`` is SKIP or OVERWRITE.
        Returns how many were written."""
        if not isinstance(documents, list) or not all(
                isinstance(d, Document) for d in documents):
            raise ValueError("write_documents takes a list of haystack Document objects")
        if policy == DuplicatePolicy.NONE:
            policy = DuplicatePolicy.FAIL
        chosen: dict[str, Document] = {}
        for document in documents:
            if document.id in chosen and policy == DuplicatePolicy.FAIL:
                raise DuplicateDocumentError(f"ID '{document.id}' appears twice in this write")
            if document.id not in chosen or policy == DuplicatePolicy.OVERWRITE:
                chosen[document.id] = document
        if policy != DuplicatePolicy.OVERWRITE:
            present = {c.id for c in get_chunks(self.knowledge_base, list(chosen))}
            if present and policy == DuplicatePolicy.FAIL:
                raise DuplicateDocumentError(
                    f"ID '{sorted(present)[0]}' already exists in knowledge base "
                    f"{self.knowledge_base.name!r}; write with DuplicatePolicy.SKIP or "
                    "OVERWRITE")
            for document_id in present:
                del chosen[document_id]
        write_records(self.knowledge_base, [_record(d) for d in chosen.values()])
        return len(chosen)

    def delete_documents(self, document_ids: list[str]) -> None:
        self.knowledge_base.store.delete(list(document_ids))

    def delete_all_documents(self) -> None:
        self.knowledge_base.clear()

    def search(self, query: str, *, top_k: int = 10, mode: str = "hybrid",
               filters: dict[str, Any] | None = None) -> list[Document]:
        """ragloom's search (``mode`` vector, keyword or hybrid); documents carry scores."""
        pushed, exact = haystack_filters(filters, FilterError)
        if not exact:
            raise FilterError(
                f"ragloom cannot apply this filter while searching: {UNTRANSLATED} match "
                "documents that lack the field, which ragloom's filters never do. Use ==, "
                "in, >, >=, <, <=, AND and OR on meta fields (filter_documents takes them all)")
        options = SearchOptions(mode=mode, top_k=top_k, filters=pushed)  # type: ignore[arg-type]
        matches = self.knowledge_base.search(query, options).matches
        return [_document(m.chunk, float(m.score)) for m in matches]


@component
class RagloomRetriever:
    """Retrieves documents from a :class:`RagloomDocumentStore` with ragloom's search
    (hybrid by default); each document has ragloom's score, in [0, 1]."""

    def __init__(self, document_store: RagloomDocumentStore, top_k: int = 10,
                 filters: dict[str, Any] | None = None, mode: str = "hybrid") -> None:
        if not isinstance(document_store, RagloomDocumentStore):
            raise ConfigurationError("document_store must be a RagloomDocumentStore, not "
                                     f"{type(document_store).__name__}")
        SearchOptions(mode=mode, top_k=top_k)  # type: ignore[arg-type]  # checks them
        haystack_filters(filters, FilterError)
        self.document_store = document_store
        self.top_k = top_k
        self.filters = filters
        self.mode = mode

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, document_store=self.document_store.to_dict(),
                               top_k=self.top_k, filters=self.filters, mode=self.mode)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RagloomRetriever:
        params = data.get("init_parameters", {})
        params["document_store"] = RagloomDocumentStore.from_dict(params["document_store"])
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(self, query: str, filters: dict[str, Any] | None = None,
            top_k: int | None = None) -> dict[str, Sequence[Document]]:
        documents = self.document_store.search(
            query, top_k=top_k or self.top_k, mode=self.mode,
            filters=filters if filters is not None else self.filters)
        return {"documents": documents}

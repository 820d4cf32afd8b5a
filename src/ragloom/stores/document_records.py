"""DocumentRecords: document bookkeeping for a store that keeps none.

:class:`~ragloom.knowledge_base.VectorKnowledgeBase` needs a
:class:`~ragloom.protocols.DocumentIndex` (which documents it holds, their chunks,
the embedder it was built with). A plain :class:`~ragloom.protocols.VectorStore`
(``add``, ``query``, ``delete``, ``count``) gets these records from this wrapper,
which keeps them in memory beside the store and forwards everything else (keyword
search included, when the store has it).

The records last as long as the object: a new process sees none, so re-ingesting
there adds the documents again (chunk ids are content hashes, so the store's upsert
replaces them rather than duplicating) and a replaced document's old chunks are
removed only if this object saw them written. Stores that must survive restarts
implement ``DocumentIndex`` themselves (every store ragloom ships does).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ragloom.errors import EmbedderMismatchError, InvalidInputError, QueryError
from ragloom.filters import MetadataFilters
from ragloom.protocols import CollectionInfo, EmbeddingReadable, StoredDocument, VectorStore
from ragloom.types import Document, Embedding, VectorEntry, VectorMatch


def check_document_entries(document: Document, entries: Sequence[VectorEntry]) -> None:
    """Refuse chunks that belong to another document than the one they are stored with
    (every store's ``replace_document`` checks this before writing anything)."""
    strays = sorted({e.chunk.document_id for e in entries} - {document.id})
    if strays:
        raise InvalidInputError(
            f"chunks passed with document {document.id} ({document.source}) belong to "
            f"other documents: {', '.join(strays[:3])}; build them from this document")


class DocumentRecords:
    """A ``VectorStore`` plus in-memory ``DocumentIndex`` records (see module docstring)."""

    def __init__(self, store: VectorStore, *, name: str = "default") -> None:
        self.store = store
        self.name = name
        self._info: CollectionInfo | None = None
        self._documents: dict[str, StoredDocument] = {}
        self._chunks: dict[str, list[str]] = {}
        self._by_source: dict[str, str] = {}
        self._lock = threading.Lock()

    def __getattr__(self, attribute: str) -> Any:
        # keyword_query, close, ... of the wrapped store; only reached for names this
        # class lacks, so isinstance checks see exactly the store's capabilities.
        if attribute == "store":
            raise AttributeError(attribute)
        return getattr(self.store, attribute)

    # ---------------------------------------------------------------- VectorStore
    def add(self, entries: Sequence[VectorEntry]) -> None:
        self.store.add(entries)

    def query(
        self, embedding: Embedding, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[VectorMatch]:
        return self.store.query(embedding, top_k=top_k, filters=filters)

    def delete(self, ids: Sequence[str]) -> int:
        return self.store.delete(ids)

    def get_embeddings(self, ids: Sequence[str]) -> dict[str, Embedding]:
        """The stored embeddings of ``ids`` (those the wrapped store holds)."""
        if not isinstance(self.store, EmbeddingReadable):
            raise QueryError(f"{type(self.store).__name__} cannot return stored embeddings")
        return self.store.get_embeddings(ids)

    def count(self) -> int:
        return self.store.count()

    # ---------------------------------------------------------------- DocumentIndex
    def collection_info(self) -> CollectionInfo | None:
        return self._info

    def bind_embedder(self, embedder: str, dimension: int) -> CollectionInfo:
        with self._lock:
            if self._info is None:
                self._info = CollectionInfo(name=self.name, embedder=embedder,
                                            dimension=dimension)
            elif (self._info.embedder, self._info.dimension) != (embedder, dimension):
                raise EmbedderMismatchError(
                    f"knowledge base {self.name!r} was built with {self._info.embedder} "
                    f"({self._info.dimension} dimensions), not {embedder} ({dimension})")
            return self._info

    def find_document(self, source: str) -> StoredDocument | None:
        doc_id = self._by_source.get(source)
        return self._documents.get(doc_id) if doc_id else None

    def replace_document(
        self, document: Document, entries: Sequence[VectorEntry], *, settings: str = ""
    ) -> None:
        check_document_entries(document, entries)
        with self._lock:
            # Write first, then drop what the new version no longer has: a failed add
            # leaves the old document whole.
            self.store.add(entries)
            old_ids = {self._by_source.get(document.source), document.id} - {None}
            keep = {entry.id for entry in entries}
            stale = [cid for doc_id in old_ids for cid in self._chunks.get(str(doc_id), [])
                     if cid not in keep]
            if stale:
                self.store.delete(stale)
            for doc_id in old_ids:
                self._forget(str(doc_id))
            self._documents[document.id] = StoredDocument(
                id=document.id, source=document.source,
                content_hash=str(document.metadata.get("content_hash", "")),
                chunk_count=len(keep), settings=settings, metadata=dict(document.metadata))
            self._chunks[document.id] = sorted(keep)
            self._by_source[document.source] = document.id

    def _forget(self, doc_id: str) -> None:
        stored = self._documents.pop(doc_id, None)
        self._chunks.pop(doc_id, None)
        if stored is not None and self._by_source.get(stored.source) == doc_id:
            del self._by_source[stored.source]

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        with self._lock:
            removed = 0
            for doc_id in document_ids:
                if doc_id in self._documents:
                    self.store.delete(self._chunks.get(doc_id, []))
                    self._forget(doc_id)
                    removed += 1
            return removed

    def list_documents(self) -> list[StoredDocument]:
        return sorted(self._documents.values(), key=lambda d: d.source)

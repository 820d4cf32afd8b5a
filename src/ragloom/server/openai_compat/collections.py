"""The knowledge base behind each vector store: one collection of a SQLite store file,
or of the PostgreSQL database when ``path`` is a ``postgresql://`` URL (replicas).

Store objects are kept open (one per vector store) because each holds its
collection's vectors and keyword index in memory once searched (SQLite; it follows
other processes' commits), or its connection pool (PostgreSQL, which reads through).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import Chunker, EmbeddingProvider
from ragloom.retrieval.options import SearchOptions
from ragloom.stores.sqlite import SqliteVectorStore


class VectorStoreCollections:
    def __init__(self, path: str, embedder: EmbeddingProvider, *,
                 on_write: Callable[[Any], None] | None = None) -> None:
        self.path = path
        self.embedder = embedder
        #: Called with a vector store's store once a write to it is committed (the
        #: server's caches move its generation on).
        self.on_write = on_write
        self._stores: dict[str, Any] = {}
        self._lock = threading.Lock()

    def store(self, vs_id: str) -> Any:
        with self._lock:
            store = self._stores.get(vs_id)
            if store is None and self.path.startswith(("postgresql:", "postgres:")):
                from ragloom.stores.factory import open_store

                store = open_store(self.path, collection=f"vs:{vs_id}")
                self._stores[vs_id] = store
            elif store is None:
                store = SqliteVectorStore(self.path, collection=f"vs:{vs_id}")
                self._stores[vs_id] = store
            return store

    def knowledge_base(self, vs_id: str, chunker: Chunker | None = None) -> VectorKnowledgeBase:
        return VectorKnowledgeBase(self.store(vs_id), self.embedder, chunker, name=vs_id,
                                   search=SearchOptions())

    def changed(self, vs_id: str) -> None:
        """A write to the vector store ``vs_id`` was committed."""
        if self.on_write is not None:
            self.on_write(self.store(vs_id))

    def drop(self, vs_id: str) -> None:
        store = self.store(vs_id)
        try:
            store.drop_collection()
        finally:
            if self.on_write is not None:
                self.on_write(store)
        with self._lock:
            self._stores.pop(vs_id, None)
        store.close()

    def delete_file(self, vs_id: str, file_id: str) -> int:
        """Remove the documents of one file (a JSON Lines file may hold several)."""
        store = self.store(vs_id)
        ids = [d.id for d in store.list_documents()
               if d.source == file_id or d.source.startswith(f"{file_id}#")]
        if not ids:
            return 0
        try:
            return int(store.delete_documents(ids))
        finally:
            self.changed(vs_id)

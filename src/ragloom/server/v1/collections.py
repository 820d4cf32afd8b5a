"""The knowledge base behind each vector store: one collection of a SQLite store file,
or of the PostgreSQL database when ``path`` is a ``postgresql://`` URL (replicas).

Store objects are kept open in the server's one
:class:`~ragloom.server.handles.HandleCache` (shared with the knowledge bases of
``/api``, bounded by ``--max-open-collections``): each holds its collection's vectors
and keyword index in memory once searched (SQLite; every view of the file shares
one connection), or its connection pool (PostgreSQL, which reads through). A store
closed to keep under the bound reopens on its next use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import Chunker, EmbeddingProvider
from ragloom.retrieval.options import SearchOptions
from ragloom.server.handles import HandleCache
from ragloom.stores.sqlite import SqliteVectorStore


class VectorStoreCollections:
    def __init__(self, path: str, embedder: EmbeddingProvider, *,
                 handles: HandleCache | None = None,
                 on_write: Callable[[Any], None] | None = None) -> None:
        self.path = path
        self.embedder = embedder
        self.handles = handles if handles is not None else HandleCache()
        #: Called with a vector store's store once a write to it is committed (the
        #: server's caches move its generation on).
        self.on_write = on_write

    @staticmethod
    def key(vs_id: str) -> str:
        return f"vs:{vs_id}"

    def _open(self, vs_id: str) -> Any:
        if self.path.startswith(("postgresql:", "postgres:")):
            from ragloom.stores.factory import open_store

            return open_store(self.path, collection=self.key(vs_id),
                              database=self.handles.pg_database(self.path))
        return SqliteVectorStore(self.path, collection=self.key(vs_id),
                                 database=self.handles.sqlite_database(self.path))

    def store(self, vs_id: str) -> Any:
        return self.handles.get(self.key(vs_id), lambda: self._open(vs_id))

    def knowledge_base(self, vs_id: str, chunker: Chunker | None = None) -> VectorKnowledgeBase:
        return VectorKnowledgeBase(self.store(vs_id), self.embedder, chunker, name=vs_id,
                                   search=SearchOptions())

    def changed(self, vs_id: str) -> None:
        """A write to the vector store ``vs_id`` was committed."""
        if self.on_write is not None:
            self.on_write(self.store(vs_id))

    def drop(self, vs_id: str) -> None:
        """Delete the collection (chunks, sidecar) and close its handle; writes through
        any view of it afterwards raise CollectionDroppedError."""
        store = self.handles.pop(self.key(vs_id)) or self._open(vs_id)
        try:
            store.drop()
        finally:
            if self.on_write is not None:
                self.on_write(store)
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

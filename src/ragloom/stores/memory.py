"""InMemoryVectorStore: exact dense search in a Python process, nothing persisted."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ragloom.errors import (
    DimensionMismatchError,
    EmbedderMismatchError,
    UnsupportedEmbeddingError,
)
from ragloom.filters import MetadataFilters, evaluate
from ragloom.protocols import CollectionInfo, StoredDocument
from ragloom.scores import bm25_to_score
from ragloom.stores.bm25 import BM25Index
from ragloom.stores.exact import DenseMatrix, Metric
from ragloom.types import (
    Document,
    Embedding,
    FloatArray,
    TextChunk,
    Vector,
    VectorEntry,
    VectorMatch,
)


def dense_values(embedding: Embedding, store: str) -> npt.NDArray[np.float32]:
    """The float32 array of a dense embedding, or a clear refusal for other kinds."""
    if isinstance(embedding, Vector):
        return embedding.values
    raise UnsupportedEmbeddingError(
        f"{store} holds dense vectors only; got a {type(embedding).__name__}. "
        "Use a dense embedding model or a store with sparse support."
    )


class InMemoryVectorStore:
    """Exact search with a cosine, euclidean or dot-product metric.

    Good for tests and small, short-lived collections; use ``SqliteVectorStore``
    to keep data between runs.
    """

    def __init__(self, metric: Metric = "cosine", *, name: str = "default") -> None:
        self.name = name
        self._matrix = DenseMatrix(metric)
        self._chunks: dict[str, TextChunk] = {}
        self._embeddings: dict[str, Embedding] = {}  # as added (the matrix may normalise)
        self._documents: dict[str, StoredDocument] = {}
        self._by_source: dict[str, str] = {}
        self._info: CollectionInfo | None = None
        self._bm25 = BM25Index()

    # ------------------------------------------------------------------ VectorStore
    def _checked(self, entries: Sequence[VectorEntry]) -> list[tuple[str, FloatArray]]:
        """The entries' vectors, refused before anything changes if a dimension differs."""
        arrays = [(entry.id, dense_values(entry.embedding, "InMemoryVectorStore"))
                  for entry in entries]
        known = self._matrix.dimension if len(self._matrix) else None
        for _, values in arrays:
            known = known if known is not None else int(values.shape[0])
            if values.shape[0] != known:
                raise DimensionMismatchError(
                    f"vector has {values.shape[0]} dimensions; this collection holds {known}")
        return arrays

    def add(self, entries: Sequence[VectorEntry]) -> None:
        self._matrix.upsert(self._checked(entries))
        for entry in entries:
            self._chunks[entry.id] = entry.chunk
            self._embeddings[entry.id] = entry.embedding
        self._bm25.add((entry.id, entry.chunk.text) for entry in entries)

    def query(
        self, embedding: Embedding, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[VectorMatch]:
        query = dense_values(embedding, "InMemoryVectorStore")
        allowed = None
        if filters is not None:
            allowed = [cid for cid, chunk in self._chunks.items()
                       if evaluate(filters, chunk.metadata)]
        hits = self._matrix.search(query, top_k, allowed)
        return [VectorMatch(chunk=self._chunks[cid], score=score, raw_score=raw)
                for cid, score, raw in hits]

    def keyword_query(
        self, text: str, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[VectorMatch]:
        """BM25 over chunk texts (see ragloom.stores.bm25); raw_score is the BM25 value."""
        allowed = None
        if filters is not None:
            allowed = [cid for cid, chunk in self._chunks.items()
                       if evaluate(filters, chunk.metadata)]
        hits = self._bm25.search(text, top_k, allowed)
        scores = bm25_to_score(np.array([raw for _, raw in hits], dtype=np.float64))
        return [VectorMatch(chunk=self._chunks[cid], score=float(score), raw_score=raw)
                for (cid, raw), score in zip(hits, scores, strict=True)]

    def delete(self, ids: Sequence[str]) -> int:
        ids = list(ids)
        self._bm25.remove(ids)
        for cid in ids:
            self._chunks.pop(cid, None)
            self._embeddings.pop(cid, None)
        return self._matrix.remove(ids)

    def count(self) -> int:
        return len(self._matrix)

    def chunks(self, filters: MetadataFilters | None = None) -> list[TextChunk]:
        """Every chunk (those matching ``filters``), in insertion order."""
        return [chunk for chunk in self._chunks.values() if evaluate(filters, chunk.metadata)]

    def get_embeddings(self, ids: Sequence[str]) -> dict[str, Embedding]:
        """The embeddings of these chunk ids as they were added; unknown ids are absent."""
        return {cid: self._embeddings[cid] for cid in ids if cid in self._embeddings}

    # ---------------------------------------------------------------- DocumentIndex
    def collection_info(self) -> CollectionInfo | None:
        return self._info

    def bind_embedder(self, embedder: str, dimension: int) -> CollectionInfo:
        if self._info is None:
            self._info = CollectionInfo(name=self.name, embedder=embedder, dimension=dimension)
        elif (self._info.embedder, self._info.dimension) != (embedder, dimension):
            raise EmbedderMismatchError(
                f"knowledge base {self.name!r} was built with {self._info.embedder} "
                f"({self._info.dimension} dimensions), not {embedder} ({dimension})"
            )
        return self._info

    def find_document(self, source: str) -> StoredDocument | None:
        doc_id = self._by_source.get(source)
        return self._documents.get(doc_id) if doc_id else None

    def replace_document(
        self, document: Document, entries: Sequence[VectorEntry], *, settings: str = ""
    ) -> None:
        self._checked(entries)  # a refused write must leave the old document whole
        old = self.find_document(document.source)
        if old is not None:
            self.delete_documents([old.id])
        self.add(entries)
        self._documents[document.id] = StoredDocument(
            id=document.id, source=document.source,
            content_hash=str(document.metadata.get("content_hash", "")),
            chunk_count=len(entries), settings=settings, metadata=dict(document.metadata))
        self._by_source[document.source] = document.id

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        wanted = set(document_ids)
        doomed = [cid for cid, chunk in self._chunks.items() if chunk.document_id in wanted]
        self.delete(doomed)
        removed = 0
        for doc_id in wanted:
            stored = self._documents.pop(doc_id, None)
            if stored is not None:
                self._by_source.pop(stored.source, None)
                removed += 1
        return removed

    def list_documents(self) -> list[StoredDocument]:
        return sorted(self._documents.values(), key=lambda d: d.source)

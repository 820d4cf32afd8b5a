"""VectorKnowledgeBase: a store, an embedder and a chunker, composed.

Ingestion is idempotent: a document whose source, content, splitter settings and
embedding model are unchanged costs nothing; a changed document has its chunks
replaced in one store transaction. Embeddings are computed in batches that span
documents, so memory is bounded by the batch, not the collection.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ragloom.errors import StoreError
from ragloom.filters import MetadataFilters
from ragloom.ingestion.report import IngestEvent, IngestReport, Outcome, ProgressCallback
from ragloom.protocols import (
    Chunker,
    DocumentIndex,
    EmbeddingProvider,
    TokenCounter,
    VectorStore,
)
from ragloom.retrieval.options import SearchOptions
from ragloom.types import Document, QueryMatch, TextChunk, VectorEntry

if TYPE_CHECKING:
    from ragloom.ingestion.pipeline import GraphStep, IngestionPipeline
    from ragloom.ingestion.transformers import DocumentTransformer

__all__ = [
    "IngestEvent",
    "IngestReport",
    "Outcome",
    "ProgressCallback",
    "VectorKnowledgeBase",
    "chunker_settings",
    "default_chunker",
]


def default_chunker(embedder: EmbeddingProvider) -> Chunker:
    """The recursive splitter, sized in the embedder's tokens: its own tokenizer, or
    a tiktoken encoding for a hosted one (see :mod:`ragloom.chunking.tokens`)."""
    from ragloom.chunking import RecursiveSplitter

    if isinstance(embedder, TokenCounter):
        return RecursiveSplitter(token_counter=embedder)
    from ragloom.chunking.tokens import token_counter_for

    # Hosted embedders count in their own tokens too (tiktoken for OpenAI models).
    counter = token_counter_for(embedder.name)
    return RecursiveSplitter(token_counter=counter) if counter else RecursiveSplitter()


def chunker_settings(chunker: Chunker) -> str:
    describe = getattr(chunker, "settings_key", None)
    return str(describe()) if callable(describe) else type(chunker).__name__


class VectorKnowledgeBase:
    """``VectorKnowledgeBase(store, embedder, chunker)``: ingest, retrieve, delete."""

    def __init__(
        self,
        store: VectorStore,
        embedder: EmbeddingProvider,
        chunker: Chunker | None = None,
        *,
        name: str = "default",
        search: SearchOptions | None = None,
        batch_size: int = 64,
        graph: GraphStep | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self._chunker = chunker
        self.name = name
        self.search_options = search or SearchOptions()
        self.batch_size = batch_size
        #: Knowledge-graph extraction at ingestion (ragloom.graph.GraphIndexer), or None.
        self.graph = graph

    @property
    def chunker(self) -> Chunker:
        if self._chunker is None:
            self._chunker = default_chunker(self.embedder)
        return self._chunker

    @chunker.setter
    def chunker(self, chunker: Chunker) -> None:
        self._chunker = chunker

    @property
    def index(self) -> DocumentIndex:
        """The store's document records; a plain VectorStore gets in-memory ones
        (:class:`~ragloom.stores.document_records.DocumentRecords`)."""
        if isinstance(self.store, DocumentIndex):
            return self.store
        records = self.__dict__.get("_records")
        if records is None:
            from ragloom.stores.document_records import DocumentRecords

            records = self.__dict__["_records"] = DocumentRecords(self.store, name=self.name)
        return records

    def _indexed_store(self) -> VectorStore:
        """The store, or its records wrapper when it keeps none (for ingestion)."""
        index = self.index
        return index if isinstance(index, VectorStore) else self.store

    # ------------------------------------------------------------------- embedder binding
    def check_embedder(self) -> None:
        """Refuse to search with an embedder other than the one the KB was built with."""
        from ragloom.ingestion.pipeline import check_embedder

        check_embedder(self.index, self.embedder, self.name)

    def _bind(self) -> None:
        self.check_embedder()
        self.index.bind_embedder(self.embedder.name, self.embedder.dimension)

    # ------------------------------------------------------------------------ ingest
    def settings_key(self) -> str:
        return self.pipeline().settings

    def pipeline(
        self, *, document_transformers: Sequence[DocumentTransformer] = (),
        chunk_transformers: Sequence[Any] = (), batch_size: int | None = None,
    ) -> IngestionPipeline:
        """The ingestion pipeline of this knowledge base; ``run_paths`` ingests files
        (skipping unchanged ones before parsing, parsing in a bounded worker)."""
        from ragloom.ingestion.pipeline import IngestionPipeline

        return IngestionPipeline(
            self._indexed_store(), self.embedder, self.chunker,
            document_transformers=document_transformers,
            chunk_transformers=chunk_transformers,
            batch_size=batch_size or self.batch_size, name=self.name, graph=self.graph)

    def ingest(
        self,
        items: Iterable[Document] | Sequence[TextChunk],
        *,
        progress: ProgressCallback | None = None,
        report: IngestReport | None = None,
    ) -> IngestReport:
        """Store documents (chunked and embedded) or ready-made chunks.

        Documents stream through :class:`~ragloom.ingestion.IngestionPipeline`: an
        unchanged document (same source, content and settings) costs nothing, a
        changed one is replaced in one store transaction.
        """
        report = report if report is not None else IngestReport()
        if isinstance(items, Sequence) and items and isinstance(items[0], TextChunk):
            started = time.perf_counter()
            self._ingest_chunks([c for c in items if isinstance(c, TextChunk)], report)
            report.seconds += time.perf_counter() - started
            return report
        documents: Iterable[Document] = items  # type: ignore[assignment]
        return self.pipeline().run(documents, report=report, progress=progress)

    def _ingest_chunks(self, chunks: list[TextChunk], report: IngestReport) -> None:
        self._bind()
        for start in range(0, len(chunks), self.batch_size):
            batch = chunks[start:start + self.batch_size]
            embeddings = self.embedder.embed_documents([c.text for c in batch])
            self.store.add([VectorEntry(chunk=c, embedding=e)
                            for c, e in zip(batch, embeddings, strict=True)])
            report.texts_embedded += len(batch)
            report.chunks_written += len(batch)

    # --------------------------------------------------------------------- retrieve
    def search(self, query: str, options: SearchOptions | None = None) -> Any:
        """Search with every option (mode, ranker, threshold...); returns a SearchResult."""
        from ragloom.retrieval.search import search

        self.check_embedder()
        return search(self.store, self.embedder, query, options or self.search_options,
                      knowledge_base=self.name)

    def retrieve(
        self, query: str, filters: MetadataFilters | None = None, *,
        options: SearchOptions | None = None,
    ) -> list[QueryMatch]:
        opts = options or self.search_options
        if filters is not None:
            opts = opts.with_(filters=filters)
        matches: list[QueryMatch] = self.search(query, opts).matches
        return matches

    # ----------------------------------------------------------------------- delete
    def delete(self, document_ids: Sequence[str]) -> int:
        """Remove these documents with their chunks; returns how many were removed.

        Unknown ids count nothing (no error): a caller that must know which ids
        were missing compares the count, or deletes one id at a time (the CLI's
        ``ragloom delete`` says which were not found and exits 1).
        """
        return self.index.delete_documents(document_ids)

    def delete_where(self, filters: MetadataFilters | None) -> int:
        """Remove every chunk whose metadata matches ``filters`` (``removeAll(filter)``
        of the specifications; ``None`` removes everything). Documents left without
        chunks lose their records, so ingesting them again is not skipped. Returns
        how many chunks were removed."""
        native = getattr(self.store, "delete_where", None)
        if callable(native):
            return int(native(filters))
        from ragloom.filters import evaluate

        listing = getattr(self.store, "chunks", None)
        if not callable(listing):
            raise StoreError(f"{type(self.store).__name__} can neither delete by filter nor "
                             "list its chunks")
        removed = self.store.delete([c.id for c in listing() if evaluate(filters, c.metadata)])
        if isinstance(self.store, DocumentIndex):
            remaining = {c.document_id for c in listing()}
            self.store.delete_documents([d.id for d in self.store.list_documents()
                                         if d.id not in remaining])
        return removed

    def clear(self) -> int:
        """Empty the knowledge base (it keeps its name and embedder); returns the
        number of chunks removed."""
        return self.delete_where(None)

    def delete_sources(self, sources: Iterable[str]) -> list[str]:
        """Remove the documents of these sources; returns the sources removed."""
        removed = []
        for source in sources:
            stored = self.index.find_document(source)
            if stored is not None and self.index.delete_documents([stored.id]):
                removed.append(source)
        return removed

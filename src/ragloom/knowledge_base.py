"""VectorKnowledgeBase: a store, an embedder and a chunker, composed.

Ingestion is idempotent: a document whose source, content, splitter settings and
embedding model are unchanged costs nothing; a changed document has its chunks
replaced in one store transaction. Embeddings are computed in batches that span
documents, so memory is bounded by the batch, not the collection.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ragloom.errors import EmbedderMismatchError, InvalidInputError, StoreError
from ragloom.filters import MetadataFilters
from ragloom.protocols import (
    Chunker,
    DocumentIndex,
    EmbeddingProvider,
    TokenCounter,
    VectorStore,
)
from ragloom.retrieval.options import SearchOptions
from ragloom.types import Document, QueryMatch, TextChunk, TextDocument, VectorEntry, text_hash

Outcome = Literal["new", "unchanged", "replaced", "skipped"]


@dataclass(frozen=True, kw_only=True)
class IngestEvent:
    """Progress of an ingest, reported once per document."""

    source: str
    outcome: Outcome
    chunks: int = 0
    reason: str = ""


@dataclass(kw_only=True)
class IngestReport:
    """What an ingest did, document by document."""

    new: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    chunks_written: int = 0
    texts_embedded: int = 0
    seconds: float = 0.0

    def record(self, event: IngestEvent) -> None:
        if event.outcome == "skipped":
            self.skipped.append((event.source, event.reason))
        else:
            getattr(self, event.outcome).append(event.source)

    def to_dict(self) -> dict[str, Any]:
        return {
            "new": self.new, "unchanged": self.unchanged, "replaced": self.replaced,
            "skipped": [{"source": s, "reason": r} for s, r in self.skipped],
            "removed": self.removed, "chunks_written": self.chunks_written,
            "texts_embedded": self.texts_embedded, "seconds": round(self.seconds, 3),
        }


ProgressCallback = Callable[[IngestEvent], None]


def default_chunker(embedder: EmbeddingProvider) -> Chunker:
    """The recursive splitter, sized in the embedder's tokens when it can count them."""
    from ragloom.chunking import RecursiveSplitter

    if isinstance(embedder, TokenCounter):
        return RecursiveSplitter(token_counter=embedder)
    return RecursiveSplitter()


def chunker_settings(chunker: Chunker) -> str:
    describe = getattr(chunker, "settings_key", None)
    return str(describe()) if callable(describe) else type(chunker).__name__


@dataclass
class _Pending:
    document: Document
    chunks: list[TextChunk]
    replaces: bool


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
    ) -> None:
        self.store = store
        self.embedder = embedder
        self._chunker = chunker
        self.name = name
        self.search_options = search or SearchOptions()
        self.batch_size = batch_size

    @property
    def chunker(self) -> Chunker:
        if self._chunker is None:
            self._chunker = default_chunker(self.embedder)
        return self._chunker

    @property
    def index(self) -> DocumentIndex:
        if not isinstance(self.store, DocumentIndex):
            raise StoreError(
                f"{type(self.store).__name__} keeps no document records; use a store that "
                "implements DocumentIndex (InMemoryVectorStore, SqliteVectorStore)"
            )
        return self.store

    # ------------------------------------------------------------------- embedder binding
    def check_embedder(self) -> None:
        """Refuse to search with an embedder other than the one the KB was built with."""
        info = self.index.collection_info()
        if info is not None and info.embedder != self.embedder.name:
            raise EmbedderMismatchError(
                f"knowledge base {self.name!r} was built with {info.embedder} "
                f"({info.dimension} dimensions); it cannot be searched with {self.embedder.name}. "
                f"Use --embedder {info.embedder}, or ingest into another knowledge base."
            )

    def _bind(self) -> None:
        self.check_embedder()
        self.index.bind_embedder(self.embedder.name, self.embedder.dimension)

    # ------------------------------------------------------------------------ ingest
    def settings_key(self) -> str:
        return f"{chunker_settings(self.chunker)}|{self.embedder.name}"

    def ingest(
        self,
        items: Iterable[Document] | Sequence[TextChunk],
        *,
        progress: ProgressCallback | None = None,
        report: IngestReport | None = None,
    ) -> IngestReport:
        """Store documents (chunked and embedded) or ready-made chunks."""
        started = time.perf_counter()
        report = report if report is not None else IngestReport()
        items = list(items) if isinstance(items, Sequence) else items
        if isinstance(items, Sequence) and items and isinstance(items[0], TextChunk):
            self._ingest_chunks([c for c in items if isinstance(c, TextChunk)], report)
        else:
            self._ingest_documents(items, report, progress)  # type: ignore[arg-type]
        report.seconds += time.perf_counter() - started
        return report

    def _ingest_documents(
        self, documents: Iterable[Document], report: IngestReport,
        progress: ProgressCallback | None,
    ) -> None:
        bound = False
        settings = ""
        pending: list[_Pending] = []
        pending_chunks = 0

        def emit(event: IngestEvent) -> None:
            report.record(event)
            if progress is not None:
                progress(event)

        for document in documents:
            if not bound:
                self._bind()
                settings = self.settings_key()
                bound = True
            event_or_job = self._plan(document, settings)
            if isinstance(event_or_job, IngestEvent):
                emit(event_or_job)
                continue
            pending.append(event_or_job)
            pending_chunks += len(event_or_job.chunks)
            if pending_chunks >= self.batch_size:
                self._flush(pending, settings, report, emit)
                pending, pending_chunks = [], 0
        if pending:
            self._flush(pending, settings, report, emit)

    def _plan(self, document: Document, settings: str) -> IngestEvent | _Pending:
        if not isinstance(document, TextDocument):
            return IngestEvent(source=document.source, outcome="skipped",
                               reason=f"{type(document).__name__} has no text to index")
        if not document.text.strip():
            return IngestEvent(source=document.source, outcome="skipped",
                               reason="no text (empty document)")
        content_hash = str(document.metadata.get("content_hash") or text_hash(document.text))
        stored = self.index.find_document(document.source)
        if (stored is not None and stored.id == document.id
                and stored.content_hash == content_hash and stored.settings == settings):
            return IngestEvent(source=document.source, outcome="unchanged",
                               chunks=stored.chunk_count)
        chunks = [c for c in self.chunker.split(document) if c.text.strip()]
        if not chunks:
            return IngestEvent(source=document.source, outcome="skipped",
                               reason="no text left after splitting")
        return _Pending(document=document, chunks=chunks, replaces=stored is not None)

    def _flush(
        self, pending: list[_Pending], settings: str, report: IngestReport,
        emit: ProgressCallback,
    ) -> None:
        texts = [chunk.text for job in pending for chunk in job.chunks]
        embeddings = self.embedder.embed_documents(texts)
        if len(embeddings) != len(texts):
            raise InvalidInputError(
                f"{self.embedder.name} returned {len(embeddings)} embeddings for {len(texts)} texts"
            )
        report.texts_embedded += len(texts)
        position = 0
        for job in pending:
            entries = [VectorEntry(chunk=chunk, embedding=embeddings[position + i])
                       for i, chunk in enumerate(job.chunks)]
            position += len(job.chunks)
            self.index.replace_document(job.document, entries, settings=settings)
            report.chunks_written += len(entries)
            emit(IngestEvent(source=job.document.source,
                             outcome="replaced" if job.replaces else "new",
                             chunks=len(entries)))

    def _ingest_chunks(self, chunks: list[TextChunk], report: IngestReport) -> None:
        self._bind()
        for start in range(0, len(chunks), self.batch_size):
            batch = chunks[start:start + self.batch_size]
            embeddings = self.embedder.embed_documents([c.text for c in batch])
            self.store.add([VectorEntry(chunk=c, embedding=e) for c, e in zip(batch, embeddings)])
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
        return self.index.delete_documents(document_ids)

    def delete_sources(self, sources: Iterable[str]) -> list[str]:
        """Remove the documents of these sources; returns the sources removed."""
        removed = []
        for source in sources:
            stored = self.index.find_document(source)
            if stored is not None and self.index.delete_documents([stored.id]):
                removed.append(source)
        return removed

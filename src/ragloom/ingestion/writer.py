"""The writing end of :class:`~ragloom.ingestion.IngestionPipeline`: documents in,
batches of chunks embedded and stored, one :class:`~.report.IngestEvent` per document.

A batch (``batch_size`` chunks, spanning documents) is embedded in one call. A store
that writes several documents at once (:class:`BatchDocumentIndex`: the SQLite,
PostgreSQL and Milvus stores) then stores the whole batch in one call, one
transaction where the store has transactions; any other store gets one
:meth:`~ragloom.protocols.DocumentIndex.replace_document` per document. Either way a
document is stored whole or not at all, and its event is emitted only once it is
committed, in the order the documents came in: a run killed at any point leaves whole
documents, those committed are ``unchanged`` next time.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ragloom.errors import EmbedderMismatchError, InvalidInputError
from ragloom.ingestion.manifest import PART_COUNT_KEY, ManifestEntry
from ragloom.ingestion.report import IngestEvent, IngestReport, Outcome, ProgressCallback
from ragloom.loaders.base import LoadResult
from ragloom.protocols import DocumentIndex, EmbeddingProvider
from ragloom.types import Document, Embedding, TextChunk, TextDocument, VectorEntry, text_hash

if TYPE_CHECKING:
    from ragloom.ingestion.pipeline import IngestionPipeline

#: With ``overlap``, the first batch is flushed at this many chunks: the encoder starts
#: while the reader gathers the next batch instead of waiting for a whole one.
FIRST_BATCH = 64


@runtime_checkable
class BatchDocumentIndex(Protocol):
    """A document index that stores several documents in one call.

    Each document replaces any earlier one with its source (or id) and all of its
    chunks, exactly as :meth:`~ragloom.protocols.DocumentIndex.replace_document`
    would, one after another; the store commits each document whole (the shipped
    stores commit the batch in one transaction, all or none).
    """

    def replace_documents(
        self, items: Sequence[tuple[Document, Sequence[VectorEntry]]], *, settings: str = ""
    ) -> None: ...


def check_embedder(index: DocumentIndex, embedder: EmbeddingProvider, name: str) -> None:
    """Refuse an embedder other than the one the knowledge base was built with."""
    info = index.collection_info()
    if info is not None and info.embedder != embedder.name:
        raise EmbedderMismatchError(
            f"knowledge base {name!r} was built with {info.embedder} "
            f"({info.dimension} dimensions); it cannot be searched with {embedder.name}. "
            f"Use --embedder {info.embedder}, or ingest into another knowledge base."
        )


class GraphStep(Protocol):
    """An extra step per stored document (knowledge-graph extraction, ragloom.graph):
    ``prepare`` runs before the transaction that stores the document; ``settings``
    joins the pipeline's, so changing the step re-ingests documents."""

    @property
    def settings(self) -> str: ...

    def prepare(self, document: TextDocument, chunks: Sequence[TextChunk]) -> None: ...


@dataclass
class FileState:
    """The documents of one file in flight; the file's leftovers go when all are done."""

    path: str
    remaining: int
    leftovers: list[ManifestEntry] = field(default_factory=list)


@dataclass
class _Job:
    document: TextDocument
    chunks: list[TextChunk]
    replaces: bool
    file: FileState | None


class Writer:
    """Documents in, batches of chunks embedded and stored, events out.

    With ``overlap``, a batch is embedded on a background thread while the calling
    thread stores the batch before it and gathers the next one, so the embedder
    (which holds the cores without the GIL) never waits for the store or the splitter.
    Events are emitted and documents stored on the calling thread alone, in order.
    """

    def __init__(self, pipeline: IngestionPipeline, report: IngestReport,
                 progress: ProgressCallback | None, *, overlap: bool = False) -> None:
        self.p = pipeline
        self.report = report
        self.progress = progress
        self.settings = pipeline.settings
        self.pending: list[_Job] = []
        self.pending_chunks = 0
        self.bound = False
        self.overlap = overlap
        self._executor: ThreadPoolExecutor | None = None
        self._embedding: tuple[list[_Job], Future[tuple[list[Embedding], int]]] | None = None
        self._flushes = 0

    def emit(self, event: IngestEvent) -> None:
        self.report.record(event)
        if self.progress is not None:
            self.progress(event)

    def _finish(self, state: FileState | None, source: str, outcome: Outcome,
                chunks: int = 0, reason: str = "") -> None:
        last = True
        if state is not None:
            # Each document finishes once, so zero means the whole file is stored: only
            # then do the records the file lost go (a kill before leaves them, and the
            # manifest sees the file as incomplete next time).
            state.remaining -= 1
            last = state.remaining == 0
            if last and state.leftovers:
                self.p.index.delete_documents([e.id for e in state.leftovers])
                self.report.removed.extend(e.source for e in state.leftovers)
        self.emit(IngestEvent(source=source, outcome=outcome, chunks=chunks, reason=reason,
                              last_of_file=last))

    def unchanged(self, entries: Sequence[ManifestEntry]) -> None:
        for position, entry in enumerate(entries):
            self.emit(IngestEvent(source=entry.source, outcome="unchanged",
                                  chunks=entry.chunk_count,
                                  last_of_file=position == len(entries) - 1))

    def add_file(self, path: str, results: list[LoadResult], stored: list[ManifestEntry],
                 presplit: dict[str, list[TextChunk]] | None = None) -> None:
        documents = [r.document for r in results if r.document is not None]
        sources = {r.source for r in results}
        state = FileState(path=path, remaining=len(results))
        if documents:
            # A file that fails now keeps what it had; one that parses drops records it lost.
            state.leftovers = [e for e in stored if e.source not in sources]
        for result in results:
            if result.document is None:
                self._finish(state, result.source, "skipped", reason=result.reason or "")
                continue
            document = result.document
            if "parent_source" in document.metadata:
                document = TextDocument(
                    id=document.id, source=document.source, text=document.text,
                    metadata={**document.metadata, PART_COUNT_KEY: len(documents)})
            self.add(document, state, (presplit or {}).get(document.id))

    def add(self, document: Document, state: FileState | None,
            presplit: list[TextChunk] | None = None) -> None:
        if not isinstance(document, TextDocument):
            self._finish(state, document.source, "skipped",
                         reason=f"{type(document).__name__} has no text to index")
            return
        for transformer in self.p.document_transformers:
            changed = transformer.transform(document)
            if changed is None:
                self._finish(state, document.source, "skipped",
                             reason=f"left out by {type(transformer).__name__}")
                return
            document = changed
        if not document.text.strip():
            self._finish(state, document.source, "skipped", reason="no text (empty document)")
            return
        content_hash = str(document.metadata.get("content_hash") or text_hash(document.text))
        stored = self.p.index.find_document(document.source)
        if (stored is not None and stored.id == document.id
                and stored.content_hash == content_hash and stored.settings == self.settings
                and stored.metadata.get(PART_COUNT_KEY) == document.metadata.get(PART_COUNT_KEY)):
            self._finish(state, document.source, "unchanged", chunks=stored.chunk_count)
            return
        chunks = (presplit if presplit is not None and not self.p.document_transformers
                  else [c for c in self.p.chunker.split(document) if c.text.strip()])
        if not chunks:
            self._finish(state, document.source, "skipped",
                         reason="no text left after splitting")
            return
        self.pending.append(_Job(document=document, chunks=chunks,
                                 replaces=stored is not None, file=state))
        self.pending_chunks += len(chunks)
        limit = self.p.batch_size
        if self.overlap and not self._flushes:
            limit = min(limit, FIRST_BATCH)
        if self.pending_chunks >= limit:
            self.flush()

    def flush(self) -> None:
        """Embed the pending documents and store them; with ``overlap``, start
        embedding them and store the batch embedded before."""
        if not self.pending:
            return
        pending, self.pending, self.pending_chunks = self.pending, [], 0
        self._flushes += 1
        if not self.bound:
            check_embedder(self.p.index, self.p.embedder, self.p.name)
            self.p.index.bind_embedder(self.p.embedder.name, self.p.embedder.dimension)
            self.bound = True
        texts = [chunk.text for job in pending for chunk in job.chunks]
        if not self.overlap:
            self._store(pending, self._embed(texts))
            return
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="ragloom-embed")
        future = self._executor.submit(self._embed, texts)
        previous, self._embedding = self._embedding, (pending, future)
        if previous is not None:
            self._store(previous[0], previous[1].result())

    def finish(self) -> None:
        """Flush, then store the batch still being embedded."""
        self.flush()
        if self._embedding is not None:
            pending, future = self._embedding
            self._embedding = None
            self._store(pending, future.result())

    def close(self) -> None:
        """Stop the embedding thread (after a failure: a batch not stored is dropped;
        its documents are ingested again next time)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
        self._embedding = None

    def _embed(self, texts: list[str]) -> tuple[list[Embedding], int]:
        """The embeddings, and how many texts the model itself saw."""
        misses = _misses(self.p.embedder)
        embeddings = self.p.embedder.embed_documents(texts)
        if len(embeddings) != len(texts):
            raise InvalidInputError(
                f"{self.p.embedder.name} returned {len(embeddings)} embeddings "
                f"for {len(texts)} texts")
        # Behind a cache, only the texts the model really saw count as embedded.
        after = _misses(self.p.embedder)
        return embeddings, (len(texts) if misses is None or after is None
                            else after - misses)

    def _store(self, pending: list[_Job], embedded: tuple[list[Embedding], int]) -> None:
        embeddings, count = embedded
        self.report.texts_embedded += count
        items: list[tuple[_Job, list[VectorEntry]]] = []
        position = 0
        for job in pending:
            items.append((job, [VectorEntry(chunk=chunk, embedding=embeddings[position + i])
                                for i, chunk in enumerate(job.chunks)]))
            position += len(job.chunks)
        index = self.p.index
        if len(items) > 1 and isinstance(index, BatchDocumentIndex):
            # One transaction for the batch instead of one per document: the events
            # (and so a file's completion) follow its commit, as they follow each
            # document's commit below.
            if self.p.graph is not None:
                for job, _ in items:
                    self.p.graph.prepare(job.document, job.chunks)
            index.replace_documents([(job.document, entries) for job, entries in items],
                                    settings=self.settings)
            for job, entries in items:
                self._stored(job, len(entries))
            return
        for job, entries in items:
            if self.p.graph is not None:
                self.p.graph.prepare(job.document, job.chunks)
            index.replace_document(job.document, entries, settings=self.settings)
            self._stored(job, len(entries))

    def _stored(self, job: _Job, chunks: int) -> None:
        self.report.chunks_written += chunks
        self._finish(job.file, job.document.source, "replaced" if job.replaces else "new",
                     chunks=chunks)


def _misses(embedder: EmbeddingProvider) -> int | None:
    value = getattr(embedder, "misses", None)
    return value if isinstance(value, int) else None

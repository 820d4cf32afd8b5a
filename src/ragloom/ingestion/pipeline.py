"""IngestionPipeline: loader → parser → document transformers → splitter → chunk
transformers → embedder → store.

Documents stream through: the pipeline holds one batch of chunks (``batch_size``,
spanning documents) and the documents of the file being read, never the
collection. Embeddings are computed one batch at a time; each document is then
stored with :meth:`~ragloom.protocols.DocumentIndex.replace_document`, one
transaction, so a run killed at any point leaves whole documents: those committed
are unchanged on the next run, the others are ingested again (an embedding cache
such as :class:`ragloom.resilience.CachedEmbedder` spares re-embedding them).

From files (:meth:`IngestionPipeline.run_paths`), a file whose bytes and settings
match the store's record is skipped before parsing; the others are parsed in a
bounded worker process (:mod:`ragloom.ingestion.worker`) on a background thread,
so parsing the next files overlaps embedding the current batch.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ragloom.errors import EmbedderMismatchError, InvalidInputError, StoreError
from ragloom.ingestion.manifest import PART_COUNT_KEY, Manifest, ManifestEntry, hash_file
from ragloom.ingestion.report import IngestEvent, IngestReport, Outcome, ProgressCallback
from ragloom.ingestion.sources import FileSelection, SourceFile, list_files
from ragloom.ingestion.transformers import DocumentTransformer, settings_of
from ragloom.ingestion.worker import ParseOptions, ParseWorker
from ragloom.loaders.base import LoadResult
from ragloom.protocols import Chunker, DocumentIndex, EmbeddingProvider, VectorStore
from ragloom.types import Document, TextChunk, TextDocument, VectorEntry, text_hash

_QUEUE_FILES = 16  # parsed files waiting for the embedder: bounds memory, keeps it busy


def check_embedder(index: DocumentIndex, embedder: EmbeddingProvider, name: str) -> None:
    """Refuse an embedder other than the one the knowledge base was built with."""
    info = index.collection_info()
    if info is not None and info.embedder != embedder.name:
        raise EmbedderMismatchError(
            f"knowledge base {name!r} was built with {info.embedder} "
            f"({info.dimension} dimensions); it cannot be searched with {embedder.name}. "
            f"Use --embedder {info.embedder}, or ingest into another knowledge base."
        )


@dataclass
class _FileState:
    """The documents of one file in flight; the file's leftovers go when all are done."""

    path: str
    remaining: int
    leftovers: list[ManifestEntry] = field(default_factory=list)


@dataclass
class _Job:
    document: TextDocument
    chunks: list[TextChunk]
    replaces: bool
    file: _FileState | None


class GraphStep(Protocol):
    """An extra step per stored document (knowledge-graph extraction, ragloom.graph):
    ``prepare`` runs just before the document's transaction; ``settings`` joins the
    pipeline's, so changing the step re-ingests documents."""

    @property
    def settings(self) -> str: ...

    def prepare(self, document: TextDocument, chunks: Sequence[TextChunk]) -> None: ...


class IngestionPipeline:
    """Composable ingestion into a store that keeps document records."""

    def __init__(
        self,
        store: VectorStore,
        embedder: EmbeddingProvider,
        chunker: Chunker,
        *,
        document_transformers: Sequence[DocumentTransformer] = (),
        chunk_transformers: Sequence[Any] = (),
        batch_size: int = 64,
        name: str = "default",
        graph: GraphStep | None = None,
    ) -> None:
        if not isinstance(store, DocumentIndex):
            raise StoreError(
                f"{type(store).__name__} keeps no document records; use a store that "
                "implements DocumentIndex (InMemoryVectorStore, SqliteVectorStore)")
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be at least 1, got {batch_size}")
        self.store = store
        self.index: DocumentIndex = store
        self.embedder = embedder
        self.splitter = chunker
        if chunk_transformers:
            from ragloom.chunking import TransformingChunker

            chunker = TransformingChunker(chunker, *chunk_transformers)
        self.chunker = chunker
        self.document_transformers = tuple(document_transformers)
        self.batch_size = batch_size
        self.name = name
        self.graph = graph

    @property
    def settings(self) -> str:
        """What a stored document must match to count as unchanged (with its hash)."""
        key = f"{settings_of(self.chunker)}|{self.embedder.name}"
        if self.document_transformers:
            key = " | ".join(settings_of(t) for t in self.document_transformers) + " | " + key
        if self.graph is not None:
            key += f"|{self.graph.settings}"
        return key

    # ------------------------------------------------------------------ entry points
    def run(self, documents: Iterable[Document], *, report: IngestReport | None = None,
            progress: ProgressCallback | None = None) -> IngestReport:
        """Ingest documents already loaded (each checked against the store's record)."""
        started = time.perf_counter()
        report = report if report is not None else IngestReport()
        writer = _Writer(self, report, progress)
        for document in documents:
            writer.add(document, None)
        writer.flush()
        report.seconds += time.perf_counter() - started
        return report

    def run_paths(
        self, paths: Sequence[str], *, selection: FileSelection | None = None,
        parsing: ParseOptions | None = None, sync: bool = False,
        report: IngestReport | None = None, progress: ProgressCallback | None = None,
        on_files: Callable[[int], None] | None = None,
    ) -> IngestReport:
        """Ingest files and folders; with ``sync``, remove the documents of files under
        ``paths`` that no longer exist. ``on_files`` hears how many files will be read."""
        started = time.perf_counter()
        report = report if report is not None else IngestReport()
        parsing = parsing or ParseOptions()
        check_embedder(self.index, self.embedder, self.name)
        manifest = Manifest.from_index(self.index)
        files = list(list_files(paths, selection))
        if on_files is not None:
            on_files(len(files))
        writer = _Writer(self, report, progress)
        for kind, path, payload in self._parsed(files, manifest, parsing):
            if kind == "skip":
                writer.emit(IngestEvent(source=path, outcome="skipped", reason=str(payload)))
            elif kind == "unchanged":
                writer.unchanged(payload)
            else:
                results, presplit = payload
                writer.add_file(path, results, manifest.documents_of(path), presplit)
        writer.flush()
        if sync:
            roots = [os.path.abspath(os.path.expanduser(p)) for p in paths]
            stale = manifest.stale_under(roots)
            if stale:
                self.index.delete_documents([e.id for e in stale])
                report.removed.extend(e.source for e in stale)
        report.seconds += time.perf_counter() - started
        return report

    # ------------------------------------------------------------ reading, threaded
    def _parsed(self, files: list[SourceFile], manifest: Manifest, parsing: ParseOptions
                ) -> Iterator[tuple[str, str, Any]]:
        """(kind, path, payload) per file, produced on a background thread."""
        out: queue.Queue[tuple[str, str, Any]] = queue.Queue(maxsize=_QUEUE_FILES)
        stop = threading.Event()
        settings = self.settings

        def put(item: tuple[str, str, Any]) -> bool:
            while not stop.is_set():
                try:
                    out.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        def produce() -> None:
            worker = ParseWorker(parsing)
            try:
                for source in files:
                    if stop.is_set():
                        return
                    if source.reason is not None:
                        item: tuple[str, str, Any] = ("skip", source.path, source.reason)
                    else:
                        item = self._read(source.path, manifest, settings, parsing, worker)
                        if item[0] == "file":
                            item = ("file", item[1], self._presplit(item[2]))
                    if not put(item):
                        return
                put(("end", "", None))
            except BaseException as exc:  # handed to the consuming thread, which raises it
                put(("error", "", exc))
            finally:
                worker.close()

        thread = threading.Thread(target=produce, name="ragloom-ingest-reader", daemon=True)
        thread.start()
        try:
            while True:
                try:
                    kind, path, payload = out.get(timeout=0.5)
                except queue.Empty:
                    if not thread.is_alive():
                        raise StoreError("the file reader stopped unexpectedly") from None
                    continue
                if kind == "end":
                    return
                if kind == "error":
                    raise payload
                yield kind, path, payload
        finally:
            stop.set()
            thread.join(10)

    def _presplit(self, results: list[LoadResult]) -> tuple[list[LoadResult], dict[str, Any]]:
        """Split the documents of a file on the reader thread, ahead of the writer.

        The splitter (token counting, in Python) then runs while the writer's embedder
        holds the cores without the GIL, instead of between two batches: on 2 cores
        that is most of the splitter's time off the critical path. Only for documents
        the writer will take as they are (no document transformers, not a record of a
        multi-record file, whose metadata the writer extends first).
        """
        chunks: dict[str, Any] = {}
        if not self.document_transformers:
            for result in results:
                document = result.document
                if (isinstance(document, TextDocument) and document.text.strip()
                        and "parent_source" not in document.metadata):
                    chunks[document.id] = [c for c in self.chunker.split(document)
                                           if c.text.strip()]
        return results, chunks

    @staticmethod
    def _read(path: str, manifest: Manifest, settings: str, parsing: ParseOptions,
              worker: ParseWorker) -> tuple[str, str, Any]:
        content_hash = hash_file(path, parsing.limits.max_file_bytes)
        if content_hash is not None:
            current = manifest.unchanged(path, content_hash, settings)
            if current is not None:
                return ("unchanged", path, current)
        return ("file", path, worker.load(path))


class _Writer:
    """Documents in, batches of chunks embedded and stored, events out."""

    def __init__(self, pipeline: IngestionPipeline, report: IngestReport,
                 progress: ProgressCallback | None) -> None:
        self.p = pipeline
        self.report = report
        self.progress = progress
        self.settings = pipeline.settings
        self.pending: list[_Job] = []
        self.pending_chunks = 0
        self.bound = False

    def emit(self, event: IngestEvent) -> None:
        self.report.record(event)
        if self.progress is not None:
            self.progress(event)

    def _finish(self, state: _FileState | None, source: str, outcome: Outcome,
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
                 presplit: dict[str, Any] | None = None) -> None:
        documents = [r.document for r in results if r.document is not None]
        sources = {r.source for r in results}
        state = _FileState(path=path, remaining=len(results))
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

    def add(self, document: Document, state: _FileState | None,
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
        if self.pending_chunks >= self.p.batch_size:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        pending, self.pending, self.pending_chunks = self.pending, [], 0
        if not self.bound:
            check_embedder(self.p.index, self.p.embedder, self.p.name)
            self.p.index.bind_embedder(self.p.embedder.name, self.p.embedder.dimension)
            self.bound = True
        texts = [chunk.text for job in pending for chunk in job.chunks]
        misses = _misses(self.p.embedder)
        embeddings = self.p.embedder.embed_documents(texts)
        if len(embeddings) != len(texts):
            raise InvalidInputError(
                f"{self.p.embedder.name} returned {len(embeddings)} embeddings "
                f"for {len(texts)} texts")
        # Behind a cache, only the texts the model really saw count as embedded.
        after = _misses(self.p.embedder)
        self.report.texts_embedded += (len(texts) if misses is None or after is None
                                       else after - misses)
        position = 0
        for job in pending:
            entries = [VectorEntry(chunk=chunk, embedding=embeddings[position + i])
                       for i, chunk in enumerate(job.chunks)]
            position += len(job.chunks)
            if self.p.graph is not None:
                self.p.graph.prepare(job.document, job.chunks)
            self.p.index.replace_document(job.document, entries, settings=self.settings)
            self.report.chunks_written += len(entries)
            self._finish(job.file, job.document.source,
                         "replaced" if job.replaces else "new", chunks=len(entries))


def _misses(embedder: EmbeddingProvider) -> int | None:
    value = getattr(embedder, "misses", None)
    return value if isinstance(value, int) else None

"""IngestionPipeline: loader → parser → document transformers → splitter → chunk
transformers → embedder → store.

Documents stream through: the pipeline holds one batch of chunks (``batch_size``,
spanning documents) and the documents of the file being read, never the
collection. Embeddings are computed one batch at a time; the batch's documents are
then stored whole (in one ``replace_documents`` call where the store has it, else one
``replace_document`` each: see :mod:`ragloom.ingestion.writer`), so a run killed at
any point leaves whole documents: those committed are unchanged on the next run, the
others are ingested again (an embedding cache such as
:class:`ragloom.resilience.CachedEmbedder` spares re-embedding them).

From files (:meth:`IngestionPipeline.run_paths`), a file whose bytes and settings
match the store's record is skipped before parsing; the others are parsed (plain
text in-process, other formats in a bounded worker process, see
:mod:`ragloom.ingestion.worker`) and split on a reader thread that runs up to a few
batches ahead, and each batch is embedded on its own thread while the batch before
it is stored: on 2 cores the embedder, which holds them without the GIL, then never
waits for parsing, splitting or SQLite. :meth:`IngestionPipeline.run` does the same
for documents with ``read_ahead``.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ragloom.errors import InvalidInputError, StoreError
from ragloom.ingestion.manifest import FAILED_BEFORE, FailedFiles, Manifest, hash_file
from ragloom.ingestion.report import IngestEvent, IngestReport, ProgressCallback
from ragloom.ingestion.sources import FileSelection, SourceFile, list_files
from ragloom.ingestion.transformers import DocumentTransformer, settings_of
from ragloom.ingestion.worker import ParseOptions, ParseWorker
from ragloom.ingestion.writer import BatchDocumentIndex as BatchDocumentIndex
from ragloom.ingestion.writer import GraphStep as GraphStep
from ragloom.ingestion.writer import Writer
from ragloom.ingestion.writer import check_embedder as check_embedder
from ragloom.loaders.base import LoadResult
from ragloom.protocols import Chunker, DocumentIndex, EmbeddingProvider, VectorStore
from ragloom.types import Document, TextDocument

# How far the file reader may run ahead of the embedder. The writer takes a whole
# batch (hundreds of small files) at once; a reader held a few files ahead must then
# parse and split the rest of the next batch while the embedder waits, which cost
# about a tenth of an ingest of small files on 2 cores. So the bound is text, enough
# for a few batches, with a file count for files that hold little.
_AHEAD_CHARACTERS = 2_000_000
_AHEAD_FILES = 2048


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
            progress: ProgressCallback | None = None, read_ahead: bool = False
            ) -> IngestReport:
        """Ingest documents already loaded (each checked against the store's record).

        With ``read_ahead``, ``documents`` is iterated and split on a background
        thread, up to a bound ahead of the embedder: for a source that does work per
        document (files parsed as they are iterated), which then overlaps embedding.
        """
        started = time.perf_counter()
        report = report if report is not None else IngestReport()
        writer = Writer(self, report, progress, overlap=read_ahead)
        try:
            if read_ahead:
                for _kind, _source, (document, chunks) in self._ahead(
                        self._split_ahead(iter(documents))):
                    writer.add(document, None, chunks)
            else:
                for document in documents:
                    writer.add(document, None)
            writer.finish()
        finally:
            writer.close()
        report.seconds += time.perf_counter() - started
        return report

    def run_paths(
        self, paths: Sequence[str], *, selection: FileSelection | None = None,
        parsing: ParseOptions | None = None, sync: bool = False,
        report: IngestReport | None = None, progress: ProgressCallback | None = None,
        on_files: Callable[[int], None] | None = None, failed: FailedFiles | None = None,
        retry_failed: bool = False,
    ) -> IngestReport:
        """Ingest files and folders; with ``sync``, remove the documents of files under
        ``paths`` that no longer exist. ``on_files`` hears how many files will be read.

        With ``failed``, a file that failed to parse before and has not changed since is
        skipped without parsing (``report.failed_before``) unless ``retry_failed``;
        ``failed`` is updated with this run's failures (the caller saves it)."""
        started = time.perf_counter()
        report = report if report is not None else IngestReport()
        parsing = parsing or ParseOptions()
        check_embedder(self.index, self.embedder, self.name)
        manifest = Manifest.from_index(self.index)
        files = list(list_files(paths, selection))
        if on_files is not None:
            on_files(len(files))
        writer = Writer(self, report, progress, overlap=True)
        hashes: dict[str, str] = {}
        memory = None if failed is None or retry_failed else failed
        try:
            for kind, path, payload in self._ahead(
                    self._file_items(files, manifest, parsing, memory, hashes)):
                if kind == "failed_before":
                    report.failed_before.append(path)
                    writer.emit(IngestEvent(source=path, outcome="skipped",
                                            reason=f"{FAILED_BEFORE} ({payload})"))
                elif kind == "skip":
                    writer.emit(IngestEvent(source=path, outcome="skipped",
                                            reason=str(payload)))
                elif kind == "unchanged":
                    writer.unchanged(payload)
                else:
                    results, presplit = payload
                    writer.add_file(path, results, manifest.documents_of(path), presplit)
            writer.finish()
        finally:
            writer.close()
        if failed is not None:
            _remember_failures(failed, hashes, report)
        if sync:
            roots = [os.path.abspath(os.path.expanduser(p)) for p in paths]
            stale = manifest.stale_under(roots)
            if stale:
                self.index.delete_documents([e.id for e in stale])
                report.removed.extend(e.source for e in stale)
        report.seconds += time.perf_counter() - started
        return report

    # ------------------------------------------------------------ reading, threaded
    def _file_items(self, files: list[SourceFile], manifest: Manifest, parsing: ParseOptions,
                    failed: FailedFiles | None = None, hashes: dict[str, str] | None = None
                    ) -> Iterator[tuple[str, str, Any]]:
        """(kind, path, payload) per file: skipped, unchanged, or parsed and split."""
        settings = self.settings
        worker = ParseWorker(parsing)
        try:
            for source in files:
                if source.reason is not None:
                    yield ("skip", source.path, source.reason)
                    continue
                item = self._read(source.path, manifest, settings, parsing, worker, failed,
                                  hashes)
                if item[0] == "file":
                    item = ("file", item[1], self._presplit(item[2]))
                yield item
        finally:
            worker.close()

    def _split_ahead(self, documents: Iterator[Document]) -> Iterator[tuple[str, str, Any]]:
        """("document", source, (document, its chunks or None)) per document."""
        for document in documents:
            chunks = None
            if (not self.document_transformers and isinstance(document, TextDocument)
                    and document.text.strip()):
                chunks = [c for c in self.chunker.split(document) if c.text.strip()]
            yield ("document", document.source, (document, chunks))

    def _ahead(self, items: Iterator[tuple[str, str, Any]]) -> Iterator[tuple[str, str, Any]]:
        """``items``, produced on a background thread up to a bound ahead of the caller."""
        out: queue.Queue[tuple[str, str, Any]] = queue.Queue(maxsize=_AHEAD_FILES)
        stop = threading.Event()
        backlog = _Backlog(_AHEAD_CHARACTERS, stop)

        def put(item: tuple[str, str, Any]) -> bool:
            if not backlog.reserve(_characters(item)):
                return False
            while not stop.is_set():
                try:
                    out.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        def produce() -> None:
            try:
                for item in items:
                    if stop.is_set() or not put(item):
                        return
                put(("end", "", None))
            except BaseException as exc:  # handed to the consuming thread, which raises it
                put(("error", "", exc))
            finally:
                close = getattr(items, "close", None)
                if close is not None:
                    close()  # a generator's cleanup (the parse worker) runs on this thread

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
                backlog.release(_characters((kind, path, payload)))
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
              worker: ParseWorker, failed: FailedFiles | None = None,
              hashes: dict[str, str] | None = None) -> tuple[str, str, Any]:
        content_hash = hash_file(path, parsing.limits.max_file_bytes)
        if content_hash is not None:
            current = manifest.unchanged(path, content_hash, settings)
            if current is not None:
                return ("unchanged", path, current)
            reason = failed.reason(path, content_hash) if failed is not None else None
            if reason is not None:
                return ("failed_before", path, reason)
            if hashes is not None:
                hashes[path] = content_hash
        return ("file", path, worker.load(path))


def _remember_failures(failed: FailedFiles, hashes: dict[str, str],
                       report: IngestReport) -> None:
    """Record the parsed files that gave no document (all skipped), forget the others."""
    stored: set[str] = set()
    for source in (*report.new, *report.replaced, *report.unchanged):
        stored.add(source.partition("#")[0])
    reasons: dict[str, str] = {}
    for source, reason in report.skipped:
        reasons.setdefault(source.partition("#")[0], reason)
    for path, content_hash in hashes.items():
        if path in reasons and path not in stored:
            failed.record(path, content_hash, reasons[path])
        else:
            failed.forget(path)


def _characters(item: tuple[str, str, Any]) -> int:
    """The text a reader item holds (0 for skips and unchanged files)."""
    if item[0] == "document":
        document = item[2][0]
        return len(document.text) if isinstance(document, TextDocument) else 0
    if item[0] != "file":
        return 0
    results: list[LoadResult] = item[2][0]
    return sum(len(r.document.text) for r in results
               if r.document is not None and isinstance(r.document, TextDocument))


class _Backlog:
    """Characters read but not yet taken by the writer, held under a bound."""

    def __init__(self, limit: int, stop: threading.Event) -> None:
        self.limit = limit
        self.used = 0
        self.stop = stop
        self._changed = threading.Condition()

    def reserve(self, amount: int) -> bool:
        """Wait for room (a file larger than the bound waits for an empty backlog);
        False when the run stops meanwhile."""
        with self._changed:
            while self.used and self.used + amount > self.limit:
                if self.stop.is_set():
                    return False
                self._changed.wait(0.1)
            self.used += amount
            return True

    def release(self, amount: int) -> None:
        with self._changed:
            self.used -= amount
            self._changed.notify_all()

"""Attaching files to vector stores in the background.

A POST answers at once with ``in_progress``; :class:`VectorStoreIngestor` runs one
worker thread that takes every waiting file (up to ``batch`` at a time) and ingests
those of one vector store as one stream (:mod:`.attach`): files are parsed on a
reader thread while the chunks of the files before them are embedded, in batches of
chunks that span files. Each file moves to ``completed`` as soon as its documents
are stored, or to ``failed`` with ``last_error`` (``unsupported_file``,
``invalid_file``, ``server_error``).

The status lives in SQLite, so files still ``in_progress`` when the server stopped
are picked up again when it starts; ingestion replaces a file's documents by
source (the file id), so doing one again never duplicates it.

On PostgreSQL (replicas) the table itself is the queue: each replica's worker claims
waiting files with a lease (``lease_owner``, ``lease_until``, renewed by a heartbeat
while it lives), so two replicas never ingest the same file at once and files a
killed replica held are taken over when its lease expires.
"""

from __future__ import annotations

import contextlib
import json
import logging
import mimetypes
import os
import queue
import secrets
import tempfile
import threading
import time
from collections import defaultdict
from typing import Any

from ragloom.errors import CollectionDroppedError
from ragloom.ingestion.worker import ParseOptions, ParseWorker
from ragloom.loaders.base import LoadResult
from ragloom.loaders.detect import detect_format
from ragloom.loaders.files import default_parser, parse_to_results
from ragloom.server.v1.attach import EMBED_BATCH, AttachStream
from ragloom.server.v1.chunking import chunker_for
from ragloom.server.v1.collections import VectorStoreCollections
from ragloom.server.v1.db import MetaDB, dumps
from ragloom.server.v1.files import file_bytes
from ragloom.types import TextDocument

log = logging.getLogger("ragloom.server.openai.ingest")

#: Files one replica claims at a time: fewer than one stream takes alone, so that
#: replicas share a large batch.
CLAIM = 512


def error_code(reason: str) -> str:
    if "unknown type" in reason or "unsupported format" in reason:
        return "unsupported_file"
    return "invalid_file"


def _parse(data: bytes, filename: str, base: dict[str, Any],
           worker: ParseWorker | None) -> tuple[list[LoadResult], str]:
    """Load results and the source prefix they carry. With a worker, only what it
    would read in-process (plain text, CSV, JSON, small) is parsed here; PDF, Office,
    HTML, Markdown and the rest go to its bounded process."""
    if worker is None or (len(data) <= worker.options.in_process_bytes and detect_format(
            data, filename, base["mime_type"]) in worker.options.in_process_formats):
        return parse_to_results(data, filename, base, default_parser(),
                                base["mime_type"]), filename
    with tempfile.TemporaryDirectory(prefix="ragloom-oai-") as folder:
        path = os.path.join(folder, os.path.basename(filename) or "upload")
        with open(path, "wb") as handle:
            handle.write(data)
        return worker.load(path), path


def documents_of(file_id: str, filename: str, data: bytes, attributes: dict[str, Any],
                 worker: ParseWorker | None = None) -> tuple[list[TextDocument], str]:
    """The documents of an uploaded file, or none and the reason."""
    base: dict[str, Any] = {"file_id": file_id, "filename": filename, "file_name": filename,
                            "attributes": attributes, "size": len(data),
                            "mime_type": mimetypes.guess_type(filename)[0]}
    if not data:
        return [], "empty file"
    results, prefix = _parse(data, filename, base, worker)
    documents: list[TextDocument] = []
    for result in results:
        if result.document is None:
            return [], result.reason or "no text found"
        document = result.document
        # The source is the file id (plus the record for JSON Lines), so a file is one
        # document set, whatever its name, and search results name it by its id.
        part = document.source[len(prefix):] if document.source.startswith(prefix) else ""
        known = {k: v for k, v in base.items() if v is not None}
        metadata = {**dict(document.metadata), **known, "source": f"{file_id}{part}"}
        metadata.pop("parent_source", None)
        documents.append(TextDocument.create(document.text, source=f"{file_id}{part}",
                                             metadata=metadata))
    if not any(d.text.strip() for d in documents):
        return [], "no text found"
    return documents, ""


class VectorStoreIngestor:
    def __init__(self, db: MetaDB, collections: VectorStoreCollections, *,
                 batch: int = 4096, lease_seconds: float = 30.0) -> None:
        self.db = db
        self.collections = collections
        self.batch = batch
        self.lease_seconds = lease_seconds
        self.owner = f"replica_{secrets.token_hex(8)}"
        # One entry per submission, so the worker takes a request's files together (a
        # stream that ends between two groups leaves the encoder idle while the next
        # one starts).
        self._queue: queue.Queue[list[tuple[str, str]]] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.idle = threading.Event()
        self.idle.set()
        self._worker: ParseWorker | None = None  # used by the ingest thread only
        #: The vector store the worker is ingesting into now, and those being deleted.
        self.current: str | None = None
        self._cancelled: set[str] = set()

    # ----------------------------------------------------------------- cancelling
    def cancel(self, vs_id: str, timeout: float = 30.0) -> bool:
        """Stop ingesting into ``vs_id`` (deleted) and wait until the worker has let
        go of it; False when it still had not after ``timeout`` seconds."""
        with self._lock:
            self._cancelled.add(vs_id)
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                with self._lock:
                    if self.current != vs_id:
                        return True
                time.sleep(0.02)
            return False
        finally:
            with self._lock:
                self._cancelled.discard(vs_id)

    def _check_cancelled(self, vs_id: str) -> None:
        with self._lock:
            cancelled = vs_id in self._cancelled
        if cancelled:
            raise CollectionDroppedError(f"vector store {vs_id} was deleted")

    # ----------------------------------------------------------------- submitting
    def ensure_started(self) -> None:
        """Start the worker, queueing files left ``in_progress`` by an earlier run."""
        with self._lock:
            if self._thread is not None:
                return
            if not self.db.shared:
                left = self.db.rows("SELECT vs_id, file_id FROM oai_vs_files "
                                    "WHERE status = 'in_progress' ORDER BY rowid")
                if left:
                    self._queue.put([(row["vs_id"], row["file_id"]) for row in left])
            else:
                threading.Thread(target=self._beat, name="ragloom-oai-lease",
                                 daemon=True).start()
            self._thread = threading.Thread(target=self._run, name="ragloom-oai-ingest",
                                            daemon=True)
            self._thread.start()

    def submit(self, items: list[tuple[str, str]]) -> None:
        self.ensure_started()
        self.idle.clear()
        if items:
            self._queue.put(list(items))

    # ------------------------------------------------------------------- working
    def _next_items(self) -> list[tuple[str, str]]:
        if not self.db.shared:
            items = self._queue.get()
            while len(items) < self.batch:
                try:
                    items.extend(self._queue.get_nowait())
                except queue.Empty:
                    break
            return items
        while True:  # shared: queued items only wake the worker; the table says what waits
            try:
                claimed = self._claim()
            except Exception:
                log.exception("cannot claim files to ingest")
                claimed = []
            if claimed:
                return claimed
            if self._queue.empty():
                self.idle.set()
            with contextlib.suppress(queue.Empty):
                self._queue.get(timeout=1.0)
            while not self._queue.empty():
                self._queue.get_nowait()

    def _claim(self) -> list[tuple[str, str]]:
        """Take waiting files whose lease is free or expired (one write transaction)."""
        stamp = time.time()
        with self.db.write() as conn:
            rows = conn.execute(
                "SELECT vs_id, file_id FROM oai_vs_files WHERE status = 'in_progress' AND "
                "(lease_until IS NULL OR lease_until < ?) ORDER BY rowid LIMIT ?",
                (stamp, min(self.batch, CLAIM))).fetchall()
            conn.executemany(
                "UPDATE oai_vs_files SET lease_owner = ?, lease_until = ? "
                "WHERE vs_id = ? AND file_id = ?",
                [(self.owner, stamp + self.lease_seconds, r[0], r[1]) for r in rows])
        return [(r[0], r[1]) for r in rows]

    def _beat(self) -> None:
        while True:
            time.sleep(max(0.2, self.lease_seconds / 3))
            try:
                self.db.execute("UPDATE oai_vs_files SET lease_until = ? WHERE lease_owner = ?"
                                " AND status = 'in_progress'",
                                (time.time() + self.lease_seconds, self.owner))
            except Exception:  # a missed beat only shortens the lease
                log.exception("cannot renew the ingestion leases")

    def _run(self) -> None:
        while True:
            items = self._next_items()
            try:
                self._process(items)
            except CollectionDroppedError:
                log.info("a vector store was deleted while its files were ingested")
            except Exception:  # the worker must outlive any one batch
                log.exception("attaching files to vector stores failed")
                for vs_id, file_id in items:
                    self._finish(vs_id, file_id, "server_error", "ingestion failed")
            if self._queue.empty():
                self.idle.set()

    def _pending(self, vs_id: str, file_id: str) -> Any:
        return self.db.row(
            "SELECT l.attributes, l.chunking, l.run, f.filename FROM oai_vs_files l "
            "JOIN oai_files f ON f.id = l.file_id "
            "WHERE l.vs_id = ? AND l.file_id = ? AND l.status = 'in_progress'",
            (vs_id, file_id))

    def _process(self, items: list[tuple[str, str]]) -> None:
        groups: dict[tuple[str, str], list[tuple[str, Any]]] = defaultdict(list)
        for vs_id, file_id in dict.fromkeys(items):
            row = self._pending(vs_id, file_id)
            if row is None:
                missing = self.db.row("SELECT 1 FROM oai_vs_files WHERE vs_id = ? AND "
                                      "file_id = ? AND status = 'in_progress'",
                                      (vs_id, file_id))
                if missing is not None:  # linked, but the file itself was deleted
                    self._finish(vs_id, file_id, "invalid_file", "the file was deleted")
                continue
            groups[(vs_id, row["chunking"])].append((file_id, row))
        for (vs_id, chunking), files in groups.items():
            with self._lock:
                self.current = vs_id
            try:
                self._ingest(vs_id, json.loads(chunking), files)
            finally:
                with self._lock:
                    self.current = None

    def _load(self, vs_id: str, file_id: str, row: Any) -> tuple[list[TextDocument], int] | None:
        """A file's documents and size (on the pipeline's reader thread), or None once
        its failure is recorded."""
        data = file_bytes(self.db, file_id)
        if self._worker is None:
            self._worker = ParseWorker(ParseOptions())
        documents, reason = documents_of(file_id, row["filename"], data,
                                         json.loads(row["attributes"]), self._worker)
        if not documents:
            self._finish(vs_id, file_id, error_code(reason), reason)
            return None
        return documents, len(data)

    def _ingest(self, vs_id: str, chunking: dict[str, Any],
                files: list[tuple[str, Any]]) -> None:
        """The files of one vector store as one stream (see :mod:`.attach`)."""
        kb = self.collections.knowledge_base(
            vs_id, chunker_for(chunking, self.collections.embedder))
        runs = {file_id: int(row["run"]) for file_id, row in files}
        stream = AttachStream(
            files, load=lambda file_id, row: self._load(vs_id, file_id, row),
            finish=lambda file_id, *args, **kwargs: self._finish(
                vs_id, file_id, *args, run=runs.get(file_id), **kwargs))

        def progress(event: Any) -> None:
            self._check_cancelled(vs_id)
            stream.progress(event)

        try:
            self._check_cancelled(vs_id)
            kb.pipeline(batch_size=EMBED_BATCH).run(
                stream.documents(), progress=progress, read_ahead=True)
            self.collections.changed(vs_id)
        except CollectionDroppedError:
            # The vector store was deleted meanwhile: its rows went with it.
            log.info("stopped ingesting into %s: the vector store was deleted", vs_id)
            return
        except Exception as exc:
            self.collections.changed(vs_id)
            left = stream.unfinished()
            if len(files) > 1:  # find the file at fault; the others still go in
                for one in left:
                    self._ingest(vs_id, chunking, [one])
                return
            log.exception("ingesting %s failed", files[0][0])
            for file_id, _row in left:
                self._finish(vs_id, file_id, "server_error", safe_message(exc))

    def _finish(self, vs_id: str, file_id: str, code: str | None, message: str, *,
                usage: int = 0, run: int | None = None) -> None:
        """Record how a file ended; with ``run``, only if no later attach (an
        attributes update while in progress) queued it again meanwhile."""
        # Its chunks are committed: cached searches of the store end before it is done.
        self.collections.changed(vs_id)
        error = None if code is None else dumps({"code": code, "message": message})
        status = "completed" if code is None else "failed"
        same_run = "" if run is None else " AND run = ?"
        with self.db.write() as conn:
            changed = conn.execute(
                "UPDATE oai_vs_files SET status = ?, last_error = ?, usage_bytes = ? "
                f"WHERE vs_id = ? AND file_id = ? AND status = 'in_progress'{same_run}",
                (status, error, usage, vs_id, file_id,
                 *(() if run is None else (run,)))).rowcount
            if self.db.shared:  # attached again later, the file is free to claim at once
                conn.execute("UPDATE oai_vs_files SET lease_owner = NULL, lease_until = NULL "
                             "WHERE vs_id = ? AND file_id = ?", (vs_id, file_id))
        if not changed and code is None:
            # Cancelled, detached or attached again (a later run, new attributes) meanwhile:
            # this run's chunks must not stay searchable; a later run stores its own
            # (an unchanged document would otherwise be kept with the old attributes).
            linked = self.db.row("SELECT 1 FROM oai_vs_files WHERE vs_id = ? AND file_id = ?"
                                 " AND status = 'completed'", (vs_id, file_id))
            alive = self.db.row("SELECT 1 FROM oai_vector_stores WHERE id = ?", (vs_id,))
            if linked is None and alive is not None:  # a deleted store took its chunks
                self.collections.delete_file(vs_id, file_id)


def safe_message(exc: BaseException) -> str:
    """What a client may read about a failure: a library error's message when the
    one error table shows it, else only the kind of failure (no paths, no SQL)."""
    from ragloom.errors import RagError
    from ragloom.server.v1.errors import translate

    if isinstance(exc, RagError):
        return translate(exc).message
    return f"ingestion failed ({type(exc).__name__}); see the server log"

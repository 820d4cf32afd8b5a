"""Attaching files to vector stores: jobs of the server's one job system.

A POST answers at once with ``in_progress``: the file's link row says so (what the
OpenAI API shows), and a job of kind ``vs_file`` for it joins the one job table
(:mod:`ragloom.server.jobs`). The one supervised worker runs them, tenants taking
turns, with :class:`VectorStoreIngestor` as their handler: the files of one vector
store (up to ``group_size`` at a time) go in as one stream (:mod:`.attach`), parsed
on a reader thread (each file within the parser's wall-clock deadline) while the
chunks of the files before them are embedded, in batches that span files. Each file
moves to ``completed`` as soon as its documents are stored, or to ``failed`` with
``last_error`` (``unsupported_file``, ``invalid_file``, ``server_error``); an
unexpected failure fails the files of that group with its reason, and the worker
goes on.

Restart safety: the job and the link stay ``in_progress`` until the file is stored;
a server killed at any moment runs the job again at its next start (or, on
PostgreSQL, another replica takes it once its lease expires), and ingestion replaces
a file's documents by source (the file id), so doing one again never duplicates it.
Links ``in_progress`` without a job (from before the one job system, or migrated)
are queued when the routes start (:meth:`VectorStoreIngestor.ensure_started`).
"""

from __future__ import annotations

import json
import logging
import mimetypes
import os
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ragloom.errors import CollectionDroppedError
from ragloom.ingestion.worker import ParseOptions, ParseWorker
from ragloom.loaders.base import LoadResult
from ragloom.loaders.detect import detect_format
from ragloom.loaders.files import default_parser, parse_to_results
from ragloom.server.jobs import VS_FILE, Job, JobControl, JobQueue, JobWorker, Outcome
from ragloom.server.v1.attach import EMBED_BATCH, AttachStream
from ragloom.server.v1.chunking import chunker_for
from ragloom.server.v1.collections import VectorStoreCollections
from ragloom.server.v1.db import MetaDB, dumps
from ragloom.server.v1.files import file_bytes
from ragloom.types import TextDocument

log = logging.getLogger("ragloom.server.openai.ingest")

#: Files of one vector store that go in as one stream (one job group): enough that
#: the embedder stays busy between files, few enough that another tenant's files
#: wait one group at most (and replicas share a large batch).
GROUP_SIZE = 1024


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
    """The handler of the ``vs_file`` jobs. With ``worker`` None it runs the one job
    system of a ``/v1`` router mounted alone (its own worker on ``db``'s database)."""

    kinds: tuple[str, ...] = (VS_FILE,)

    def __init__(self, db: MetaDB, collections: VectorStoreCollections, *,
                 queue: JobQueue | None = None, worker: JobWorker | None = None,
                 group_size: int = GROUP_SIZE, lease_seconds: float = 30.0) -> None:
        self.db = db
        self.collections = collections
        self.group_size = group_size
        self._owns_worker = worker is None
        if queue is None:
            queue = worker.queue if worker is not None else JobQueue(
                db.database, Path(tempfile.gettempdir()) / "ragloom-v1-jobs",
                lease_seconds=lease_seconds)
        self.queue = queue
        self.worker = worker if worker is not None else JobWorker(queue, None)
        self.worker.register(self)
        self._lock = threading.Lock()
        self._started = False
        self._worker: ParseWorker | None = None  # used by the job worker's thread only
        self._control: JobControl | None = None

    # ----------------------------------------------------------------- cancelling
    def _check_cancelled(self, vs_id: str) -> None:
        if self._control is not None:
            self._control.check_cancelled(vs_id)

    # ----------------------------------------------------------------- submitting
    def ensure_started(self) -> None:
        """Start the worker (when this router owns it) and queue a job for each link
        left ``in_progress`` without one (migrated, or from an older server)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        self.resume()
        if self._owns_worker:
            self.worker.start()

    def stop(self) -> None:
        if self._owns_worker and self.worker.alive():
            self.worker.stop(timeout=10.0)

    def resume(self) -> int:
        """Queue jobs for the links ``in_progress`` that have none; returns how many."""
        queued = {(job.kb_id, str(job.payload.get("file_id")))
                  for job in self.queue.pending_jobs(VS_FILE)}
        left = [(r["tenant"], r["vs_id"], r["file_id"]) for r in self.db.rows(
            "SELECT tenant, vs_id, file_id FROM oai_vs_files WHERE status = 'in_progress' "
            "ORDER BY created_at, rowid")]
        missing = [item for item in left if (item[1], item[2]) not in queued]
        for tenant, vs_id, file_id in missing:
            self.submit(tenant, [(vs_id, file_id)])
        return len(missing)

    def submit(self, tenant: str, items: list[tuple[str, str]],
               batch_id: str | None = None) -> None:
        """One ``vs_file`` job per (vector store, file) linked ``in_progress``."""
        by_store: dict[str, list[str]] = defaultdict(list)
        for vs_id, file_id in dict.fromkeys(items):
            by_store[vs_id].append(file_id)
        for vs_id, file_ids in by_store.items():
            self.queue.submit_work(tenant, vs_id, VS_FILE,
                                   [{"file_id": f, "source": f} for f in file_ids],
                                   batch_id=batch_id)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no ``vs_file`` job is pending (tests; a drain); False on timeout."""
        deadline = time.monotonic() + timeout
        while self.queue.pending_of(VS_FILE):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    # ------------------------------------------------------------------- working
    def run(self, jobs: Sequence[Job], control: JobControl) -> list[Outcome]:
        """Ingest a group of ``vs_file`` jobs (one vector store) and say how each ended:
        as its file's link did."""
        self._control = control
        try:
            self._process([(job.kb_id, str(job.payload.get("file_id"))) for job in jobs])
        except CollectionDroppedError:
            log.info("a vector store was deleted while its files were ingested")
        finally:
            self._control = None
        return self._outcomes(jobs, control)

    def failed(self, jobs: Sequence[Job], message: str) -> None:
        for job in jobs:
            self._finish(job.kb_id, str(job.payload.get("file_id")), "server_error", message)

    def _outcomes(self, jobs: Sequence[Job], control: JobControl) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for job in jobs:
            row = self.db.row("SELECT status, last_error, usage_bytes FROM oai_vs_files "
                              "WHERE vs_id = ? AND file_id = ?",
                              (job.kb_id, job.payload.get("file_id")))
            if row is None:
                outcomes.append((job, "cancelled", "cancelled",
                                 "the file or its vector store was deleted", {}))
            elif row["status"] == "in_progress":
                if control.stopping:  # stopped mid-stream: run again at the next start
                    continue
                # Attached again meanwhile (new attributes): a later job runs it.
                outcomes.append((job, "completed", None, None, {}))
            elif row["status"] == "failed":
                error = json.loads(row["last_error"] or "{}")
                outcomes.append((job, "failed", error.get("code"), error.get("message"), {}))
            elif row["status"] == "cancelled":
                outcomes.append((job, "cancelled", "cancelled", "cancelled", {}))
            else:
                outcomes.append((job, "completed", None, None,
                                 {"usage_bytes": int(row["usage_bytes"] or 0)}))
        return outcomes

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
            self._ingest(vs_id, json.loads(chunking), files)

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
                self._until_stopped(stream.documents()), progress=progress, read_ahead=True)
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

    def _until_stopped(self, documents: Iterator[TextDocument]) -> Iterator[TextDocument]:
        for document in documents:
            if self._control is not None and self._control.stopping:
                return  # the files not finished stay in_progress: run at the next start
            yield document

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

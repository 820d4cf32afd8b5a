"""The job worker: one supervised background thread that runs the jobs of the one
job table (see :mod:`ragloom.server.jobs.queue`)."""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ragloom.errors import CollectionDroppedError, RagError
from ragloom.ingestion.report import IngestEvent
from ragloom.server.catalog import Catalog
from ragloom.server.jobs.model import (
    NATIVE_KINDS,
    Job,
    JobHandler,
    Outcome,
    failure_reason,
    unexpected_reason,
)
from ragloom.server.jobs.model import safe_name as _safe_name
from ragloom.server.jobs.queue import JobQueue
from ragloom.types import TextDocument

log = logging.getLogger("ragloom.server.jobs")


class JobWorker:
    """The background thread that runs jobs; :meth:`start` / :meth:`stop`."""

    def __init__(self, queue: JobQueue, catalog: Catalog | None, *, batch_files: int = 64,
                 isolate_parsing: bool = True,
                 on_finish: Callable[[str], None] | None = None,
                 on_write: Callable[[Any], None] | None = None) -> None:
        self.queue = queue
        self.catalog = catalog
        self.batch_files = batch_files
        self.isolate_parsing = isolate_parsing
        self.on_finish = on_finish
        #: Called with a knowledge base's store after documents are written to it, before
        #: the jobs are reported done (the server's caches move its generation on).
        self.on_write = on_write
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._parser: Any = None
        self.busy = False
        #: The knowledge base whose jobs run now, and those being deleted.
        self.current_kb: str | None = None
        self._cancelled: set[str] = set()
        self._cancel_lock = threading.Lock()
        #: Handlers of the other kinds of jobs, by kind (see :meth:`register`).
        self.handlers: dict[str, JobHandler] = {}

    def register(self, handler: JobHandler) -> None:
        """Run the jobs of ``handler.kinds`` with ``handler`` (this worker claims only
        kinds it can run)."""
        for kind in handler.kinds:
            self.handlers[kind] = handler
        self.queue.wakeup.set()

    def kinds(self) -> list[str]:
        native = list(NATIVE_KINDS) if self.catalog is not None else []
        return native + sorted(self.handlers)

    def start(self) -> None:
        if not self.queue.files_in_database:  # the only server on this database
            self.queue.release_all_leases()
            try:
                self.queue.sweep_uploads()
            except OSError:  # the next start tries again
                log.exception("cannot remove the uploads no job owns")
        try:
            self.queue.retry_deletes()
        except Exception:  # the next start tries again
            log.exception("cannot queue the failed deletes again")
        self._thread = threading.Thread(target=self._run, name="ragloom-jobs", daemon=True)
        self._thread.start()
        self._heartbeat = threading.Thread(target=self._beat, name="ragloom-jobs-lease",
                                           daemon=True)
        self._heartbeat.start()

    def stop(self, timeout: float = 60.0) -> None:
        """Stop cleanly: the group under way stops between two documents (each one is
        stored whole, in its own transaction), its jobs are given back still pending
        (the next start runs them, documents already stored come back ``unchanged``),
        and no job is failed by the shutdown."""
        self._stop.set()
        self.queue.wakeup.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("the ingestion worker did not stop within %g s", timeout)
        if self._parser is not None:
            self._parser.close()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _beat(self) -> None:
        interval = max(0.2, self.queue.lease_seconds / 3)
        while not self._stop.wait(interval):
            try:
                self.queue.renew_leases()
            except Exception:  # a missed beat only shortens the lease
                log.exception("cannot renew the job leases")

    def interrupt(self, kb_id: str) -> None:
        """For a collection being deleted (its record gone, its jobs cancelled and its
        delete job queued): a group of it under way stops at its next look
        (:meth:`check_cancelled`); its delete job runs next and :meth:`forget` s it."""
        with self._cancel_lock:
            self._cancelled.add(kb_id)
        self.queue.wakeup.set()

    def forget(self, kb_id: str) -> None:
        """The delete of ``kb_id`` is done (nothing of it runs any more)."""
        with self._cancel_lock:
            self._cancelled.discard(kb_id)

    def check_cancelled(self, kb_id: str) -> None:
        self._check_cancelled(kb_id)

    def _check_cancelled(self, kb_id: str) -> None:
        with self._cancel_lock:
            cancelled = kb_id in self._cancelled
        if cancelled:
            raise CollectionDroppedError(f"knowledge base {kb_id} was deleted")

    def alive(self) -> bool:
        """Whether the worker thread runs (``/ready`` answers 503 once it does not)."""
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        # Supervised: no exception ends this loop. A group that fails unexpectedly
        # fails its jobs with the reason; a database that stays locked is retried.
        while not self._stop.is_set():
            try:
                self._step()
            except Exception:
                log.exception("the ingestion worker failed; it goes on")
                self._stop.wait(1.0)

    def _step(self) -> None:
        try:
            jobs = self.queue.next_group(
                self.batch_files, kinds=self.kinds(),
                limits={kind: h.group_size for kind, h in self.handlers.items()})
        except Exception:
            log.exception("cannot read the job table")
            jobs = []
        if not jobs:
            self.queue.wakeup.wait(1.0)
            self.queue.wakeup.clear()
            return
        self.busy = True
        try:
            self.run_group(jobs)
        except Exception as exc:  # the worker must survive any one group
            if self._stop.is_set():  # the shutdown cut the group: run again on restart
                log.info("ingestion stopped by the shutdown; %d jobs stay pending", len(jobs))
                self._give_back(jobs)
                return
            log.exception("ingestion jobs failed")
            self._fail(jobs, unexpected_reason(exc))
        finally:
            self.busy = False

    def _give_back(self, jobs: Sequence[Job]) -> None:
        try:
            self.queue.release(jobs)
        except Exception:  # the leases are released on the next start anyway
            log.warning("cannot release the jobs at shutdown", exc_info=True)

    def _until_stopped(self, documents: Sequence[TextDocument]) -> Iterator[TextDocument]:
        for document in documents:
            if self._stop.is_set():
                return
            yield document

    def _fail(self, jobs: Sequence[Job], message: str) -> None:
        """Fail ``jobs`` with ``message``; a database still locked gets a few tries."""
        for attempt in range(5):
            try:
                self.queue.finish([(j, "failed", "server_error", message, {}) for j in jobs])
            except Exception:
                log.exception("cannot record failed jobs (try %d)", attempt + 1)
                if self._stop.wait(min(5.0, 0.5 * 2 ** attempt)):
                    return
            else:
                handler = self.handlers.get(jobs[0].kind) if jobs else None
                if handler is not None:
                    try:
                        handler.failed(jobs, message)
                    except Exception:
                        log.exception("cannot record the failure of %d jobs", len(jobs))
                if self.on_finish is not None:
                    for _job in jobs:
                        self.on_finish("failed")
                return

    def _load_file(self, job: Job) -> tuple[list[TextDocument], str | None]:
        if not job.payload.get("stored"):
            return self._load_path(job, str(job.payload.get("path") or ""))
        data = self.queue.stored_bytes(job)
        if data is None:
            return [], "the uploaded file is missing on the server"
        # Parsers read files: the bytes from the database go to a private folder first.
        with tempfile.TemporaryDirectory(prefix="ragloom-job-") as folder:
            path = os.path.join(folder, _safe_name(str(job.payload.get("file_name") or
                                                       job.source)))
            with open(path, "wb") as handle:
                handle.write(data)
            return self._load_path(job, path)

    def _load_path(self, job: Job, path: str) -> tuple[list[TextDocument], str | None]:
        from ragloom.ingestion.worker import ParseOptions, ParseWorker
        from ragloom.loaders.base import sha256_hex

        if not path or not os.path.isfile(path):
            return [], "the uploaded file is missing on the server"
        if self._parser is None:
            self._parser = ParseWorker(ParseOptions(isolate=self.isolate_parsing))
        results = self._parser.load(path)
        with open(path, "rb") as handle:
            data = handle.read()
        base = {"file_name": job.payload.get("file_name") or os.path.basename(path),
                "size": len(data), "content_hash": sha256_hex(data)}
        if job.payload.get("mime_type"):
            base["mime_type"] = job.payload["mime_type"]
        return self._rebuild(job, results, base)

    def _rebuild(self, job: Job, results: Sequence[Any], base: dict[str, Any]
                 ) -> tuple[list[TextDocument], str | None]:
        """Documents named by the job's source (parts keep their ``#part`` suffix)."""
        documents = []
        reasons = []
        for result in results:
            if result.document is None:
                reasons.append(str(result.reason or "no text found"))
                continue
            document = result.document
            part = document.source.partition("#")[2] if "parent_source" in document.metadata \
                else ""
            source = f"{job.source}#{part}" if part else job.source
            metadata = {**dict(job.payload.get("metadata") or {}),
                        **{k: v for k, v in document.metadata.items()
                           if k not in ("source", "parent_source", "created", "modified")},
                        **base}
            if part:
                metadata["parent_source"] = job.source
            documents.append(TextDocument.create(document.text, source=source,
                                                 metadata=metadata))
        if not documents:
            return [], "; ".join(reasons) or "no text found"
        return documents, None

    def _documents(self, job: Job) -> tuple[list[TextDocument], str | None]:
        if job.kind == "file":
            return self._load_file(job)
        if job.kind == "text":
            text = str(job.payload.get("text") or "")
            if not text.strip():
                return [], "no text (empty document)"
            metadata = {**dict(job.payload.get("metadata") or {}), "mime_type": "text/plain"}
            return [TextDocument.create(text, source=job.source, metadata=metadata)], None
        return self._load_fetched(job)

    def _load_fetched(self, job: Job) -> tuple[list[TextDocument], str | None]:
        """A URL job's documents, parsed from the bytes the fetch pool kept."""
        from ragloom.loaders.url import FetchedResource, load_fetched

        url = str(job.payload.get("url"))
        if job.payload.get("stored"):
            data = self.queue.stored_bytes(job)
        else:
            path = str(job.payload.get("path") or "")
            data = Path(path).read_bytes() if path and os.path.isfile(path) else None
        if data is None:
            return [], "the fetched page is missing on the server"
        details = dict(job.payload.get("fetch") or {})
        fetched = FetchedResource(url=url, final_url=str(details.get("final_url") or url),
                                  data=data, content_type=details.get("content_type"),
                                  last_modified=details.get("last_modified"))
        return self._rebuild(job, load_fetched(fetched), {"url": url})

    def run_group(self, jobs: Sequence[Job]) -> None:
        """Ingest a group of jobs of one knowledge base and record how each ended; a
        knowledge base deleted meanwhile stops it (its jobs failed with the reason,
        unless the delete cancelled them already)."""
        self.current_kb = jobs[0].kb_id
        try:
            handler = self.handlers.get(jobs[0].kind)
            if handler is not None:
                self._run_handled(handler, jobs)
            else:
                self._run_group(jobs)
        except CollectionDroppedError as exc:
            self.queue.finish([(j, "failed", "collection_deleted", str(exc), {})
                               for j in jobs])
        finally:
            self.current_kb = None

    def _run_handled(self, handler: JobHandler, jobs: Sequence[Job]) -> None:
        outcomes = list(handler.run(jobs, self))
        if self._stop.is_set() and not outcomes:
            self._give_back(jobs)
            return
        self.queue.finish(outcomes)
        done = {job.id for job, *_ in outcomes}
        left = [job for job in jobs if job.id not in done]
        if left:
            self._give_back(left)
        if self.on_finish is not None:
            for _job, status, *_ in outcomes:
                self.on_finish(status)

    def _run_group(self, jobs: Sequence[Job]) -> None:
        if self.catalog is None:
            self.queue.finish([(j, "failed", "server_error", "this server has no knowledge "
                                "bases", {}) for j in jobs])
            return
        record = self.catalog.by_id(jobs[0].kb_id)
        if record is None:
            self.queue.finish([(j, "cancelled", None, "the knowledge base was deleted", {})
                               for j in jobs])
            return
        knowledge_base = self.catalog.open(record)
        outcomes: list[Outcome] = []
        by_source: dict[str, Job] = {}
        deferred: list[Job] = []
        documents: list[TextDocument] = []
        for job in jobs:
            try:
                docs, problem = self._documents(job)
            except RagError as exc:
                docs, problem = [], str(exc)
            if problem is not None:
                outcomes.append((job, "failed", failure_reason(problem), problem, {}))
                continue
            if any(document.source in by_source for document in docs):
                # The same source twice in one group (sent twice, to one replica or two):
                # the later job runs in the next group, so each reports its own outcome.
                deferred.append(job)
                continue
            for document in docs:
                by_source[document.source] = job
            documents.extend(docs)
        results: dict[str, dict[str, Any]] = {job.id: {"documents": [], "chunks": 0}
                                              for job in jobs}
        ids = {d.source: d.id for d in documents}

        def progress(event: IngestEvent) -> None:
            self._check_cancelled(record.id)
            job = by_source.get(event.source)
            if job is None or event.outcome == "skipped":
                return
            entry = results[job.id]
            entry["documents"].append({"id": ids.get(event.source), "source": event.source,
                                       "outcome": event.outcome, "chunks": event.chunks})
            entry["chunks"] += event.chunks
            if self.on_write is not None:
                self.on_write(knowledge_base.store)

        self._check_cancelled(record.id)
        if documents:
            # Split on a reader thread and store while the next batch embeds.
            try:
                knowledge_base.pipeline(batch_size=256).run(
                    self._until_stopped(documents), progress=progress, read_ahead=True)
            finally:
                if self.on_write is not None:
                    self.on_write(knowledge_base.store)
        if self._stop.is_set():
            # Stopped mid-group: nothing is recorded, every job stays pending.
            self._give_back(jobs)
            return
        failed = {job.id for job, *_ in outcomes}
        for job in jobs:
            if job.id in failed or job in deferred:
                continue
            if not results[job.id]["documents"]:
                outcomes.append((job, "failed", "invalid_file", "no text to index", {}))
            else:
                outcomes.append((job, "completed", None, None, results[job.id]))
        self.queue.finish(outcomes)
        if deferred:
            self.queue.release(deferred)
        if self.on_finish is not None:
            for _job, status, *_ in outcomes:
                self.on_finish(status)

"""The URL fetch pool: URL jobs are fetched here, off the ingestion worker.

The ingestion worker is the only writer of knowledge base content; a URL it fetched
itself would hold every tenant's uploads for as long as the remote server takes. So
a small pool of threads (``threads``) claims URL jobs (tenants take turns, see
:meth:`JobQueue.next_fetch`), fetches each within a hard wall-clock deadline
(``timeout``, see :func:`ragloom.loaders.url.fetch_url`), keeps the bytes as an
upload's (:meth:`JobQueue.fetched`) and hands the job back to the worker, which
parses and stores it. A fetch that fails or runs out of time fails its job with the
reason ``fetch_failed`` and the loader's message.

Restart safety: a job stays ``in_progress`` while it is fetched; a server stopped or
killed mid-fetch leaves it unfetched, and the next start fetches it again.
"""

from __future__ import annotations

import logging
import threading

from ragloom.errors import ParseError
from ragloom.server.jobs import Job, JobQueue

log = logging.getLogger("ragloom.server.fetching")

FETCH_FAILED = "fetch_failed"


class UrlFetcher:
    """``threads`` fetching threads; :meth:`start` / :meth:`stop`."""

    def __init__(self, queue: JobQueue, *, threads: int = 2, timeout: float = 30.0,
                 allow_private: bool = False, max_bytes: int | None = None) -> None:
        self.queue = queue
        self.threads = threads
        self.timeout = timeout
        self.allow_private = allow_private
        self.max_bytes = max_bytes
        self.wakeup = threading.Event()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for number in range(self.threads):
            thread = threading.Thread(target=self._run, name=f"ragloom-fetch-{number}",
                                      daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop claiming; a fetch under way ends at its deadline at the latest, and its
        job stays pending (fetched again on the next start)."""
        self._stop.set()
        self.wakeup.set()
        for thread in self._threads:
            thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                job = self.queue.next_fetch()
            except Exception:
                log.exception("cannot read the job table")
                job = None
            if job is None:
                self.wakeup.wait(0.5)
                self.wakeup.clear()
                continue
            try:
                self.fetch(job)
            except Exception:
                log.exception("fetching %s failed", job.id)
                if not self._stop.is_set():
                    self._fail(job, "the server failed while fetching; see its log")

    def fetch(self, job: Job) -> None:
        """Fetch one URL job and hand it on, or fail it with the reason."""
        from ragloom.loaders.url import DEFAULT_MAX_BYTES, fetch_url

        url = str(job.payload.get("url"))
        try:
            fetched = fetch_url(url, allow_private=self.allow_private, timeout=self.timeout,
                                max_bytes=self.max_bytes or DEFAULT_MAX_BYTES)
        except ParseError as exc:
            if self._stop.is_set():  # cut short by the shutdown: fetched again on restart
                self.queue.release([job])
                return
            self._fail(job, exc.reason)
            return
        if not fetched.data:
            self._fail(job, "empty response")
            return
        self.queue.fetched(job, fetched.data, {
            "final_url": fetched.final_url, "content_type": fetched.content_type,
            "last_modified": fetched.last_modified})

    def _fail(self, job: Job, message: str) -> None:
        self.queue.finish([(job, "failed", FETCH_FAILED, f"{job.source}: {message}", {})])

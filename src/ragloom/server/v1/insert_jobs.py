"""Llama Stack's inserts (``/v1/vector-io/insert`` chunks, ``/v1/tool-runtime/rag-tool/
insert`` documents) as jobs of the server's one job system.

The request checks what it was sent, records one ``rag_insert`` job (the chunks or
documents in its payload) and waits for it: Llama Stack's insert answers once the
content is searchable. The one worker runs it, tenants taking turns with every other
job, in batches with a hard wall-clock deadline (``deadline`` seconds from the start
of the run, checked between batches and between the small sub-batches each batch is
embedded in, see :mod:`ragloom.server.jobs.deadline`): an insert that outlives it
fails with ``deadline_exceeded`` within about a quarter of a second, and the request
answers 504. A batch never splits a document's chunks and is stored in one
transaction once all of it is embedded, so a cut leaves each document whole or
absent. Chunks and documents keep their ids, so an insert run again (a kill, a retry)
stores nothing twice. An unexpected failure fails that insert with its reason; the
worker goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import anyio

from ragloom.errors import CollectionDroppedError, RagError
from ragloom.ingestion.report import IngestEvent
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import TokenCounter
from ragloom.server.jobs import RAG_INSERT, Job, JobControl, JobQueue, Outcome
from ragloom.server.jobs.deadline import CheckedEmbedder
from ragloom.server.v1.deps import OpenAIDeps
from ragloom.server.v1.errors import OpenAIError, translate
from ragloom.server.v1.knowledge import Knowledge
from ragloom.types import TextChunk, TextDocument

log = logging.getLogger("ragloom.server.openai.insert")

DEADLINE_EXCEEDED = "deadline_exceeded"
#: Chunks embedded and stored together (one transaction; a document's chunks are never
#: split across two).
BATCH = 256


class DeadlineExceeded(Exception):
    pass


def chunk_payload(chunk: TextChunk) -> dict[str, Any]:
    return {"id": chunk.id, "document_id": chunk.document_id, "index": chunk.index,
            "start": chunk.start, "end": chunk.end, "text": chunk.text,
            "metadata": dict(chunk.metadata)}


def document_payload(document: TextDocument) -> dict[str, Any]:
    return {"text": document.text, "source": document.source,
            "metadata": dict(document.metadata)}


class InsertJobs:
    """The requests' way to run an insert job, and how the worker runs one (through
    :class:`InsertHandler`)."""

    def __init__(self, deps: OpenAIDeps, knowledge: Knowledge, queue: JobQueue, *,
                 deadline: float = 300.0) -> None:
        self.deps = deps
        self.knowledge = knowledge
        self.queue = queue
        self.deadline = deadline

    # ----------------------------------------------------------------- requests
    async def run(self, tenant: str, target: str, param: str, *,
                  chunks: Sequence[TextChunk] = (), documents: Sequence[TextDocument] = (),
                  chunk_size: int | None = None) -> None:
        """Record an insert job and wait until it ended (raising what it failed with)."""
        payload: dict[str, Any] = {
            "source": target, "target": target, "param": param, "chunk_size": chunk_size,
            "deadline": self.deadline,
            "chunks": [chunk_payload(c) for c in chunks],
            "documents": [document_payload(d) for d in documents]}
        (job,) = await self.deps.cpu(self.queue.submit_work, tenant, target, RAG_INSERT,
                                     [payload])
        # The worker may wait for other tenants' groups first: wait for the queue too.
        give_up = time.monotonic() + 2 * self.deadline + 60
        while True:
            found = await self.deps.cpu(self.queue.by_id, job.id)
            if found is None or found.status == "cancelled":
                raise OpenAIError(409, "the vector db was deleted during the insert",
                                  code="cancelled")
            if found.status == "completed":
                return
            if found.status == "failed":
                raise self._error(found)
            if time.monotonic() > give_up:
                raise OpenAIError(504, "the insert is still waiting to run; it will "
                                  "complete later", type="server_error", code="timeout")
            await anyio.sleep(0.02)

    @staticmethod
    def _error(job: Job) -> OpenAIError:
        if job.reason == DEADLINE_EXCEEDED:
            return OpenAIError(504, job.message or "the insert ran out of time",
                               type="server_error", code=DEADLINE_EXCEEDED)
        error = job.result.get("error") or {}
        return OpenAIError(int(error.get("status", 500)), job.message or "the insert failed",
                           type=str(error.get("type", "server_error")),
                           param=error.get("param"), code=job.reason)

    # ------------------------------------------------------------------ handler
    def run_jobs(self, jobs: Sequence[Job], control: JobControl) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for job in jobs:
            try:
                self._insert(job, control)
            except CollectionDroppedError:
                raise  # the worker fails the group: its store was deleted
            except DeadlineExceeded:
                outcomes.append((job, "failed", DEADLINE_EXCEEDED,
                                 f"the insert ran longer than its deadline of "
                                 f"{job.payload.get('deadline')} s; send it again "
                                 "(what was stored is kept, nothing is stored twice)", {}))
            except Exception as exc:  # one insert's failure never stops the worker
                if not isinstance(exc, (RagError, OpenAIError)):
                    log.exception("the insert job %s failed", job.id)
                error = exc if isinstance(exc, OpenAIError) else translate(exc)
                outcomes.append((job, "failed", error.code or "server_error", error.message,
                                 {"error": {"status": error.status, "type": error.type,
                                            "param": error.param}}))
            else:
                outcomes.append((job, "completed", None, None, {}))
            # The content is stored (or refused): the row keeps what it was, not all of it.
            self.queue.replace_payload(job, {
                **{k: v for k, v in job.payload.items() if k not in ("chunks", "documents")},
                "chunk_count": len(job.payload.get("chunks") or []),
                "document_count": len(job.payload.get("documents") or [])})
        return outcomes

    def failed(self, jobs: Sequence[Job], message: str) -> None:
        """Nothing beyond the job row: the waiting request reads it."""

    def _insert(self, job: Job, control: JobControl) -> None:
        payload = job.payload
        started = time.monotonic()
        limit = float(payload.get("deadline") or self.deadline)

        def check() -> None:
            control.check_cancelled(job.kb_id)
            if time.monotonic() - started > limit:
                raise DeadlineExceeded

        kb = self.knowledge.resolve(job.tenant_id, str(payload["target"]), create=True,
                                    param=str(payload.get("param") or "vector_db_id"))
        # The deadline is looked at between small sub-batches of each embedding batch too.
        embedder = CheckedEmbedder(kb.embedder, check)
        try:
            chunks = [TextChunk(**item) for item in payload.get("chunks") or []]
            for group in document_groups(chunks, BATCH):
                check()
                # One embedding batch and one store transaction per group: a cut
                # leaves each document whole or absent.
                VectorKnowledgeBase(kb.store, embedder, name=kb.name,
                                    batch_size=len(group)).ingest(group)
            documents = [TextDocument.create(d["text"], source=d["source"],
                                             metadata=d["metadata"])
                         for d in payload.get("documents") or []]
            if documents:
                check()
                self._documents_kb(kb, embedder, payload.get("chunk_size")).ingest(
                    documents, progress=lambda event: _check_each(event, check))
        finally:
            self.knowledge.written(kb)

    @staticmethod
    def _documents_kb(kb: VectorKnowledgeBase, embedder: CheckedEmbedder, size: Any
                      ) -> VectorKnowledgeBase:
        from ragloom.chunking import RecursiveSplitter

        if not size:
            return VectorKnowledgeBase(kb.store, embedder, kb.chunker, name=kb.name)
        tokens = int(size)
        counter = kb.embedder if isinstance(kb.embedder, TokenCounter) else None
        chunker = (RecursiveSplitter(tokens, tokens // 4, token_counter=counter) if counter
                   else RecursiveSplitter(tokens * 4, tokens))
        return VectorKnowledgeBase(kb.store, embedder, chunker, name=kb.name)


def document_groups(chunks: Sequence[TextChunk], size: int) -> list[list[TextChunk]]:
    """``chunks`` in groups of about ``size`` that never split a document (a document
    larger than ``size`` is a group of its own), in the order documents first appear."""
    by_document: dict[str, list[TextChunk]] = {}
    for chunk in chunks:
        by_document.setdefault(chunk.document_id, []).append(chunk)
    groups: list[list[TextChunk]] = [[]]
    for members in by_document.values():
        if groups[-1] and len(groups[-1]) + len(members) > size:
            groups.append([])
        groups[-1].extend(members)
    return [group for group in groups if group]


def _check_each(event: IngestEvent, check: Any) -> None:
    check()


class InsertHandler:
    """:class:`InsertJobs` as the worker sees it (its ``run`` is the handler's)."""

    kinds: tuple[str, ...] = (RAG_INSERT,)
    group_size = 1

    def __init__(self, jobs: InsertJobs) -> None:
        self.jobs = jobs

    def run(self, jobs: Sequence[Job], control: JobControl) -> list[Outcome]:
        return self.jobs.run_jobs(jobs, control)

    def failed(self, jobs: Sequence[Job], message: str) -> None:
        self.jobs.failed(jobs, message)

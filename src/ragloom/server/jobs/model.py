"""Jobs as the server sees them: :class:`Job` (a row of the one job table),
:class:`JobRequest` (what a client asks to ingest) and the reasons a job fails with."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ragloom.errors import RagError

STATUSES = ("in_progress", "completed", "failed", "cancelled")
#: The kinds of an upload to a knowledge base (run together, by the worker itself);
#: other kinds are run by the handler registered for them (:class:`JobHandler`).
NATIVE_KINDS = ("file", "text", "url")
#: A file attached to a ``/v1`` vector store (:mod:`ragloom.server.v1.ingest`).
VS_FILE = "vs_file"
#: A Llama Stack insert of chunks or documents (:mod:`ragloom.server.v1.insert_jobs`).
RAG_INSERT = "rag_insert"
#: Deletes (:mod:`ragloom.server.jobs.deletes`, :mod:`ragloom.server.v1.delete_jobs`): the
#: request removes the record and queues the job in one transaction; the job cancels
#: and drains the collection's other jobs and removes what is left on disk. A native
#: knowledge base (its collection, sidecar files, uploads):
KB_DELETE = "kb_delete"
#: A ``/v1`` vector store (the same):
VS_DELETE = "vs_delete"
#: One file's chunks out of one vector store (detached, or the file deleted):
FILE_DELETE = "file_delete"
#: Claimed before any other job, whatever the tenants' turns (see ``JobQueue.next_group``).
DELETE_KINDS = (KB_DELETE, VS_DELETE, FILE_DELETE)
COLUMNS = ("id, tenant_id, kb_id, batch_id, kind, payload, status, reason, message, result, "
            "created, updated")
#: In a URL job's JSON payload once its bytes are fetched.
FETCHED_KEY = "_ragloom_fetched"
FETCHED_MARK = f'"{FETCHED_KEY}": true'
_UNSUPPORTED = re.compile(r"unsupported format|binary file of unknown type|ZIP archive of "
                          r"unknown type|is needed for", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class Job:
    """One ingestion: a file, a text or a URL into one knowledge base."""

    id: str
    tenant_id: str
    kb_id: str
    batch_id: str | None
    kind: str
    payload: dict[str, Any]
    status: str
    reason: str | None = None
    message: str | None = None
    result: dict[str, Any] = field(default_factory=dict)
    created: float = 0.0
    updated: float = 0.0

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Job:
        return cls(id=row[0], tenant_id=row[1], kb_id=row[2], batch_id=row[3], kind=row[4],
                   payload=json.loads(row[5]), status=row[6], reason=row[7], message=row[8],
                   result=json.loads(row[9]) if row[9] else {}, created=row[10],
                   updated=row[11])

    @property
    def source(self) -> str:
        return str(self.payload.get("source", ""))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "object": "ingestion_job", "knowledge_base_id": self.kb_id,
            "batch_id": self.batch_id, "kind": self.kind, "source": self.source,
            "status": self.status,
            "error": ({"reason": self.reason, "message": self.message or ""}
                      if self.status == "failed" else None),
            "documents": list(self.result.get("documents", [])),
            "chunks": int(self.result.get("chunks", 0)),
            "created_at": int(self.created), "updated_at": int(self.updated),
        }


@dataclass(frozen=True, kw_only=True)
class JobRequest:
    """What to ingest: ``kind`` file (``data`` bytes, or ``path`` to a file to keep),
    text (``text``) or url (``url``); ``source`` names the document."""

    kind: str
    source: str
    metadata: dict[str, Any] = field(default_factory=dict)
    data: bytes | None = None
    path: str | None = None
    file_name: str | None = None
    mime_type: str | None = None
    text: str | None = None
    url: str | None = None


def safe_name(name: str) -> str:
    base = os.path.basename(name.replace("\\", "/")) or "upload"
    cleaned = re.sub(r"[^\w.\- ]", "_", base).strip(" .") or "upload"
    return cleaned[:120]


def unexpected_reason(exc: BaseException) -> str:
    """What a job that failed unexpectedly tells its client: the kind of failure,
    never a path, SQL text or traceback (those go to the log)."""
    text = str(exc).lower()
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return ("the database stayed locked while ingesting (another process held it); "
                "send the file again")
    if isinstance(exc, OSError) or any(word in text for word in (
            "disk i/o error", "disk is full", "file too large", "input/output error",
            "no space left")):
        return ("the store could not write (its disk is full or failing); nothing of "
                "this file was stored, send it again")
    if isinstance(exc, RagError):
        return f"ingestion failed: {type(exc).__name__}; see the server log"
    return f"the server failed while ingesting ({type(exc).__name__}); see its log"


def failure_reason(message: str) -> str:
    return "unsupported_file" if _UNSUPPORTED.search(message) else "invalid_file"



#: How a job ended: (job, status, reason, message, result).
Outcome = tuple["Job", str, "str | None", "str | None", dict[str, Any]]


class JobControl(Protocol):
    """What a handler may ask of the worker that runs its jobs."""

    @property
    def stopping(self) -> bool: ...

    def check_cancelled(self, kb_id: str) -> None:
        """Raise ``CollectionDroppedError`` once ``kb_id`` is being deleted."""


class JobHandler(Protocol):
    """Runs the jobs of its ``kinds`` for the one worker (a vector store's files, chunks
    to insert). ``group_size``: jobs of one knowledge base run together at most."""

    kinds: tuple[str, ...]
    group_size: int

    def run(self, jobs: Sequence[Job], control: JobControl) -> Sequence[Outcome]:
        """Run a group (one knowledge base, one kind) and say how each job ended; a job
        left out stays pending (given back)."""

    def failed(self, jobs: Sequence[Job], message: str) -> None:
        """The group failed unexpectedly: record it where the handler's clients look."""

"""Ingestion as persisted jobs in one table, run by one supervised worker.

:mod:`.model` (the rows), :mod:`.queue` (submitting, claiming with leases, fair
turns between tenants), :mod:`.worker` (the thread). The names stay importable from
``ragloom.server.jobs``.
"""

from ragloom.server.jobs.model import (
    DELETE_KINDS,
    FETCHED_KEY,
    FETCHED_MARK,
    FILE_DELETE,
    KB_DELETE,
    NATIVE_KINDS,
    RAG_INSERT,
    STATUSES,
    VS_DELETE,
    VS_FILE,
    Job,
    JobControl,
    JobHandler,
    JobRequest,
    Outcome,
    failure_reason,
    unexpected_reason,
)
from ragloom.server.jobs.queue import JobQueue
from ragloom.server.jobs.worker import JobWorker

__all__ = [
    "DELETE_KINDS",
    "FETCHED_KEY",
    "FETCHED_MARK",
    "FILE_DELETE",
    "KB_DELETE",
    "NATIVE_KINDS",
    "RAG_INSERT",
    "STATUSES",
    "VS_DELETE",
    "VS_FILE",
    "Job",
    "JobControl",
    "JobHandler",
    "JobQueue",
    "JobRequest",
    "JobWorker",
    "Outcome",
    "failure_reason",
    "unexpected_reason",
]

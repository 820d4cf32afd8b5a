"""What the Llama Stack routes share: the ``/v1`` collaborators, where knowledge is
found and the tenant-scoped object table."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ragloom.server.v1.deps import OpenAIDeps
from ragloom.server.v1.knowledge import Knowledge
from ragloom.server.v1.llama_objects import LlamaObjects


@dataclass(frozen=True)
class LlamaContext:
    deps: OpenAIDeps
    knowledge: Knowledge
    objects: LlamaObjects
    #: Inserts as jobs of the one job system (an ``InsertJobs``).
    inserts: Any = None


def iso_now() -> str:
    """The time as Llama Stack's datetimes are sent: ISO 8601 in UTC."""
    return datetime.now(timezone.utc).isoformat()

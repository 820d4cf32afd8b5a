"""What the Llama Stack routes share: the ``/v1`` collaborators, where knowledge is
found, the tenant-scoped object table, and the caller's tenant as a dependency."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from fastapi import Depends

from ragloom.server.v1.common import tenant_id
from ragloom.server.v1.deps import OpenAIDeps
from ragloom.server.v1.knowledge import Knowledge
from ragloom.server.v1.llama_objects import LlamaObjects


@dataclass(frozen=True)
class LlamaContext:
    deps: OpenAIDeps
    knowledge: Knowledge
    objects: LlamaObjects

    def tenant(self) -> Any:
        """A FastAPI dependency giving the caller's tenant id."""
        tenant_dependency = self.deps.tenant

        async def owner(tenant: Any = Depends(tenant_dependency)) -> str:
            return tenant_id(tenant)

        return Depends(owner)


def iso_now() -> str:
    """The time as Llama Stack's datetimes are sent: ISO 8601 in UTC."""
    return datetime.now(timezone.utc).isoformat()

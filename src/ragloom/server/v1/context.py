"""What the ``/v1`` routes reach through FastAPI dependencies.

:class:`V1Context` holds one built router's collaborators. :func:`v1_context` and
:func:`caller` are markers: module-level routers depend on them, and
:func:`ragloom.server.v1.build_router` binds them (see :mod:`.binding`) to its
context and to ``OpenAIDeps.tenant``. Called unbound, they fail loudly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import Depends

from ragloom.server.v1.common import tenant_id

if TYPE_CHECKING:
    from ragloom.server.v1.agent_turns import AgentTurns
    from ragloom.server.v1.conversations import Conversations
    from ragloom.server.v1.db import MetaDB
    from ragloom.server.v1.deps import OpenAIDeps
    from ragloom.server.v1.inference import ChatCompletions
    from ragloom.server.v1.knowledge import Knowledge
    from ragloom.server.v1.llama_context import LlamaContext
    from ragloom.server.v1.purge import FilePurger
    from ragloom.server.v1.responses import ResponsesEngine
    from ragloom.server.v1.vector_store_api import VectorStoreAPI


@dataclass(frozen=True, kw_only=True)
class V1Context:
    """One built ``/v1`` router's collaborators (see ``build_router``)."""

    deps: OpenAIDeps
    db: MetaDB
    vector_stores: VectorStoreAPI
    purger: FilePurger
    knowledge: Knowledge
    chat: ChatCompletions
    engine: ResponsesEngine
    llama: LlamaContext
    conversations: Conversations
    turns: AgentTurns


class UnboundMarker(RuntimeError):
    """A ``/v1`` route ran without ``build_router`` binding its collaborators."""


async def v1_context() -> V1Context:
    """Marker: the built router's :class:`V1Context`."""
    raise UnboundMarker("v1_context is bound by ragloom.server.v1.build_router")


async def caller() -> Any:
    """Marker: ``OpenAIDeps.tenant``, the caller's tenant (any object with an ``id``)."""
    raise UnboundMarker("caller is bound by ragloom.server.v1.build_router")


async def caller_tenant(who: Any = Depends(caller)) -> str:
    """FastAPI dependency: the caller's tenant id."""
    return tenant_id(who)


#: Endpoint parameters' defaults: the built router's context, the caller's tenant id,
#: and the caller's tenant as ``OpenAIDeps.tenant`` gives it.
V1 = Depends(v1_context)
TENANT = Depends(caller_tenant)
CALLER = Depends(caller)


def provider(context: V1Context) -> Any:
    """An async dependency returning ``context`` (no thread hand-off per request)."""

    async def provide() -> V1Context:
        return context

    return provide

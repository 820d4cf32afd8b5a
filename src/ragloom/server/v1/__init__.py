"""The OpenAI-compatible API under ``/v1`` and the specifications' own routes.

``build_router(deps)`` returns one :class:`fastapi.APIRouter` (mount it at the app's
root; its paths start with ``/v1``). Every failure is answered with OpenAI's error
body (see :mod:`~ragloom.server.v1.errors`); every object belongs to the
caller's tenant and another tenant's id is a 404.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from ragloom.server.v1.deps import Deps, OpenAIDeps

if TYPE_CHECKING:
    from fastapi import APIRouter

__all__ = ["Deps", "OpenAIDeps", "build_router"]


def build_router(deps: OpenAIDeps | Deps) -> APIRouter:
    from ragloom.server.routing import PrefixRouter
    from ragloom.server.v1 import (
        files,
        inference,
        responses_routes,
        spec,
        vector_stores,
    )
    from ragloom.server.v1.chooser import ModelChooser
    from ragloom.server.v1.collections import VectorStoreCollections
    from ragloom.server.v1.conversations import Conversations
    from ragloom.server.v1.db import MetaDB
    from ragloom.server.v1.errors import ERROR_RESPONSES
    from ragloom.server.v1.ingest import VectorStoreIngestor
    from ragloom.server.v1.knowledge import Knowledge
    from ragloom.server.v1.llama_context import LlamaContext
    from ragloom.server.v1.llama_objects import LlamaObjects
    from ragloom.server.v1.pooled import pooled_route_class
    from ragloom.server.v1.purge import FilePurger
    from ragloom.server.v1.responses import ResponsesEngine
    from ragloom.server.v1.responses_llama import LlamaHooks
    from ragloom.server.v1.vector_store_api import VectorStoreAPI

    if isinstance(deps, Deps):  # the core's generic wiring hands over its state
        from ragloom.server.v1.wiring import deps_from_state

        deps = deps_from_state(deps.state)
    db = MetaDB(deps.db_path)
    collections = VectorStoreCollections(
        deps.vector_file, deps.embedder, handles=deps.handles,
        on_write=deps.caches.changed if deps.caches is not None else None)
    ingestor = VectorStoreIngestor(db, collections, lease_seconds=deps.lease_seconds)
    purger = FilePurger(db, collections)
    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        # Chunks of files deleted just before a kill leave their stores before anyone
        # can search them; files left in_progress are ingested again.
        await deps.cpu(purger.finish)
        await deps.cpu(ingestor.ensure_started)
        yield

    # Sync endpoints run in the server's CPU pool, not Starlette's default one.
    router = PrefixRouter(prefix="/v1", route_class=pooled_route_class(deps.cpu),
                          tags=["openai"],
                          lifespan=lifespan, responses=ERROR_RESPONSES)
    # Routes are tried in the order they are added: vector stores (search is the
    # most frequent request) before files; their paths do not overlap.
    api = VectorStoreAPI(deps, db, collections, ingestor)
    vector_stores.add_routes(router, api)
    files.add_routes(router, deps, db, purger)
    knowledge = Knowledge(deps, db, collections)
    llama = LlamaContext(deps, knowledge, LlamaObjects(db))
    conversations = Conversations(llama.objects)
    engine = ResponsesEngine(db, collections, deps.model, deps.max_answer_tokens,
                             clock=deps.clock, hooks=LlamaHooks(llama, conversations),
                             chooser=ModelChooser(deps))
    responses_routes.add_routes(router, deps, engine)
    inference.add_routes(router, deps, knowledge)
    spec.add_routes(router, deps, knowledge)
    add_llama_stack_routes(router, llama, conversations)
    state: Any = router
    state.ragloom_ingestor = ingestor  # tests wait on it; the core may too
    return router


def add_llama_stack_routes(router: APIRouter, llama: Any, conversations: Any) -> None:
    """Llama Stack's own routes (vector dbs, Vector IO insert, tool groups and runtime,
    agents, conversations) and the ``/v1/openai/v1`` alias of its 0.2 clients."""
    from ragloom.server.v1 import (
        agents,
        toolgroups,
        vector_dbs,
        vector_io,
    )
    from ragloom.server.v1 import conversations as conversation_routes
    from ragloom.server.v1.agent_turns import AgentTurns
    from ragloom.server.v1.alias import alias_route

    vector_dbs.add_routes(router, llama)
    vector_io.add_routes(router, llama)
    toolgroups.add_routes(router, llama)
    agents.add_routes(router, llama, AgentTurns(llama, llama.deps.max_answer_tokens))
    conversation_routes.add_routes(router, llama, conversations)
    router.routes.append(alias_route())

"""The OpenAI-compatible API under ``/v1`` and the specifications' own routes.

``build_router(deps)`` returns one :class:`fastapi.APIRouter` (mount it at the app's
root; its paths start with ``/v1``). Every failure is answered with OpenAI's error
body (see :mod:`~ragloom.server.v1.errors`); every object belongs to the caller's
tenant and another tenant's id is a 404.

Like the native API, each resource module declares a module-level ``router``.
``build_router`` wires the collaborators once (:func:`build_context`) and copies each
module's routes into the router it returns, bound to them (see
:mod:`~ragloom.server.v1.binding`). This package was ``ragloom.server.openai_compat``,
which stays as a deprecated alias.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from ragloom.server.v1.deps import Deps, OpenAIDeps

if TYPE_CHECKING:
    from fastapi import APIRouter

    from ragloom.server.v1.context import V1Context

__all__ = ["Deps", "OpenAIDeps", "build_router"]


def build_router(deps: OpenAIDeps | Deps) -> APIRouter:
    from ragloom.server.routing import PrefixRouter
    from ragloom.server.v1 import (
        agents,
        conversations,
        files,
        inference,
        responses_routes,
        spec,
        toolgroups,
        vector_dbs,
        vector_io,
        vector_stores,
    )
    from ragloom.server.v1.alias import alias_route
    from ragloom.server.v1.binding import Binder, include_bound
    from ragloom.server.v1.context import caller, provider, v1_context
    from ragloom.server.v1.errors import ERROR_RESPONSES
    from ragloom.server.v1.pooled import pooled_route_class

    if isinstance(deps, Deps):  # the core's generic wiring hands over its state
        from ragloom.server.v1.wiring import deps_from_state

        deps = deps_from_state(deps.state)
    from ragloom.server.v1.migrate import migrate_openai_file

    context = build_context(deps)
    purger, ingestor = context.purger, context.vector_stores.ingestor

    def start() -> None:
        if deps.legacy_db_path is not None:  # an older server's openai.sqlite, once
            migrate_openai_file(context.db, deps.legacy_db_path)
        # Chunks of files deleted just before a kill leave their stores before anyone
        # can search them (a bounded wait for the delete jobs); files left in_progress
        # are ingested again.
        purger.finish()
        ingestor.ensure_started()
        context.vector_stores.deletes.settle_pending()

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        await deps.cpu(start)
        try:
            yield
        finally:
            await deps.cpu(ingestor.stop)

    # Sync endpoints run in the server's CPU pool, not Starlette's default one.
    router = PrefixRouter(prefix="/v1", route_class=pooled_route_class(deps.cpu),
                          tags=["openai"],
                          lifespan=lifespan, responses=ERROR_RESPONSES)
    binder = Binder({v1_context: provider(context), caller: deps.tenant})
    # Routes are tried in the order they are added: vector stores (search is the
    # most frequent request) before files; their paths do not overlap. Then Llama
    # Stack's own routes and the ``/v1/openai/v1`` alias of its 0.2 clients.
    for module in (vector_stores, files, responses_routes, inference, spec,
                   vector_dbs, vector_io, toolgroups, agents, conversations):
        include_bound(router, module.router, binder)
    router.routes.append(alias_route())
    state: Any = router
    state.ragloom_ingestor = ingestor  # tests wait on it; the core may too
    return router


def build_context(deps: OpenAIDeps) -> V1Context:
    """The collaborators of one ``/v1`` router, wired once."""
    from ragloom.server.v1.agent_turns import AgentTurns
    from ragloom.server.v1.chooser import ModelChooser
    from ragloom.server.v1.collections import VectorStoreCollections
    from ragloom.server.v1.context import V1Context
    from ragloom.server.v1.conversations import Conversations
    from ragloom.server.v1.db import MetaDB
    from ragloom.server.v1.delete_jobs import VectorStoreDeletes
    from ragloom.server.v1.inference import ChatCompletions
    from ragloom.server.v1.ingest import VectorStoreIngestor
    from ragloom.server.v1.insert_jobs import InsertHandler, InsertJobs
    from ragloom.server.v1.knowledge import Knowledge
    from ragloom.server.v1.llama_context import LlamaContext
    from ragloom.server.v1.llama_objects import LlamaObjects
    from ragloom.server.v1.purge import FilePurger
    from ragloom.server.v1.responses import ResponsesEngine
    from ragloom.server.v1.responses_llama import LlamaHooks
    from ragloom.server.v1.vector_store_api import VectorStoreAPI

    db = MetaDB(deps.database if deps.database is not None else deps.db_path)
    collections = VectorStoreCollections(
        deps.vector_file, deps.embedder, handles=deps.handles,
        on_write=deps.caches.changed if deps.caches is not None else None)
    # File attaches, Llama Stack inserts and deletes are jobs of the server's one job
    # system.
    ingestor = VectorStoreIngestor(db, collections, queue=deps.job_queue,
                                   worker=deps.job_worker, lease_seconds=deps.lease_seconds)
    # Deletes too (vector stores, detached and deleted files).
    deletes = VectorStoreDeletes(db, collections, ingestor.queue, ingestor.worker,
                                 wait=deps.delete_wait)
    purger = FilePurger(db, collections, deletes)
    knowledge = Knowledge(deps, db, collections)
    inserts = InsertJobs(deps, knowledge, ingestor.queue, deadline=deps.insert_deadline)
    ingestor.worker.register(InsertHandler(inserts))
    llama = LlamaContext(deps, knowledge, LlamaObjects(db), inserts)
    conversations = Conversations(llama.objects)
    engine = ResponsesEngine(db, collections, deps.model, deps.max_answer_tokens,
                             clock=deps.clock, hooks=LlamaHooks(llama, conversations),
                             chooser=ModelChooser(deps))
    return V1Context(
        deps=deps, db=db, vector_stores=VectorStoreAPI(deps, db, collections, ingestor,
                                                          deletes),
        purger=purger, knowledge=knowledge, chat=ChatCompletions(deps, knowledge),
        engine=engine, llama=llama, conversations=conversations,
        turns=AgentTurns(llama, deps.max_answer_tokens))

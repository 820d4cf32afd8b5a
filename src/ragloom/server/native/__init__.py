"""The native API (``/api/...``): knowledge bases, documents, jobs, search, ask, sessions."""

from fastapi import APIRouter

from ragloom.server.native import documents, graph, jobs, knowledge_bases, query, sessions
from ragloom.server.native.schemas import ERROR_RESPONSES
from ragloom.server.routing import PrefixRouter


def build_native_router() -> APIRouter:
    router = PrefixRouter(prefix="/api", responses=ERROR_RESPONSES)
    # Routes are tried in this order: search and ask, the most frequent requests,
    # first (no two modules' paths overlap, so the order changes nothing else).
    for module in (query, knowledge_bases, documents, jobs, sessions, graph):
        router.include_router(module.router)
    return router


__all__ = ["build_native_router"]

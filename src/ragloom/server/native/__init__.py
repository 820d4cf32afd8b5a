"""The native API (``/api/...``): knowledge bases, documents, jobs, search, ask, sessions."""

from fastapi import APIRouter

from ragloom.server.native import documents, graph, jobs, knowledge_bases, query, sessions
from ragloom.server.native.schemas import ERROR_RESPONSES


def build_native_router() -> APIRouter:
    router = APIRouter(prefix="/api", responses=ERROR_RESPONSES)
    for module in (knowledge_bases, documents, jobs, query, sessions, graph):
        router.include_router(module.router)
    return router


__all__ = ["build_native_router"]

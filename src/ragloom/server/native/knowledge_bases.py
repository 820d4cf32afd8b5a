"""``/api/knowledge-bases``: create (embedder, chunking), list, get with counts, delete."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from ragloom.server.auth import Tenant, current_tenant
from ragloom.server.catalog import KbRecord
from ragloom.server.native.schemas import (
    Deleted,
    KnowledgeBaseCreate,
    KnowledgeBaseList,
    KnowledgeBaseOut,
)
from ragloom.server.state import ServerState, get_state

router = APIRouter(tags=["knowledge bases"])


def kb_out(record: KbRecord, counts: tuple[int, int]) -> dict[str, Any]:
    return {"id": record.id, "object": "knowledge_base", "name": record.name,
            "embedder": record.embedder, "chunking": record.chunking,
            "metadata": record.metadata, "document_count": counts[0], "chunk_count": counts[1],
            "created_at": int(record.created)}


@router.post("/knowledge-bases", response_model=KnowledgeBaseOut, status_code=201)
async def create_knowledge_base(body: KnowledgeBaseCreate,
                                tenant: Tenant = Depends(current_tenant),
                                state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """Create a knowledge base with an embedder and chunking settings."""
    record = await state.run_cpu(lambda: state.catalog.create(
        tenant, body.name, embedder=body.embedder, chunking=body.chunking,
        metadata=body.metadata))
    return kb_out(record, (0, 0))


@router.get("/knowledge-bases", response_model=KnowledgeBaseList)
async def list_knowledge_bases(limit: int = Query(1000, ge=1, le=1000),
                               tenant: Tenant = Depends(current_tenant),
                               state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """The caller's knowledge bases (the first ``limit``, oldest first), with their sizes."""
    def work() -> list[dict[str, Any]]:
        return [kb_out(r, state.catalog.counts(r))
                for r in state.catalog.list(tenant, limit=limit)]

    return {"object": "list", "data": await state.run_cpu(work)}


@router.get("/knowledge-bases/{kb}", response_model=KnowledgeBaseOut)
async def get_knowledge_base(kb: str, tenant: Tenant = Depends(current_tenant),
                             state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """One knowledge base (by id or name) with its document and chunk counts."""
    def work() -> dict[str, Any]:
        record = state.catalog.get(tenant, kb)
        return kb_out(record, state.catalog.counts(record))

    return await state.run_cpu(work)


@router.delete("/knowledge-bases/{kb}", response_model=Deleted)
async def delete_knowledge_base(kb: str, tenant: Tenant = Depends(current_tenant),
                                state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """Delete a knowledge base, its documents and its pending jobs."""
    record = await state.run_cpu(state.catalog.delete, tenant, kb)
    return {"id": record.id, "object": "knowledge_base.deleted", "deleted": True}

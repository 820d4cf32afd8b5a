"""``/api/knowledge-bases/{kb}/graph``: the knowledge graph of a knowledge base.

* ``GET .../graph``: entities (most salient first), relations, failed chunks, setting.
* ``PUT .../graph``: switch extraction on (``offline`` or ``llm``, the server's chat
  model) or off; documents ingested from then on are extracted (existing ones when
  they are ingested again).
* ``GET .../graph/entities/{entity}``: one entity (by name or alias), the chunks that
  mention it with the evidence, and its neighbours.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from ragloom.server.auth import Tenant, current_tenant
from ragloom.server.errors import ApiError, bad_request
from ragloom.server.state import ServerState, get_state

router = APIRouter(tags=["knowledge graph"])


class GraphSettingIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(description="extract entities and relations at ingestion")
    extractor: Literal["offline", "llm"] = Field(
        "offline", description="offline: no model; llm: the server's chat model")


def _open(state: ServerState, tenant: Tenant, kb: str) -> tuple[Any, Any]:
    from ragloom.graph import SqliteGraph

    base = state.catalog.open(state.catalog.get(tenant, kb))
    store: Any = base.store
    if state.settings.replicated:
        raise bad_request("the knowledge graph lives in the embedded SQLite store; this "
                          "server keeps its knowledge bases in PostgreSQL", "kb")
    return base, SqliteGraph(store)


@router.get("/knowledge-bases/{kb}/graph")
async def get_graph(kb: str, limit: int = Query(500, ge=1, le=1000),
                    tenant: Tenant = Depends(current_tenant),
                    state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """Entities and relations of a knowledge base (``limit`` of each), failed chunks."""
    def work() -> dict[str, Any]:
        base, graph = _open(state, tenant, kb)
        return {"object": "knowledge_graph", "knowledge_base": base.name,
                "settings": graph.settings(),
                "entities": [e.to_dict() for e in graph.entities(limit=limit)],
                "relations": [r.to_dict() for r in graph.relations(limit=limit)],
                "failures": graph.failures()}

    return await state.run_cpu(work)


@router.put("/knowledge-bases/{kb}/graph")
async def set_graph(kb: str, body: GraphSettingIn, tenant: Tenant = Depends(current_tenant),
                    state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """Switch graph extraction on or off for the documents ingested from now on."""
    def work() -> dict[str, Any]:
        base, graph = _open(state, tenant, kb)
        from ragloom.graph import graph_step

        base.graph = graph_step(base.store, enable=body.enabled, extractor=body.extractor,
                                model=state.catalog.models.model)
        return {"object": "knowledge_graph.settings", "knowledge_base": base.name,
                "settings": graph.settings()}

    return await state.run_cpu(work)


@router.get("/knowledge-bases/{kb}/graph/entities/{entity}")
async def get_entity(kb: str, entity: str, hops: int = Query(1, ge=1, le=3),
                     fan_out: int = Query(10, ge=1, le=100),
                     tenant: Tenant = Depends(current_tenant),
                     state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """An entity, the chunks mentioning it (text, document, evidence), its neighbours."""
    def work() -> dict[str, Any]:
        base, graph = _open(state, tenant, kb)
        found = graph.find(entity)
        if found is None:
            raise ApiError(404, f"no entity named {entity!r} in the graph of {base.name!r}",
                           type="not_found_error", code="not_found")
        mentions = graph.mentions([found.id])
        chunks = {c.id: c for c in base.store.get_chunks([m[1] for m in mentions])}
        return {"object": "knowledge_graph.entity", "knowledge_base": base.name,
                "entity": found.to_dict(),
                "mentions": [{"chunk_id": chunk_id, "document_id": document_id,
                              "evidence": evidence,
                              "source": chunks[chunk_id].source if chunk_id in chunks else None,
                              "text": chunks[chunk_id].text if chunk_id in chunks else None}
                             for _, chunk_id, document_id, evidence in mentions],
                "neighbours": [n.to_dict() for n in graph.neighbours(
                    found.id, hops=hops, fan_out=fan_out)]}

    return await state.run_cpu(work)

"""Routes of ``/v1/responses``: create (streamed or not), retrieve, delete, input items."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from ragloom.server.v1.common import (
    SSE_HEADERS,
    page,
    sse_events,
)
from ragloom.server.v1.context import TENANT, V1, V1Context
from ragloom.server.v1.pooled import stream_in_pool
from ragloom.server.v1.responses_model import ResponseCreate

router = APIRouter()


@router.post("/responses", summary="Create a response (file_search, streaming)",
             response_model=None)
async def create(body: ResponseCreate, tenant: str = TENANT, v1: V1Context = V1
                 ) -> dict[str, Any] | StreamingResponse:
    deps, engine = v1.deps, v1.engine
    # Searching happens here, so a bad store or filter is a plain 4xx, not a stream.
    plan = await deps.cpu(engine.plan, body, tenant)
    if not body.stream:
        return await deps.slow(engine.run, plan)
    return StreamingResponse(stream_in_pool(deps.slow, sse_events(engine.stream(plan))),
                             media_type="text/event-stream", headers=SSE_HEADERS)


@router.get("/responses/{response_id}", summary="Retrieve a stored response")
def retrieve(response_id: str, tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    engine = v1.engine
    body: dict[str, Any] = json.loads(engine.stored(tenant, response_id)["body"])
    return body


@router.delete("/responses/{response_id}", summary="Delete a stored response")
def delete(response_id: str, tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    engine = v1.engine
    engine.stored(tenant, response_id)
    engine.db.execute("DELETE FROM oai_responses WHERE id = ? AND tenant = ?",
                      (response_id, tenant))
    return {"id": response_id, "object": "response.deleted", "deleted": True}


@router.get("/responses/{response_id}/input_items", summary="A response's input items")
def input_items(response_id: str, limit: int = 20, order: str = "desc",
                after: str | None = None, before: str | None = None,
                tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    engine = v1.engine
    items = json.loads(engine.stored(tenant, response_id)["input_items"])
    return page(items, limit=limit, order=order, after=after, before=before)

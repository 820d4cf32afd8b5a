"""Llama Stack 0.2's vector databases: ``POST /v1/vector-dbs`` (register), list, get,
``DELETE`` (unregister).

A vector db is one of the caller's knowledge bases under the registered name (created
empty when it does not exist yet), or one of its vector stores (``vs_…``). ragloom
embeds with the knowledge base's own embedder: the registration answers with its name
and dimension, and a different ``embedding_dimension`` is refused.
"""

from __future__ import annotations

import contextlib
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from ragloom.errors import NotFoundError
from ragloom.server.v1.context import TENANT, V1, V1Context
from ragloom.server.v1.errors import bad_request

KIND = "vector_db"
PROVIDER = "ragloom"


class VectorDBRegister(BaseModel):
    model_config = ConfigDict(extra="forbid")
    vector_db_id: str = Field(min_length=1, max_length=200)
    embedding_model: str | None = None
    embedding_dimension: int | None = Field(None, ge=1)
    provider_id: str | None = None
    provider_vector_db_id: str | None = None
    vector_db_name: str | None = None


class VectorDB(BaseModel):
    identifier: str
    provider_id: str
    type: str = "vector_db"
    embedding_model: str
    embedding_dimension: int
    provider_resource_id: str | None = None
    vector_db_name: str | None = None


class VectorDBList(BaseModel):
    data: list[VectorDB]


router = APIRouter()


@router.post("/vector-dbs", summary="Register a vector database (Llama Stack 0.2)",
             response_model=VectorDB)
async def register(body: VectorDBRegister,
                   tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, knowledge, objects = v1.deps, v1.knowledge, v1.llama.objects

    def run() -> dict[str, Any]:
        if body.provider_id not in (None, PROVIDER):
            raise bad_request(f"provider_id must be {PROVIDER!r} (or left out)",
                              "provider_id", code="unsupported_value")
        kb = knowledge.resolve(tenant, body.vector_db_id, create=True)
        embedder = kb.embedder
        if body.embedding_dimension not in (None, embedder.dimension):
            raise bad_request(
                f"embedding_dimension {body.embedding_dimension} does not match this "
                f"server's embedder {embedder.name!r} ({embedder.dimension} dimensions)",
                "embedding_dimension")
        record = {"identifier": body.vector_db_id, "provider_id": PROVIDER,
                  "type": "vector_db", "embedding_model": embedder.name,
                  "embedding_dimension": embedder.dimension,
                  "provider_resource_id": body.vector_db_id,
                  "vector_db_name": body.vector_db_name}
        return objects.put(KIND, tenant, body.vector_db_id, record)

    return await deps.cpu(run)


@router.get("/vector-dbs", summary="List registered vector databases",
            response_model=VectorDBList)
async def list_dbs(tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, objects = v1.deps, v1.llama.objects
    return {"data": await deps.cpu(objects.children, KIND, tenant)}


@router.get("/vector-dbs/{vector_db_id}", summary="A registered vector database",
            response_model=VectorDB)
async def get(vector_db_id: str, tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, objects = v1.deps, v1.llama.objects
    return await deps.cpu(objects.get, KIND, tenant, vector_db_id, "vector_db_id")


@router.delete("/vector-dbs/{vector_db_id}", summary="Unregister a vector database",
               status_code=200, response_model=None)
async def unregister(vector_db_id: str, tenant: str = TENANT, v1: V1Context = V1) -> None:
    deps, knowledge, objects = v1.deps, v1.knowledge, v1.llama.objects

    def run() -> None:
        objects.get(KIND, tenant, vector_db_id, "vector_db_id")
        if not knowledge.is_vector_store(tenant, vector_db_id):
            if deps.delete_knowledge_base is not None:
                with contextlib.suppress(NotFoundError):  # already gone
                    deps.delete_knowledge_base(tenant, vector_db_id)
            else:
                kb = knowledge.resolve(tenant, vector_db_id)
                try:
                    kb.delete_where(None)
                finally:
                    knowledge.written(kb)
        objects.delete(KIND, tenant, vector_db_id)

    await deps.cpu(run)

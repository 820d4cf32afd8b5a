"""``POST /v1/vector-io/insert``: ready-made chunks into a vector db (Llama Stack).

Each chunk keeps its text (``content``), its ``metadata`` and its id (``chunk_id``,
``stored_chunk_id`` or ``chunk_metadata.chunk_id``; else one made from the content).
Its document is ``metadata.document_id`` (or ``chunk_metadata.document_id``). ragloom
embeds the text with the knowledge base's own embedder, so an ``embedding`` sent
along is not stored. The vector db is ``vector_store_id`` (0.3 and later) or
``vector_db_id`` (0.2): a knowledge base (created when missing) or a vector store.
The insert runs as a job of the one job system (see :mod:`.insert_jobs`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from ragloom.server.v1.context import TENANT, V1, V1Context
from ragloom.server.v1.errors import bad_request
from ragloom.server.v1.spec import content_text
from ragloom.types import TextChunk, content_id

MAX_CHUNKS = 10_000


class InsertChunk(BaseModel):
    model_config = ConfigDict(extra="allow")
    content: Any
    metadata: dict[str, Any] = {}
    chunk_id: str | None = None
    stored_chunk_id: str | None = None
    chunk_metadata: dict[str, Any] | None = None
    embedding: list[float] | None = None
    embedding_model: str | None = None
    embedding_dimension: int | None = None


class VectorIOInsert(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chunks: list[InsertChunk] = Field(max_length=MAX_CHUNKS)
    vector_db_id: str | None = None
    vector_store_id: str | None = None
    ttl_seconds: int | None = None


def text_chunk(chunk: InsertChunk, index: int) -> TextChunk:
    param = f"chunks[{index}]"
    text = content_text(chunk.content, f"{param}.content")
    if not text.strip():
        raise bad_request("a chunk's content must not be empty", f"{param}.content")
    backend = chunk.chunk_metadata or {}
    document = str(chunk.metadata.get("document_id") or backend.get("document_id") or "")
    document = document or content_id("vector-io", text)
    ident = str(chunk.chunk_id or chunk.stored_chunk_id or backend.get("chunk_id") or "")
    metadata = {k: v for k, v in chunk.metadata.items() if isinstance(k, str)}
    metadata.update(document_id=document, source=document, index=index, start=0,
                    end=len(text))
    return TextChunk(id=ident or content_id(document, str(index), text),
                     document_id=document, index=index, start=0, end=len(text), text=text,
                     metadata=metadata)


router = APIRouter()


@router.post("/vector-io/insert", summary="Insert chunks (Vector IO specification)",
             status_code=200, response_model=None)
async def insert(body: VectorIOInsert, tenant: str = TENANT, v1: V1Context = V1) -> None:
    deps, knowledge = v1.deps, v1.knowledge

    def prepare() -> tuple[str, str, list[TextChunk]]:
        target = body.vector_store_id or body.vector_db_id
        if not target:
            raise bad_request("send vector_store_id (or vector_db_id, its older name)",
                              "vector_store_id")
        if not body.chunks:
            raise bad_request("chunks must not be empty", "chunks")
        chunks = [text_chunk(chunk, index) for index, chunk in enumerate(body.chunks)]
        param = "vector_store_id" if body.vector_store_id else "vector_db_id"
        knowledge.resolve(tenant, target, create=True, param=param)
        return target, param, chunks

    # A job of the one job system (with its deadline); the answer waits for it.
    target, param, chunks = await deps.cpu(prepare)
    await v1.llama.inserts.run(tenant, target, param, chunks=chunks)

"""``/v1/vector_stores``: stores, their files, file batches and search (per tenant)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, Response

from ragloom.server.v1 import chunking, expiry
from ragloom.server.v1.cached_search import vector_store_page
from ragloom.server.v1.common import envelope, new_id, page_rows, tenant_id
from ragloom.server.v1.context import V1Context, caller, v1_context
from ragloom.server.v1.db import dumps
from ragloom.server.v1.errors import bad_request, not_allowed, not_found
from ragloom.server.v1.files import file_bytes, get_file
from ragloom.server.v1.ingest import documents_of
from ragloom.server.v1.model_names import accepts
from ragloom.server.v1.search import SearchRequest
from ragloom.server.v1.vector_store_api import (
    BatchCreate,
    FileCreate,
    FileUpdate,
    VectorStoreAPI,
    VectorStoreCreate,
    VectorStoreUpdate,
)

router = APIRouter()


async def store_api(v1: V1Context = Depends(v1_context)) -> VectorStoreAPI:
    return v1.vector_stores


async def owner(api: VectorStoreAPI = Depends(store_api), who: Any = Depends(caller)) -> str:
    """The caller's tenant id (and the ingestion worker started, on a first request)."""
    api.ingestor.ensure_started()
    return tenant_id(who)


API = Depends(store_api)
OWNER = Depends(owner)


@router.post("/vector_stores", summary="Create a vector store")
async def create(body: VectorStoreCreate,
                 tenant: str = OWNER, api: VectorStoreAPI = API) -> dict[str, Any]:
    embedder = api.collections.embedder
    if body.embedding_model is not None and not accepts(embedder.name,
                                                        body.embedding_model):
        raise not_allowed("embedding_model", body.embedding_model, [embedder.name],
                          "embedding_model")
    if body.embedding_dimension not in (None, embedder.dimension):
        raise bad_request(f"embedding_dimension must be {embedder.dimension}",
                          "embedding_dimension", code="unsupported_value")
    strategy = chunking.resolve(body.chunking_strategy)
    vs_id = new_id("vs_")
    created = api.deps.now()
    metadata = dict(body.metadata or {})

    def insert() -> dict[str, Any]:
        for file_id in body.file_ids:
            get_file(api.db, tenant, file_id)
        api.db.execute("INSERT INTO oai_vector_stores VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (vs_id, tenant, body.name, created, created, dumps(metadata),
                        dumps(body.expires_after.model_dump()) if body.expires_after
                        else None, body.description))
        if body.file_ids:
            api.attach(tenant, vs_id, [FileCreate(file_id=f) for f in body.file_ids],
                       strategy)
        return api.store_json(api.store_row(tenant, vs_id))

    return await api.deps.cpu(insert)


@router.get("/vector_stores", summary="List vector stores")
def list_stores(limit: int = 20, order: str = "desc", after: str | None = None,
                before: str | None = None,
                tenant: str = OWNER, api: VectorStoreAPI = API) -> dict[str, Any]:
    rows, more = page_rows(api.db, "oai_vector_stores", "tenant = ?", [tenant], limit=limit,
                           order=order, after=after, before=before, largest=100)
    return envelope([api.store_json(r) for r in rows], more)


@router.get("/vector_stores/{vector_store_id}", summary="Retrieve a vector store")
def retrieve(vector_store_id: str,
             tenant: str = OWNER, api: VectorStoreAPI = API) -> dict[str, Any]:
    return api.store_json(api.store_row(tenant, vector_store_id))


@router.post("/vector_stores/{vector_store_id}", summary="Modify a vector store")
async def update(vector_store_id: str, body: VectorStoreUpdate,
                 tenant: str = OWNER, api: VectorStoreAPI = API) -> dict[str, Any]:

    def change() -> dict[str, Any]:
        row = api.store_row(tenant, vector_store_id)
        fields = body.model_fields_set
        name = body.name if "name" in fields else row["name"]
        metadata = dumps(body.metadata or {}) if "metadata" in fields else row["metadata"]
        expires = (dumps(body.expires_after.model_dump()) if body.expires_after else None
                   ) if "expires_after" in fields else row["expires_after"]
        stamp = api.deps.now()
        active = row["last_active_at"]
        if expiry.is_expired(row, stamp):  # renaming is fine; a new policy cannot revive
            if expires != row["expires_after"]:
                raise expiry.expired_error(row)
        else:  # a change counts as use: a new policy counts from now
            active = stamp
        api.db.execute("UPDATE oai_vector_stores SET name = ?, metadata = ?, "
                       "expires_after = ?, last_active_at = ? WHERE id = ?",
                       (name, metadata, expires, active, vector_store_id))
        return api.store_json(api.store_row(tenant, vector_store_id))

    return await api.deps.cpu(change)


@router.delete("/vector_stores/{vector_store_id}", summary="Delete a vector store")
def delete(vector_store_id: str, tenant: str = OWNER, api: VectorStoreAPI = API) -> dict[str, Any]:
    api.store_row(tenant, vector_store_id)
    # The row (its file links go with it, so nothing is finished into it) and a delete
    # job, which lets go of its ingestion and drops its chunks, sidecar and handle.
    api.deletes.delete_store(tenant, vector_store_id)
    return {"id": vector_store_id, "object": "vector_store.deleted", "deleted": True}


# ---------------------------------------------------------------------- search
@router.post("/vector_stores/{vector_store_id}/search", summary="Search a vector store",
             response_model=dict[str, Any])
async def search(vector_store_id: str, body: SearchRequest,
                 tenant: str = OWNER, api: VectorStoreAPI = API) -> Response:

    def run() -> bytes:
        row = api.store_row(tenant, vector_store_id)
        stamp = api.deps.now()
        expiry.check_usable(row, stamp)
        kb = api.collections.knowledge_base(vector_store_id)
        page = vector_store_page(api.deps, tenant, [kb], body)
        expiry.touch(api.db, row, stamp)
        return page

    # Encoded in the worker thread: the event loop (one core for every request)
    # does not validate and serialise the page again through the response model.
    return Response(await api.deps.cpu(run), media_type="application/json")


# ----------------------------------------------------------------------- files
@router.post("/vector_stores/{vector_store_id}/files",
             summary="Attach a file (ingested in the background)")
async def attach(vector_store_id: str, body: FileCreate, response: Response,
                 tenant: str = OWNER, api: VectorStoreAPI = API) -> dict[str, Any]:

    def run() -> dict[str, Any]:
        expiry.check_usable(api.store_row(tenant, vector_store_id), api.deps.now())
        api.attach(tenant, vector_store_id, [body])
        return api.file_json(api.link_row(tenant, vector_store_id, body.file_id))

    api.poll_headers(response)
    return await api.deps.cpu(run)


@router.get("/vector_stores/{vector_store_id}/files", summary="List a store's files")
def list_files(vector_store_id: str, response: Response, limit: int = 20,
               order: str = "desc", after: str | None = None, before: str | None = None,
               filter: str | None = None,
               tenant: str = OWNER, api: VectorStoreAPI = API) -> dict[str, Any]:
    api.store_row(tenant, vector_store_id)
    where = "vs_id = ?"
    params: list[Any] = [vector_store_id]
    if filter is not None:
        if filter not in ("in_progress", "completed", "failed", "cancelled"):
            raise bad_request("filter must be in_progress, completed, failed or cancelled",
                              "filter")
        where += " AND status = ?"
        params.append(filter)
    rows, more = page_rows(api.db, "oai_vs_files", where, params, limit=limit, order=order,
                           after=after, before=before, largest=100, id_column="file_id")
    return envelope([api.file_json(r) for r in rows], more)


@router.get("/vector_stores/{vector_store_id}/files/{file_id}",
            summary="Retrieve a store's file (its ingestion status)")
def retrieve_file(vector_store_id: str, file_id: str, response: Response,
                  tenant: str = OWNER, api: VectorStoreAPI = API) -> dict[str, Any]:
    api.store_row(tenant, vector_store_id)
    api.poll_headers(response)
    return api.file_json(api.link_row(tenant, vector_store_id, file_id))


@router.post("/vector_stores/{vector_store_id}/files/{file_id}",
             summary="Update a store file's attributes (re-indexes it)")
async def update_file(vector_store_id: str, file_id: str, body: FileUpdate,
                      tenant: str = OWNER, api: VectorStoreAPI = API) -> dict[str, Any]:

    def run() -> dict[str, Any]:
        # Re-indexing attaches again: use, which an expired store refuses.
        expiry.check_usable(api.store_row(tenant, vector_store_id), api.deps.now())
        row = api.link_row(tenant, vector_store_id, file_id)
        api.collections.delete_file(vector_store_id, file_id)
        api.attach(tenant, vector_store_id,
                   [FileCreate(file_id=file_id, attributes=body.attributes or {},
                               chunking_strategy=json.loads(row["chunking"]))],
                   batch_id=row["batch_id"])
        return api.file_json(api.link_row(tenant, vector_store_id, file_id))

    return await api.deps.cpu(run)


@router.delete("/vector_stores/{vector_store_id}/files/{file_id}",
               summary="Detach a file from a vector store")
def delete_file(vector_store_id: str, file_id: str,
                tenant: str = OWNER, api: VectorStoreAPI = API) -> dict[str, Any]:
    api.store_row(tenant, vector_store_id)
    api.link_row(tenant, vector_store_id, file_id)
    api.deletes.detach(tenant, vector_store_id, file_id)
    return {"id": file_id, "object": "vector_store.file.deleted", "deleted": True}


@router.get("/vector_stores/{vector_store_id}/files/{file_id}/content",
            summary="The parsed text of a store's file")
async def file_content(vector_store_id: str, file_id: str,
                       tenant: str = OWNER, api: VectorStoreAPI = API
                       ) -> dict[str, Any]:

    def parse() -> list[dict[str, str]]:  # reading and parsing: never on the loop
        api.store_row(tenant, vector_store_id)
        api.link_row(tenant, vector_store_id, file_id)
        row = get_file(api.db, tenant, file_id)
        documents, _ = documents_of(file_id, row["filename"], file_bytes(api.db, file_id), {})
        return [{"type": "text", "text": d.text} for d in documents]

    return {"object": "vector_store.file_content.page", "data": await api.deps.cpu(parse),
            "has_more": False, "next_page": None}


# --------------------------------------------------------------------- batches
@router.post("/vector_stores/{vector_store_id}/file_batches",
             summary="Attach several files (ingested in the background)")
async def create_batch(vector_store_id: str, body: BatchCreate, response: Response,
                       tenant: str = OWNER, api: VectorStoreAPI = API) -> dict[str, Any]:
    if bool(body.file_ids) == bool(body.files):
        raise bad_request("give either file_ids or files (not both, not neither)",
                          "file_ids")
    items = body.files or [FileCreate(file_id=f) for f in body.file_ids or []]
    batch_id = new_id("vsfb_")

    def run() -> dict[str, Any]:
        stamp = api.deps.now()
        expiry.check_usable(api.store_row(tenant, vector_store_id), stamp)
        api.db.execute("INSERT INTO oai_batches VALUES (?, ?, ?, ?, 0)",
                       (batch_id, tenant, vector_store_id, stamp))
        api.attach(tenant, vector_store_id, items, body.chunking_strategy,
                   body.attributes, batch_id)
        return api.batch_json(batch_row(api, tenant, vector_store_id, batch_id))

    api.poll_headers(response)
    return await api.deps.cpu(run)


def batch_row(api: VectorStoreAPI, tenant: str, vs_id: str, batch_id: str) -> Any:
    row = api.db.row("SELECT * FROM oai_batches WHERE id = ? AND vs_id = ? AND tenant = ?",
                     (batch_id, vs_id, tenant))
    if row is None:
        raise not_found("file batch", batch_id, "batch_id")
    return row


@router.get("/vector_stores/{vector_store_id}/file_batches/{batch_id}",
            summary="Retrieve a file batch")
def retrieve_batch(vector_store_id: str, batch_id: str, response: Response,
                   tenant: str = OWNER, api: VectorStoreAPI = API) -> dict[str, Any]:
    api.store_row(tenant, vector_store_id)
    api.poll_headers(response)
    return api.batch_json(batch_row(api, tenant, vector_store_id, batch_id))


@router.post("/vector_stores/{vector_store_id}/file_batches/{batch_id}/cancel",
             summary="Cancel a file batch")
def cancel_batch(vector_store_id: str, batch_id: str, tenant: str = OWNER, api: VectorStoreAPI = API
                 ) -> dict[str, Any]:
    api.store_row(tenant, vector_store_id)
    batch_row(api, tenant, vector_store_id, batch_id)
    with api.db.write() as conn:
        conn.execute("UPDATE oai_batches SET cancelled = 1 WHERE id = ?", (batch_id,))
        conn.execute("UPDATE oai_vs_files SET status = 'cancelled' WHERE batch_id = ? "
                     "AND status = 'in_progress'", (batch_id,))
    return api.batch_json(batch_row(api, tenant, vector_store_id, batch_id))


@router.get("/vector_stores/{vector_store_id}/file_batches/{batch_id}/files",
            summary="List a file batch's files")
def batch_files(vector_store_id: str, batch_id: str, limit: int = 20,
                order: str = "desc", after: str | None = None, before: str | None = None,
                filter: str | None = None,
                tenant: str = OWNER, api: VectorStoreAPI = API) -> dict[str, Any]:
    api.store_row(tenant, vector_store_id)
    batch_row(api, tenant, vector_store_id, batch_id)
    where = "batch_id = ?"
    params: list[Any] = [batch_id]
    if filter is not None:
        where += " AND status = ?"
        params.append(filter)
    rows, more = page_rows(api.db, "oai_vs_files", where, params, limit=limit, order=order,
                           after=after, before=before, largest=100, id_column="file_id")
    return envelope([api.file_json(r) for r in rows], more)

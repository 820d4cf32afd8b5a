"""``/v1/vector_stores``: stores, their files, file batches and search (per tenant)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragloom.server.openai_compat import chunking
from ragloom.server.openai_compat.collections import VectorStoreCollections
from ragloom.server.openai_compat.common import new_id, now, page, tenant_id
from ragloom.server.openai_compat.db import MetaDB, dumps
from ragloom.server.openai_compat.deps import OpenAIDeps
from ragloom.server.openai_compat.errors import bad_request, not_found
from ragloom.server.openai_compat.files import file_bytes, get_file
from ragloom.server.openai_compat.ingest import VectorStoreIngestor, documents_of
from ragloom.server.openai_compat.search import SearchRequest, hit_json, run_search

Attributes = dict[str, str | bool | int | float]


def _check_attributes(value: Attributes | None) -> Attributes | None:
    if value is None:
        return None
    if len(value) > 16:
        raise ValueError("attributes may have at most 16 keys")
    for key, item in value.items():
        if len(key) > 64:
            raise ValueError(f"attribute key {key[:20]!r}... is longer than 64 characters")
        if isinstance(item, str) and len(item) > 512:
            raise ValueError(f"attribute {key!r} is longer than 512 characters")
    return value


class ExpiresAfter(BaseModel):
    anchor: str = "last_active_at"
    days: int = Field(ge=1, le=365)


class VectorStoreCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    description: str | None = None
    file_ids: list[str] = []
    expires_after: ExpiresAfter | None = None
    chunking_strategy: dict[str, Any] | None = None
    metadata: dict[str, str] | None = None
    embedding_model: str | None = None
    embedding_dimension: int | None = None
    provider_id: str | None = None


class VectorStoreUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    expires_after: ExpiresAfter | None = None
    metadata: dict[str, str] | None = None


class FileCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_id: str
    attributes: Attributes | None = None
    chunking_strategy: dict[str, Any] | None = None
    _check = field_validator("attributes")(_check_attributes)


class FileUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    attributes: Attributes | None
    _check = field_validator("attributes")(_check_attributes)


class BatchCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_ids: list[str] | None = None
    files: list[FileCreate] | None = None
    attributes: Attributes | None = None
    chunking_strategy: dict[str, Any] | None = None
    _check = field_validator("attributes")(_check_attributes)


class VectorStoreAPI:
    """The routes' shared state: the tables, the collections and the ingest worker."""

    def __init__(self, deps: OpenAIDeps, db: MetaDB, collections: VectorStoreCollections,
                 ingestor: VectorStoreIngestor) -> None:
        self.deps = deps
        self.db = db
        self.collections = collections
        self.ingestor = ingestor

    # ------------------------------------------------------------------ objects
    def store_row(self, tenant: str, vs_id: str) -> Any:
        row = self.db.row("SELECT * FROM oai_vector_stores WHERE id = ? AND tenant = ?",
                          (vs_id, tenant))
        if row is None:
            raise not_found("vector store", vs_id, "vector_store_id")
        return row

    def counts(self, vs_id: str, batch_id: str | None = None) -> tuple[dict[str, int], int]:
        sql = ("SELECT status, COUNT(*) AS n, SUM(usage_bytes) AS b FROM oai_vs_files "
               "WHERE vs_id = ?")
        params: list[Any] = [vs_id]
        if batch_id is not None:
            sql += " AND batch_id = ?"
            params.append(batch_id)
        counts = dict.fromkeys(("in_progress", "completed", "failed", "cancelled"), 0)
        usage = 0
        for row in self.db.rows(sql + " GROUP BY status", params):
            counts[row["status"]] = row["n"]
            usage += row["b"] or 0
        counts["total"] = sum(counts.values())
        return counts, usage

    def store_json(self, row: Any) -> dict[str, Any]:
        counts, usage = self.counts(row["id"])
        expires = json.loads(row["expires_after"]) if row["expires_after"] else None
        return {"id": row["id"], "object": "vector_store", "created_at": row["created_at"],
                "name": row["name"], "description": row["description"],
                "usage_bytes": usage, "file_counts": counts,
                "status": "in_progress" if counts["in_progress"] else "completed",
                "expires_after": expires,
                "expires_at": (row["last_active_at"] + 86400 * expires["days"]
                               if expires else None),
                "last_active_at": row["last_active_at"],
                "metadata": json.loads(row["metadata"])}

    def link_row(self, tenant: str, vs_id: str, file_id: str) -> Any:
        row = self.db.row("SELECT * FROM oai_vs_files WHERE vs_id = ? AND file_id = ? "
                          "AND tenant = ?", (vs_id, file_id, tenant))
        if row is None:
            raise not_found("file", file_id, "file_id")
        return row

    @staticmethod
    def file_json(row: Any) -> dict[str, Any]:
        return {"id": row["file_id"], "object": "vector_store.file",
                "attributes": json.loads(row["attributes"]),
                "chunking_strategy": json.loads(row["chunking"]),
                "created_at": row["created_at"],
                "last_error": json.loads(row["last_error"]) if row["last_error"] else None,
                "status": row["status"], "usage_bytes": row["usage_bytes"],
                "vector_store_id": row["vs_id"]}

    def batch_json(self, row: Any) -> dict[str, Any]:
        counts, _ = self.counts(row["vs_id"], row["id"])
        status = ("cancelled" if row["cancelled"] else
                  "in_progress" if counts["in_progress"] else
                  "failed" if counts["failed"] and not counts["completed"] else "completed")
        return {"id": row["id"], "object": "vector_store.file_batch",
                "created_at": row["created_at"], "vector_store_id": row["vs_id"],
                "status": status, "file_counts": counts}

    # ------------------------------------------------------------------ attaching
    def attach(self, tenant: str, vs_id: str, files: list[FileCreate],
               default_chunking: Any = None, default_attributes: Attributes | None = None,
               batch_id: str | None = None) -> list[str]:
        """Link files in_progress (one transaction) and queue them; returns their ids."""
        planned = []
        for item in files:
            get_file(self.db, tenant, item.file_id)
            strategy = chunking.resolve(item.chunking_strategy or default_chunking)
            attributes = item.attributes if item.attributes is not None else default_attributes
            if attributes is None:  # attaching again without attributes keeps the old ones
                known = self.db.row("SELECT attributes FROM oai_vs_files WHERE vs_id = ? AND "
                                    "file_id = ?", (vs_id, item.file_id))
                attributes = json.loads(known["attributes"]) if known else {}
            planned.append((item.file_id, dumps(attributes), dumps(strategy)))
        created = now()
        with self.db.write() as conn:
            for file_id, attrs_json, strategy_json in planned:
                conn.execute(
                    "INSERT INTO oai_vs_files (vs_id, file_id, tenant, status, attributes, "
                    "chunking, created_at, batch_id) VALUES (?, ?, ?, 'in_progress', ?, ?, ?, ?)"
                    " ON CONFLICT (vs_id, file_id) DO UPDATE SET status = 'in_progress', "
                    "attributes = excluded.attributes, chunking = excluded.chunking, "
                    "last_error = NULL, batch_id = excluded.batch_id",
                    (vs_id, file_id, tenant, attrs_json, strategy_json, created, batch_id))
            conn.execute("UPDATE oai_vector_stores SET last_active_at = ? WHERE id = ?",
                         (created, vs_id))
        self.ingestor.submit([(vs_id, file_id) for file_id, _, _ in planned])
        return [file_id for file_id, _, _ in planned]

    def poll_headers(self, response: Response) -> None:
        response.headers["openai-poll-after-ms"] = str(self.deps.poll_after_ms)


def add_routes(router: APIRouter, api: VectorStoreAPI) -> None:
    db = api.db

    async def tenant_of(tenant: Any = Depends(api.deps.tenant)) -> str:
        api.ingestor.ensure_started()
        return tenant_id(tenant)

    owner = Depends(tenant_of)

    @router.post("/vector_stores", summary="Create a vector store")
    async def create(body: VectorStoreCreate, tenant: str = owner) -> dict[str, Any]:
        embedder = api.collections.embedder
        if body.embedding_model not in (None, embedder.name):
            raise bad_request(f"embedding_model {body.embedding_model!r} is not served here; "
                              f"this server embeds with {embedder.name!r}", "embedding_model",
                              code="unsupported_value")
        if body.embedding_dimension not in (None, embedder.dimension):
            raise bad_request(f"embedding_dimension must be {embedder.dimension}",
                              "embedding_dimension", code="unsupported_value")
        strategy = chunking.resolve(body.chunking_strategy)
        vs_id = new_id("vs_")
        created = now()
        metadata = dict(body.metadata or {})

        def insert() -> dict[str, Any]:
            for file_id in body.file_ids:
                get_file(db, tenant, file_id)
            db.execute("INSERT INTO oai_vector_stores VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (vs_id, tenant, body.name, created, created, dumps(metadata),
                        dumps(body.expires_after.model_dump()) if body.expires_after else None,
                        body.description))
            if body.file_ids:
                api.attach(tenant, vs_id, [FileCreate(file_id=f) for f in body.file_ids],
                           strategy)
            return api.store_json(api.store_row(tenant, vs_id))

        return await api.deps.cpu(insert)

    @router.get("/vector_stores", summary="List vector stores")
    def list_stores(limit: int = 20, order: str = "desc", after: str | None = None,
                    before: str | None = None, tenant: str = owner) -> dict[str, Any]:
        if not 1 <= limit <= 100:
            raise bad_request("limit must be between 1 and 100", "limit")
        rows = db.rows("SELECT * FROM oai_vector_stores WHERE tenant = ? "
                       "ORDER BY created_at, rowid", (tenant,))
        return page([api.store_json(r) for r in rows], limit=limit, order=order, after=after,
                    before=before)

    @router.get("/vector_stores/{vector_store_id}", summary="Retrieve a vector store")
    def retrieve(vector_store_id: str, tenant: str = owner) -> dict[str, Any]:
        return api.store_json(api.store_row(tenant, vector_store_id))

    @router.post("/vector_stores/{vector_store_id}", summary="Modify a vector store")
    async def update(vector_store_id: str, body: VectorStoreUpdate,
                     tenant: str = owner) -> dict[str, Any]:

        def change() -> dict[str, Any]:
            row = api.store_row(tenant, vector_store_id)
            fields = body.model_fields_set
            name = body.name if "name" in fields else row["name"]
            metadata = dumps(body.metadata or {}) if "metadata" in fields else row["metadata"]
            expires = (dumps(body.expires_after.model_dump()) if body.expires_after else None
                       ) if "expires_after" in fields else row["expires_after"]
            db.execute("UPDATE oai_vector_stores SET name = ?, metadata = ?, "
                       "expires_after = ?, last_active_at = ? WHERE id = ?",
                       (name, metadata, expires, now(), vector_store_id))
            return api.store_json(api.store_row(tenant, vector_store_id))

        return await api.deps.cpu(change)

    @router.delete("/vector_stores/{vector_store_id}", summary="Delete a vector store")
    def delete(vector_store_id: str, tenant: str = owner) -> dict[str, Any]:
        api.store_row(tenant, vector_store_id)
        db.execute("DELETE FROM oai_vector_stores WHERE id = ?", (vector_store_id,))
        api.collections.drop(vector_store_id)
        return {"id": vector_store_id, "object": "vector_store.deleted", "deleted": True}

    # ---------------------------------------------------------------------- search
    @router.post("/vector_stores/{vector_store_id}/search", summary="Search a vector store")
    async def search(vector_store_id: str, body: SearchRequest,
                     tenant: str = owner) -> dict[str, Any]:

        def run() -> dict[str, Any]:
            api.store_row(tenant, vector_store_id)
            kb = api.collections.knowledge_base(vector_store_id)
            query, hits = run_search([kb], body)
            return {"object": "vector_store.search_results.page", "search_query": [query],
                    "data": [hit_json(h) for h in hits], "has_more": False, "next_page": None}

        return await api.deps.cpu(run)

    # ----------------------------------------------------------------------- files
    @router.post("/vector_stores/{vector_store_id}/files",
                 summary="Attach a file (ingested in the background)")
    async def attach(vector_store_id: str, body: FileCreate, response: Response,
                     tenant: str = owner) -> dict[str, Any]:

        def run() -> dict[str, Any]:
            api.store_row(tenant, vector_store_id)
            api.attach(tenant, vector_store_id, [body])
            return api.file_json(api.link_row(tenant, vector_store_id, body.file_id))

        api.poll_headers(response)
        return await api.deps.cpu(run)

    @router.get("/vector_stores/{vector_store_id}/files", summary="List a store's files")
    def list_files(vector_store_id: str, response: Response, limit: int = 20,
                   order: str = "desc", after: str | None = None, before: str | None = None,
                   filter: str | None = None, tenant: str = owner) -> dict[str, Any]:
        api.store_row(tenant, vector_store_id)
        sql = "SELECT * FROM oai_vs_files WHERE vs_id = ?"
        params: list[Any] = [vector_store_id]
        if filter is not None:
            if filter not in ("in_progress", "completed", "failed", "cancelled"):
                raise bad_request("filter must be in_progress, completed, failed or cancelled",
                                  "filter")
            sql += " AND status = ?"
            params.append(filter)
        rows = db.rows(sql + " ORDER BY created_at, rowid", params)
        if not 1 <= limit <= 100:
            raise bad_request("limit must be between 1 and 100", "limit")
        return page([api.file_json(r) for r in rows], limit=limit, order=order, after=after,
                    before=before)

    @router.get("/vector_stores/{vector_store_id}/files/{file_id}",
                summary="Retrieve a store's file (its ingestion status)")
    def retrieve_file(vector_store_id: str, file_id: str, response: Response,
                      tenant: str = owner) -> dict[str, Any]:
        api.store_row(tenant, vector_store_id)
        api.poll_headers(response)
        return api.file_json(api.link_row(tenant, vector_store_id, file_id))

    @router.post("/vector_stores/{vector_store_id}/files/{file_id}",
                 summary="Update a store file's attributes (re-indexes it)")
    async def update_file(vector_store_id: str, file_id: str, body: FileUpdate,
                          tenant: str = owner) -> dict[str, Any]:

        def run() -> dict[str, Any]:
            api.store_row(tenant, vector_store_id)
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
    def delete_file(vector_store_id: str, file_id: str, tenant: str = owner) -> dict[str, Any]:
        api.store_row(tenant, vector_store_id)
        api.link_row(tenant, vector_store_id, file_id)
        db.execute("DELETE FROM oai_vs_files WHERE vs_id = ? AND file_id = ?",
                   (vector_store_id, file_id))
        api.collections.delete_file(vector_store_id, file_id)
        return {"id": file_id, "object": "vector_store.file.deleted", "deleted": True}

    @router.get("/vector_stores/{vector_store_id}/files/{file_id}/content",
                summary="The parsed text of a store's file")
    def file_content(vector_store_id: str, file_id: str, tenant: str = owner
                     ) -> dict[str, Any]:
        api.store_row(tenant, vector_store_id)
        api.link_row(tenant, vector_store_id, file_id)
        row = get_file(db, tenant, file_id)
        documents, _ = documents_of(file_id, row["filename"], file_bytes(db, file_id), {})
        texts = [{"type": "text", "text": d.text} for d in documents]
        return {"object": "vector_store.file_content.page", "data": texts,
                "has_more": False, "next_page": None}

    # --------------------------------------------------------------------- batches
    @router.post("/vector_stores/{vector_store_id}/file_batches",
                 summary="Attach several files (ingested in the background)")
    async def create_batch(vector_store_id: str, body: BatchCreate, response: Response,
                           tenant: str = owner) -> dict[str, Any]:
        if bool(body.file_ids) == bool(body.files):
            raise bad_request("give either file_ids or files (not both, not neither)",
                              "file_ids")
        items = body.files or [FileCreate(file_id=f) for f in body.file_ids or []]
        batch_id = new_id("vsfb_")

        def run() -> dict[str, Any]:
            api.store_row(tenant, vector_store_id)
            db.execute("INSERT INTO oai_batches VALUES (?, ?, ?, ?, 0)",
                       (batch_id, tenant, vector_store_id, now()))
            api.attach(tenant, vector_store_id, items, body.chunking_strategy,
                       body.attributes, batch_id)
            return api.batch_json(batch_row(tenant, vector_store_id, batch_id))

        api.poll_headers(response)
        return await api.deps.cpu(run)

    def batch_row(tenant: str, vs_id: str, batch_id: str) -> Any:
        row = db.row("SELECT * FROM oai_batches WHERE id = ? AND vs_id = ? AND tenant = ?",
                     (batch_id, vs_id, tenant))
        if row is None:
            raise not_found("file batch", batch_id, "batch_id")
        return row

    @router.get("/vector_stores/{vector_store_id}/file_batches/{batch_id}",
                summary="Retrieve a file batch")
    def retrieve_batch(vector_store_id: str, batch_id: str, response: Response,
                       tenant: str = owner) -> dict[str, Any]:
        api.store_row(tenant, vector_store_id)
        api.poll_headers(response)
        return api.batch_json(batch_row(tenant, vector_store_id, batch_id))

    @router.post("/vector_stores/{vector_store_id}/file_batches/{batch_id}/cancel",
                 summary="Cancel a file batch")
    def cancel_batch(vector_store_id: str, batch_id: str, tenant: str = owner
                     ) -> dict[str, Any]:
        api.store_row(tenant, vector_store_id)
        batch_row(tenant, vector_store_id, batch_id)
        with db.write() as conn:
            conn.execute("UPDATE oai_batches SET cancelled = 1 WHERE id = ?", (batch_id,))
            conn.execute("UPDATE oai_vs_files SET status = 'cancelled' WHERE batch_id = ? "
                         "AND status = 'in_progress'", (batch_id,))
        return api.batch_json(batch_row(tenant, vector_store_id, batch_id))

    @router.get("/vector_stores/{vector_store_id}/file_batches/{batch_id}/files",
                summary="List a file batch's files")
    def batch_files(vector_store_id: str, batch_id: str, limit: int = 20,
                    order: str = "desc", after: str | None = None, before: str | None = None,
                    filter: str | None = None, tenant: str = owner) -> dict[str, Any]:
        api.store_row(tenant, vector_store_id)
        batch_row(tenant, vector_store_id, batch_id)
        sql = "SELECT * FROM oai_vs_files WHERE batch_id = ?"
        params: list[Any] = [batch_id]
        if filter is not None:
            sql += " AND status = ?"
            params.append(filter)
        rows = db.rows(sql + " ORDER BY created_at, rowid", params)
        return page([api.file_json(r) for r in rows], limit=limit, order=order, after=after,
                    before=before)

"""Vector stores' request bodies and shared state: the objects as OpenAI shows them,
their file links and batches, and attaching files (jobs of the one job system)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Response
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragloom.server.v1 import chunking, expiry
from ragloom.server.v1.collections import VectorStoreCollections
from ragloom.server.v1.db import MetaDB, dumps
from ragloom.server.v1.delete_jobs import VectorStoreDeletes
from ragloom.server.v1.deps import OpenAIDeps
from ragloom.server.v1.errors import not_found
from ragloom.server.v1.files import get_file
from ragloom.server.v1.ingest import VectorStoreIngestor

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
                 ingestor: VectorStoreIngestor, deletes: VectorStoreDeletes) -> None:
        self.deps = deps
        self.db = db
        self.collections = collections
        self.ingestor = ingestor
        self.deletes = deletes

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
        status = ("expired" if expiry.is_expired(row, self.deps.now()) else
                  "in_progress" if counts["in_progress"] else "completed")
        return {"id": row["id"], "object": "vector_store", "created_at": row["created_at"],
                "name": row["name"], "description": row["description"],
                "usage_bytes": usage, "file_counts": counts, "status": status,
                "expires_after": expires, "expires_at": expiry.expires_at(row),
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
        return {"id": row["id"], "object": "vector_store.files_batch",
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
        created = self.deps.now()
        with self.db.write() as conn:
            for file_id, attrs_json, strategy_json in planned:
                conn.execute(
                    "INSERT INTO oai_vs_files (vs_id, file_id, tenant, status, attributes, "
                    "chunking, created_at, batch_id) VALUES (?, ?, ?, 'in_progress', ?, ?, ?, ?)"
                    " ON CONFLICT (vs_id, file_id) DO UPDATE SET status = 'in_progress', "
                    "attributes = excluded.attributes, chunking = excluded.chunking, "
                    "last_error = NULL, batch_id = excluded.batch_id, "
                    "run = oai_vs_files.run + 1",
                    (vs_id, file_id, tenant, attrs_json, strategy_json, created, batch_id))
            conn.execute("UPDATE oai_vector_stores SET last_active_at = ? WHERE id = ?",
                         (created, vs_id))
        self.ingestor.submit(tenant, [(vs_id, file_id) for file_id, _, _ in planned],
                             batch_id)
        return [file_id for file_id, _, _ in planned]

    def poll_headers(self, response: Response) -> None:
        response.headers["openai-poll-after-ms"] = str(self.deps.poll_after_ms)



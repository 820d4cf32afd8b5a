"""``/v1/files``: upload, list, retrieve, content, delete (per tenant).

Deleting a file also takes it out of every vector store of its tenant (see
:mod:`.purge`). Reading a file's bytes runs in the server's bounded pool, like every
other database read of a size the client decides.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, File, Form, Query, UploadFile
from fastapi.responses import Response

from ragloom.server.v1.common import (
    MAX_LIST_LIMIT,
    envelope,
    new_id,
    now,
    page_rows,
    tenant_id,
)
from ragloom.server.v1.context import CALLER, V1, V1Context
from ragloom.server.v1.db import MetaDB
from ragloom.server.v1.errors import OpenAIError, bad_request, not_found

router = APIRouter()
PURPOSES = ("assistants", "user_data", "batch", "fine-tune", "vision", "evals")


def file_object(row: Any) -> dict[str, Any]:
    return {"id": row["id"], "object": "file", "bytes": row["bytes"],
            "created_at": row["created_at"], "expires_at": row["expires_at"],
            "filename": row["filename"], "purpose": row["purpose"],
            "status": "processed", "status_details": None}


def get_file(db: MetaDB, tenant: str, file_id: str) -> Any:
    row = db.row("SELECT * FROM oai_files WHERE id = ? AND tenant = ? AND "
                 "(expires_at IS NULL OR expires_at > ?)", (file_id, tenant, now()))
    if row is None:
        raise not_found("file", file_id, "file_id")
    return row


def file_bytes(db: MetaDB, file_id: str) -> bytes:
    row = db.row("SELECT data FROM oai_file_data WHERE id = ?", (file_id,))
    return bytes(row["data"]) if row is not None else b""


@router.post("/files", summary="Upload a file")
async def upload(file: UploadFile = File(...), purpose: str = Form(...),
                 expires_after_anchor: str | None = Form(None, alias="expires_after[anchor]"),
                 expires_after_seconds: int | None = Form(
                     None, alias="expires_after[seconds]"),
                 tenant: Any = CALLER, v1: V1Context = V1) -> dict[str, Any]:
    deps, db = v1.deps, v1.db
    if purpose not in PURPOSES:
        raise bad_request(f"purpose must be one of {', '.join(PURPOSES)}", "purpose")
    data = await file.read(deps.max_upload_bytes + 1)
    if len(data) > deps.max_upload_bytes:
        raise OpenAIError(413, f"the file is larger than {deps.max_upload_bytes} bytes",
                          param="file", code="file_too_large")
    created = now()
    expires_at = None
    if expires_after_seconds is not None:
        if expires_after_anchor not in (None, "created_at"):
            raise bad_request("expires_after[anchor] must be 'created_at'",
                              "expires_after.anchor")
        if not 3600 <= expires_after_seconds <= 2_592_000:
            raise bad_request("expires_after[seconds] must be between 3600 and 2592000",
                              "expires_after.seconds")
        expires_at = created + expires_after_seconds
    file_id = new_id("file-")
    name = file.filename or "upload"

    def store() -> None:
        with db.write() as conn:
            conn.execute("INSERT INTO oai_files VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (file_id, tenant_id(tenant), name, purpose, len(data), created,
                          expires_at))
            conn.execute("INSERT INTO oai_file_data VALUES (?, ?)", (file_id, data))

    await deps.cpu(store)
    return file_object({"id": file_id, "bytes": len(data), "created_at": created,
                        "expires_at": expires_at, "filename": name, "purpose": purpose})


@router.get("/files", summary="List files")
def list_files(purpose: str | None = None,
               limit: int = Query(MAX_LIST_LIMIT, description="1 to 1000"),
               order: str = "desc", after: str | None = None,
               tenant: Any = CALLER, v1: V1Context = V1) -> dict[str, Any]:
    db = v1.db
    where = "tenant = ? AND (expires_at IS NULL OR expires_at > ?)"
    params: list[Any] = [tenant_id(tenant), now()]
    if purpose is not None:
        where += " AND purpose = ?"
        params.append(purpose)
    rows, more = page_rows(db, "oai_files", where, params, limit=limit, order=order,
                           after=after, before=None)
    return envelope([file_object(r) for r in rows], more)


@router.get("/files/{file_id}", summary="Retrieve a file")
def retrieve(file_id: str, tenant: Any = CALLER, v1: V1Context = V1) -> dict[str, Any]:
    db = v1.db
    return file_object(get_file(db, tenant_id(tenant), file_id))


@router.get("/files/{file_id}/content", summary="The file's bytes",
            response_class=Response)
async def content(file_id: str, tenant: Any = CALLER, v1: V1Context = V1) -> Response:
    deps, db = v1.deps, v1.db

    def read() -> bytes:
        get_file(db, tenant_id(tenant), file_id)
        return file_bytes(db, file_id)

    return Response(await deps.cpu(read), media_type="application/octet-stream")


@router.delete("/files/{file_id}", summary="Delete a file (and remove it from every "
               "vector store)")
async def delete(file_id: str, tenant: Any = CALLER, v1: V1Context = V1) -> dict[str, Any]:
    deps, db, purger = v1.deps, v1.db, v1.purger

    def run() -> None:
        get_file(db, tenant_id(tenant), file_id)
        purger.delete_file(tenant_id(tenant), file_id)

    await deps.cpu(run)
    return {"id": file_id, "object": "file", "deleted": True}

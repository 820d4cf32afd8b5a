"""``/api/knowledge-bases/{kb}/documents``: upload files, post text or a URL (each an
ingestion job), list, get, delete one, delete by metadata filter."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from fastapi import APIRouter, Depends, File, Form, Query, UploadFile

from ragloom.errors import FilterError
from ragloom.filters import evaluate, parse_filters
from ragloom.server.auth import Tenant, current_tenant
from ragloom.server.errors import ApiError, bad_request, not_found
from ragloom.server.jobs import Job, JobRequest
from ragloom.server.native.jobs import batch_out
from ragloom.server.native.schemas import (
    BatchOut,
    DeleteByFilter,
    Deleted,
    DeletedDocuments,
    DocumentList,
    DocumentOut,
    JobOut,
    TextDocumentIn,
    UrlDocumentIn,
)
from ragloom.server.state import ServerState, get_state
from ragloom.types import text_hash

router = APIRouter(tags=["documents"])
MAX_FILES = 1000
WaitQuery = Query(0.0, ge=0.0, le=300.0,
                  description="seconds to wait for the job to end before answering")


def _metadata(raw: str | None) -> dict[str, Any]:
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise bad_request(f"metadata is not valid JSON: {exc.msg}", "metadata") from exc
    if not isinstance(value, dict):
        raise bad_request("metadata must be a JSON object", "metadata")
    return value


async def _wait(state: ServerState, tenant: Tenant, job: Job, seconds: float) -> Job:
    deadline = time.monotonic() + seconds
    while job.status == "in_progress" and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        job = await state.run_cpu(state.jobs.get, tenant, job.id)
    return job


def document_out(stored: Any) -> dict[str, Any]:
    return {"id": stored.id, "object": "document", "source": stored.source,
            "content_hash": stored.content_hash, "chunk_count": stored.chunk_count,
            "metadata": dict(stored.metadata)}


@router.post("/knowledge-bases/{kb}/documents", response_model=BatchOut, status_code=202)
async def upload_documents(
    kb: str,
    files: list[UploadFile] = File(..., description="one or more files"),
    metadata: str | None = Form(None, description="JSON object added to every document"),
    tenant: Tenant = Depends(current_tenant), state: ServerState = Depends(get_state),
) -> dict[str, Any]:
    """Upload files as one batch; returns at once with status in_progress."""
    record = await state.run_cpu(state.catalog.get, tenant, kb)
    extra = _metadata(metadata)
    if len(files) > MAX_FILES:
        raise bad_request(f"at most {MAX_FILES} files per upload", "files")
    limit = state.settings.max_upload_bytes
    requests = []
    total = 0
    for upload in files:
        data = await upload.read()
        total += len(data)
        if total > limit:
            raise ApiError(413, f"the upload is larger than the limit of {limit} bytes",
                           code="request_too_large")
        name = upload.filename or f"upload-{text_hash(data.hex())[:12]}"
        requests.append(JobRequest(kind="file", source=name, file_name=name, data=data,
                                   mime_type=upload.content_type, metadata=extra))
    jobs = await state.run_cpu(lambda: state.jobs.submit(tenant, record, requests, batch=True))
    return batch_out(jobs[0].batch_id or "", jobs)


@router.post("/knowledge-bases/{kb}/documents/text", response_model=JobOut, status_code=202)
async def add_text(kb: str, body: TextDocumentIn, wait: float = WaitQuery,
                   tenant: Tenant = Depends(current_tenant),
                   state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """Add a text document (an ingestion job)."""
    record = await state.run_cpu(state.catalog.get, tenant, kb)
    source = body.source or f"text:{text_hash(body.text)[:16]}"
    request = JobRequest(kind="text", source=source, text=body.text,
                         metadata=body.metadata or {})
    jobs = await state.run_cpu(lambda: state.jobs.submit(tenant, record, [request]))
    return (await _wait(state, tenant, jobs[0], wait)).to_dict()


@router.post("/knowledge-bases/{kb}/documents/url", response_model=JobOut, status_code=202)
async def add_url(kb: str, body: UrlDocumentIn, wait: float = WaitQuery,
                  tenant: Tenant = Depends(current_tenant),
                  state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """Fetch a web page or file (public addresses only) and add it (an ingestion job)."""
    if not body.url.startswith(("http://", "https://")):
        raise bad_request("only http and https URLs are loaded", "url")
    record = await state.run_cpu(state.catalog.get, tenant, kb)
    request = JobRequest(kind="url", source=body.url, url=body.url,
                         metadata=body.metadata or {})
    jobs = await state.run_cpu(lambda: state.jobs.submit(tenant, record, [request]))
    return (await _wait(state, tenant, jobs[0], wait)).to_dict()


@router.get("/knowledge-bases/{kb}/documents", response_model=DocumentList)
async def list_documents(kb: str, limit: int = Query(1000, ge=1, le=1000),
                         after: str | None = Query(None, max_length=4096),
                         tenant: Tenant = Depends(current_tenant),
                         state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """The knowledge base's documents by source, a page at a time: the first ``limit``
    whose source sorts after ``after`` (send the page's ``last`` to get the next one;
    ``has_more`` says whether there is one)."""
    def work() -> dict[str, Any]:
        base = state.catalog.open(state.catalog.get(tenant, kb))
        found = first_documents(base.index, limit + 1, after)
        page = [document_out(d) for d in found[:limit]]
        return {"object": "list", "data": page, "has_more": len(found) > limit,
                "last": page[-1]["source"] if page else None}

    return await state.run_cpu(work)


def first_documents(index: Any, limit: int, after: str | None = None) -> list[Any]:
    """The first ``limit`` documents by source after ``after``: read with SQL by a store
    that pages (SQLite), else sorted and sliced."""
    import inspect

    lister = index.list_documents
    if "after" in inspect.signature(lister).parameters:
        return list(lister(limit=limit, after=after))
    documents = sorted(lister(), key=lambda d: d.source)
    if after is not None:
        documents = [d for d in documents if d.source > after]
    return documents[:limit]


def _find(state: ServerState, tenant: Tenant, kb: str, document_id: str) -> tuple[Any, Any]:
    base = state.catalog.open(state.catalog.get(tenant, kb))
    for stored in base.index.list_documents():
        if stored.id == document_id:
            return base, stored
    raise not_found("document", document_id)


@router.get("/knowledge-bases/{kb}/documents/{document_id}", response_model=DocumentOut)
async def get_document(kb: str, document_id: str, tenant: Tenant = Depends(current_tenant),
                       state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """One document's record: source, hash, chunk count, metadata."""
    _, stored = await state.run_cpu(_find, state, tenant, kb, document_id)
    return document_out(stored)


@router.delete("/knowledge-bases/{kb}/documents/{document_id}", response_model=Deleted)
async def delete_document(kb: str, document_id: str, tenant: Tenant = Depends(current_tenant),
                          state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """Delete one document and its chunks."""
    def work() -> None:
        base, stored = _find(state, tenant, kb, document_id)
        try:
            base.delete([stored.id])
        finally:
            state.caches.changed(base.store)

    await state.run_cpu(work)
    return {"id": document_id, "object": "document.deleted", "deleted": True}


@router.post("/knowledge-bases/{kb}/documents/delete", response_model=DeletedDocuments)
async def delete_documents_by_filter(kb: str, body: DeleteByFilter,
                                     tenant: Tenant = Depends(current_tenant),
                                     state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """Delete every document whose metadata matches a filter."""
    try:
        filters = parse_filters(body.filters)
    except FilterError as exc:
        raise bad_request(str(exc), "filters") from exc

    def work() -> list[str]:
        base = state.catalog.open(state.catalog.get(tenant, kb))
        ids = [d.id for d in base.index.list_documents() if evaluate(filters, d.metadata)]
        if ids:
            try:
                base.delete(ids)
            finally:
                state.caches.changed(base.store)
        return ids

    ids = await state.run_cpu(work)
    return {"object": "documents.deleted", "deleted": len(ids), "document_ids": ids}

"""``/api/jobs`` and ``/api/batches``: ingestion status."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query

from ragloom.server.auth import Tenant, current_tenant
from ragloom.server.jobs import Job
from ragloom.server.native.schemas import BatchOut, JobList, JobOut
from ragloom.server.state import ServerState, get_state

router = APIRouter(tags=["ingestion jobs"])


def batch_out(batch_id: str, jobs: list[Job]) -> dict[str, Any]:
    counts = {status: sum(1 for j in jobs if j.status == status)
              for status in ("in_progress", "completed", "failed", "cancelled")}
    if counts["in_progress"]:
        status = "in_progress"
    elif counts["cancelled"]:
        status = "cancelled"
    elif counts["failed"] == len(jobs):
        status = "failed"
    else:
        status = "completed"
    return {"id": batch_id, "object": "ingestion_batch", "status": status,
            "file_counts": {**counts, "total": len(jobs)}, "jobs": [j.to_dict() for j in jobs]}


@router.get("/jobs/{job_id}", response_model=JobOut)
async def get_job(job_id: str, tenant: Tenant = Depends(current_tenant),
                  state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """One ingestion job: in_progress, then completed or failed with a reason."""
    job = await state.run_cpu(state.jobs.get, tenant, job_id)
    return job.to_dict()


@router.get("/jobs", response_model=JobList)
async def list_jobs(
    status: Literal["in_progress", "completed", "failed", "cancelled"] | None = None,
    limit: int = Query(100, ge=1, le=1000),
    tenant: Tenant = Depends(current_tenant), state: ServerState = Depends(get_state),
) -> dict[str, Any]:
    """The caller's latest jobs, newest first."""
    jobs = await state.run_cpu(lambda: state.jobs.list_jobs(tenant, status=status, limit=limit))
    return {"object": "list", "data": [j.to_dict() for j in jobs]}


@router.get("/batches/{batch_id}", response_model=BatchOut)
async def get_batch(batch_id: str, tenant: Tenant = Depends(current_tenant),
                    state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """A batch upload: its status is in_progress until every file's job has ended."""
    jobs = await state.run_cpu(state.jobs.batch, tenant, batch_id)
    return batch_out(batch_id, jobs)

"""Wiring the OpenAI-compatible package's ``Deps`` from the server's state.

That package declares what it needs as a small dataclass; each field is filled from
the callables below, by name. A field this module cannot fill stops the mount with
a log line naming it, instead of failing at the first request.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from ragloom.server.auth import Tenant, current_tenant
from ragloom.server.catalog import KbRecord
from ragloom.server.jobs import Job, JobRequest
from ragloom.server.state import ServerState

log = logging.getLogger("ragloom.server")


def providers(state: ServerState) -> dict[str, Any]:
    """Everything the server offers to other routers, by the names they may use."""

    def create_knowledge_base(tenant: Tenant, name: str | None = None, *,
                              embedder: str | None = None, chunking: dict[str, Any] | None = None,
                              metadata: dict[str, Any] | None = None) -> KbRecord:
        return state.catalog.create(tenant, name, embedder=embedder, chunking=chunking,
                                    metadata=metadata)

    def get_knowledge_base(tenant: Tenant, ident: str) -> KbRecord:
        return state.catalog.get(tenant, ident)

    def open_knowledge_base(record: KbRecord) -> Any:
        return state.catalog.open(record)

    def submit_job(tenant: Tenant, record: KbRecord, requests: list[JobRequest],
                   batch: bool = False) -> list[Job]:
        return state.jobs.submit(tenant, record, requests, batch=batch)

    def get_job(tenant: Tenant, job_id: str) -> Job:
        return state.jobs.get(tenant, job_id)

    values: dict[str, Any] = {
        "current_tenant": current_tenant, "tenant_dependency": current_tenant,
        "create_knowledge_base": create_knowledge_base,
        "get_knowledge_base": get_knowledge_base,
        "open_knowledge_base": open_knowledge_base,
        "delete_knowledge_base": state.catalog.delete,
        "list_knowledge_bases": state.catalog.list,
        "embedder": state.models.embedder, "get_embedder": state.models.embedder,
        "model": state.models.model, "get_model": state.models.model,
        "submit_job": submit_job, "get_job": get_job,
        "db_path": state.settings.server_db, "server_db": state.settings.server_db,
        "database_path": state.settings.server_db, "files_dir": state.settings.files_dir,
        "run_cpu": state.run_cpu, "run_model": state.run_model, "state": state,
        "settings": state.settings, "max_upload_bytes": state.settings.max_upload_bytes,
    }
    return values


def build_deps(deps_class: Any, state: ServerState) -> Any:
    if not dataclasses.is_dataclass(deps_class):
        log.warning("the v1 package's Deps is not a dataclass; /v1 is not mounted")
        return None
    offered = providers(state)
    kwargs = {}
    for item in dataclasses.fields(deps_class):
        if item.name in offered:
            kwargs[item.name] = offered[item.name]
        elif (item.default is dataclasses.MISSING
              and item.default_factory is dataclasses.MISSING):
            log.warning("cannot provide %r to the OpenAI-compatible routes; /v1 is not "
                        "mounted", item.name)
            return None
    return deps_class(**kwargs)  # type: ignore[operator]

"""``/mcp`` inside ``ragloom serve``: the MCP tools over the caller's tenant.

:func:`mount_mcp` adds the route (when the ``mcp`` extra is installed) in front of the
app's others, behind :mod:`ragloom.mcp.auth`, and runs the SDK's session manager for
as long as the app's lifespan. Each tool call sees only its tenant's knowledge bases
(:class:`ServerBackend`, through the server's catalog, models and chat sessions).
The server's ``/mcp`` offers the read tools; ``ingest_text`` and ``delete_document``
are ``ragloom mcp --allow-writes`` only (tenants write through ``/api``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from ragloom.errors import MissingDependencyError
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.mcp.tools import KnowledgeBaseInfo, ToolArgumentError
from ragloom.protocols import ModelProvider
from ragloom.rag import RagAnswer
from ragloom.server.auth import Tenant
from ragloom.server.errors import ApiError
from ragloom.server.state import ServerState
from ragloom.types import ChatMessage

PATH = "/mcp"


class ServerBackend:
    """One tenant's knowledge bases, model and chat sessions in a running server."""

    def __init__(self, state: ServerState, tenant: Tenant) -> None:
        self.state = state
        self.tenant = tenant

    def list_knowledge_bases(self) -> list[KnowledgeBaseInfo]:
        infos = []
        for record in self.state.catalog.list(self.tenant):
            documents, chunks = self.state.catalog.counts(record)
            infos.append(KnowledgeBaseInfo(name=record.name, documents=documents,
                                           chunks=chunks, embedder=record.embedder))
        return infos

    def knowledge_base(self, name: str | None, *, create: bool = False) -> VectorKnowledgeBase:
        catalog = self.state.catalog
        if name is None:
            records = catalog.list(self.tenant)
            if len(records) == 1 and not create:
                return catalog.open(records[0])
            if not create:
                known = ", ".join(r.name for r in records) or "none yet"
                raise ToolArgumentError("knowledge_base", "name one of this key's knowledge "
                                        f"bases: {known}")
            name = "default"
        record = catalog.find(self.tenant, name)
        if record is None:
            if not create:
                known = ", ".join(r.name for r in catalog.list(self.tenant)) or "none yet"
                raise ToolArgumentError("knowledge_base", f"no knowledge base named {name!r} "
                                        f"(knowledge bases: {known})")
            try:
                record = catalog.create(self.tenant, name)
            except ApiError as exc:
                raise ToolArgumentError("knowledge_base", exc.message) from exc
        return catalog.open(record)

    def model(self) -> ModelProvider | None:
        return self.state.models.model()

    def _session(self, name: str, knowledge_base: str | None = None) -> Any:
        sessions = self.state.sessions
        for session in sessions.list_sessions(self.tenant):
            if name in (session.id, session.title):
                return session
        if knowledge_base is None:
            return None
        return sessions.create(self.tenant, [knowledge_base], title=name)

    def history(self, session: str) -> list[ChatMessage]:
        found = self._session(session)
        return [] if found is None else list(self.state.sessions.history(found))

    def remember(self, session: str, knowledge_base: str, answer: RagAnswer) -> None:
        found = self._session(session, knowledge_base)
        self.state.sessions.append(found, answer.question, answer.answer,
                                   {"citations": list(answer.citations)})


def mount_mcp(app: Any, state: ServerState) -> bool:
    """Serve the MCP tools at ``/mcp`` on ``app``; False when the extra is missing."""
    from ragloom.mcp.server import require_mcp

    try:
        require_mcp("/mcp in ragloom serve")
    except MissingDependencyError:
        return False
    from mcp.server.auth.middleware.auth_context import AuthContextMiddleware, get_access_token
    from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
    from starlette.middleware.authentication import AuthenticationMiddleware
    from starlette.routing import Route

    from ragloom.mcp.auth import ApiKeyVerifier, TenantAuthBackend, on_auth_error, tenant_of
    from ragloom.mcp.server import build_server

    server = build_server(lambda: ServerBackend(state, tenant_of(get_access_token())),
                          run_cpu=state.run_cpu, run_model=state.run_model)
    # Builds the session manager; its own Starlette app is not used: the route below
    # goes into ragloom's app, behind ragloom's keys. On a loopback address the SDK's
    # DNS-rebinding protection accepts only loopback Host and Origin headers.
    server.streamable_http_app(streamable_http_path=PATH, host=state.settings.host)
    manager = server.session_manager
    endpoint = AuthenticationMiddleware(
        AuthContextMiddleware(RequireAuthMiddleware(StreamableHTTPASGIApp(manager), [])),
        backend=TenantAuthBackend(ApiKeyVerifier(state.auth)), on_error=on_auth_error)
    app.router.routes.insert(0, Route(PATH, endpoint=endpoint, include_in_schema=False))
    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with outer(application) as value, manager.run():
            yield value

    app.router.lifespan_context = lifespan
    return True

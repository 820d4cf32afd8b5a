"""The MCP server (the official ``mcp`` SDK, 2.x) over the tools of
:mod:`ragloom.mcp.tools`.

``build_server(backend)`` registers ``search``, ``ask``, ``list_knowledge_bases`` and,
with ``allow_writes``, ``ingest_text`` and ``delete_document``, plus the resource
``ragloom://knowledge-bases``. ``backend`` is called once per tool call, inside the
request: ``ragloom mcp`` returns its one local backend, ``ragloom serve`` the
knowledge bases of the caller's tenant. A ragloom error (a bad argument, an unknown
knowledge base, a model that failed) becomes an error result whose text says what
was wrong; anything else is the SDK's opaque "Error executing tool" (and is logged).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeVar

from pydantic import Field

from ragloom._optional import require
from ragloom.errors import RagError
from ragloom.mcp import tools
from ragloom.mcp.tools import DEFAULT_SEARCH_TOP_K, MAX_TOP_K, MODES, Backend

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

P = ParamSpec("P")
R = TypeVar("R")
Runner = Callable[..., Awaitable[Any]]
"""``await run(function, *args)``: blocking work off the event loop."""

KNOWLEDGE_BASES_URI = "ragloom://knowledge-bases"
INSTRUCTIONS = (
    "Search and question the user's documents. Read the resource ragloom://knowledge-bases "
    "(or call list_knowledge_bases) to see which knowledge bases exist, then call search "
    "for passages or ask for an answer with numbered citations.")

KnowledgeBaseArg = Annotated[str | None, Field(
    description="Knowledge base name (see list_knowledge_bases); default: the server's "
    "default knowledge base")]


def require_mcp(purpose: str = "ragloom mcp") -> None:
    """Raise MissingDependencyError naming ``pip install 'ragloom[mcp]'`` without the SDK."""
    require("mcp.server.mcpserver", package="mcp", extra="mcp", purpose=purpose)


def _reported(function: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Ragloom's errors as the tool's error text (the SDK marks the result is_error)."""
    from mcp.server.mcpserver.exceptions import ToolError

    @wraps(function)
    async def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await function(*args, **kwargs)
        except RagError as exc:
            raise ToolError(str(exc)) from exc
    return run


async def in_thread(function: Callable[..., Any], *args: Any) -> Any:
    import anyio.to_thread

    return await anyio.to_thread.run_sync(function, *args)


def build_server(backend: Callable[[], Backend], *, allow_writes: bool = False,
                 name: str = "ragloom", run_cpu: Runner = in_thread,
                 run_model: Runner = in_thread) -> MCPServer[Any]:
    """An MCPServer with ragloom's tools over ``backend()`` (called in the request, on
    the event loop); builds nothing heavy. Searches and listings run through
    ``run_cpu``, answers through ``run_model`` (a server passes its bounded pools)."""
    require_mcp()
    from mcp.server.mcpserver import MCPServer
    from mcp_types import ToolAnnotations

    # MCPServer() calls logging.basicConfig: the process's logging stays the caller's.
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    server: MCPServer[Any] = MCPServer(name, instructions=INSTRUCTIONS, version=_version())
    root.handlers[:], root.level = handlers, level
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(annotations=read_only)
    @_reported
    async def search(
        query: Annotated[str, Field(description="What to look for.")],
        knowledge_base: KnowledgeBaseArg = None,
        top_k: Annotated[int, Field(
            description=f"How many passages to return (1 to {MAX_TOP_K}).",
            json_schema_extra={"minimum": 1, "maximum": MAX_TOP_K})] = DEFAULT_SEARCH_TOP_K,
        mode: Annotated[str, Field(
            description="vector (meaning), keyword (BM25 words) or hybrid (both).",
            json_schema_extra={"enum": list(MODES)})] = "hybrid",
        filters: Annotated[str | dict[str, Any] | None, Field(
            description='Metadata filter in ragloom\'s filter JSON, e.g. '
            '{"key": "year", "op": ">=", "value": 2020} or {"file_name": "faq.md"}; '
            "operators == != > < >= <= in nin, combined with and / or.")] = None,
    ) -> dict[str, Any]:
        """Retrieve passages from a knowledge base, best first, each with its source,
        location (file, page or row where known), score and text. No language model."""
        result: dict[str, Any] = await run_cpu(tools.search, backend(), query, knowledge_base,
                                               top_k, mode, filters)
        return result

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False))
    @_reported
    async def ask(
        question: Annotated[str, Field(description="The question to answer.")],
        knowledge_base: KnowledgeBaseArg = None,
        session: Annotated[str | None, Field(
            description="Chat session name: keeps the conversation so a follow-up "
            "question is understood.")] = None,
    ) -> dict[str, Any]:
        """Answer a question from a knowledge base: the answer cites its sources as [n],
        with the quote that supports it and the passages it was given."""
        result: dict[str, Any] = await run_model(tools.ask, backend(), question,
                                                 knowledge_base, session)
        return result

    @server.tool(annotations=read_only)
    @_reported
    async def list_knowledge_bases() -> dict[str, Any]:
        """The knowledge bases you may search, with their document and chunk counts."""
        result: dict[str, Any] = await run_cpu(tools.list_knowledge_bases, backend())
        return result

    @server.resource(KNOWLEDGE_BASES_URI, name="knowledge-bases",
                     title="Knowledge bases", mime_type="application/json",
                     description="The knowledge bases, with document and chunk counts.")
    async def knowledge_bases() -> str:
        from mcp.server.mcpserver.exceptions import ResourceError

        try:
            return json.dumps(await run_cpu(tools.list_knowledge_bases, backend()))
        except RagError as exc:
            raise ResourceError(str(exc)) from exc

    if allow_writes:
        _add_write_tools(server, backend, run_cpu)
    return server


def _add_write_tools(server: MCPServer[Any], backend: Callable[[], Backend],
                     run_cpu: Runner) -> None:
    from mcp_types import ToolAnnotations

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True))
    @_reported
    async def ingest_text(
        text: Annotated[str, Field(description="The document's text.")],
        knowledge_base: KnowledgeBaseArg = None,
        source: Annotated[str | None, Field(
            description="A name for the document (a later one with the same source "
            "replaces it).")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(
            description="Metadata to store with it (a JSON object).")] = None,
    ) -> dict[str, Any]:
        """Add a text document to a knowledge base (created if it does not exist)."""
        result: dict[str, Any] = await run_cpu(tools.ingest_text, backend(), text,
                                               knowledge_base, source, metadata)
        return result

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=True))
    @_reported
    async def delete_document(
        document_id: Annotated[str, Field(
            description="The document's id (document_id in search results) or its source.")],
        knowledge_base: KnowledgeBaseArg = None,
    ) -> dict[str, Any]:
        """Remove a document and its passages from a knowledge base."""
        result: dict[str, Any] = await run_cpu(tools.delete_document, backend(), document_id,
                                               knowledge_base)
        return result


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ragloom")
    except PackageNotFoundError:
        return "0"

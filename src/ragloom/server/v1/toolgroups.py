"""Llama Stack's tool groups and tool runtime: ``builtin::rag`` and its
``knowledge_search`` tool.

* ``GET /v1/toolgroups`` and ``/v1/toolgroups/{id}``: the one group, ``builtin::rag``.
* ``GET /v1/tools`` (``toolgroup_id``), ``/v1/tools/{name}``,
  ``GET /v1/tool-runtime/list-tools`` (``tool_group_id``): its tool.
* ``POST /v1/tool-runtime/invoke``: ``tool_name`` ``knowledge_search`` with ``kwargs``
  ``query``, ``vector_db_ids`` and optional ``query_config`` (as the RAG tool's query):
  the same search, tenant and answer shape as ``/v1/tool-runtime/rag-tool/query``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, ValidationError

from ragloom.server.v1.context import TENANT, V1, V1Context
from ragloom.server.v1.errors import bad_request, not_found
from ragloom.server.v1.spec import QueryConfig, knowledge_search

RAG_GROUP = "builtin::rag"
KNOWLEDGE_SEARCH = "knowledge_search"
PROVIDER = "rag-runtime"
DESCRIPTION = ("Search the knowledge base for passages relevant to the input query; use "
               "it to answer questions about the documents.")
PARAMETERS = [{"name": "query", "parameter_type": "string", "required": True,
               "description": "The query to search for; any natural language query.",
               "default": None}]


class ToolInvoke(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool_name: str
    kwargs: dict[str, Any] = {}


def tool_group() -> dict[str, Any]:
    return {"identifier": RAG_GROUP, "provider_id": PROVIDER, "provider_resource_id":
            RAG_GROUP, "type": "tool_group", "args": None, "mcp_endpoint": None}


def tool() -> dict[str, Any]:
    return {"identifier": KNOWLEDGE_SEARCH, "provider_id": PROVIDER,
            "provider_resource_id": KNOWLEDGE_SEARCH, "toolgroup_id": RAG_GROUP,
            "type": "tool", "description": DESCRIPTION, "parameters": PARAMETERS,
            "metadata": None}


def tool_def() -> dict[str, Any]:
    return {"name": KNOWLEDGE_SEARCH, "description": DESCRIPTION, "parameters": PARAMETERS,
            "metadata": None}


def check_group(toolgroup_id: str | None, param: str) -> None:
    """``builtin::rag`` or ``builtin::rag/knowledge_search`` (or nothing); else a 404."""
    if toolgroup_id in (None, RAG_GROUP, f"{RAG_GROUP}/{KNOWLEDGE_SEARCH}"):
        return
    raise not_found("tool group", str(toolgroup_id), param)


def rag_arguments(kwargs: dict[str, Any], param: str) -> tuple[Any, list[str], QueryConfig]:
    """The query, vector db ids and query config of a ``knowledge_search`` call."""
    query = kwargs.get("query")
    if query in (None, "", []):
        raise bad_request("knowledge_search needs a query", f"{param}.query")
    ids = kwargs.get("vector_db_ids") or kwargs.get("vector_store_ids")
    if isinstance(ids, str):
        ids = [ids]
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise bad_request("knowledge_search needs vector_db_ids: a list of vector db ids",
                          f"{param}.vector_db_ids")
    try:
        config = QueryConfig.model_validate(kwargs.get("query_config") or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise bad_request(f"query_config.{where}: {first.get('msg')}",
                          f"{param}.query_config.{where}") from exc
    return query, ids, config


router = APIRouter()


@router.get("/toolgroups", summary="List tool groups (Llama Stack)")
async def list_groups(tenant: str = TENANT) -> dict[str, Any]:
    return {"data": [tool_group()]}


@router.get("/toolgroups/{toolgroup_id:path}", summary="A tool group")
async def get_group(toolgroup_id: str, tenant: str = TENANT) -> dict[str, Any]:
    if toolgroup_id != RAG_GROUP:
        raise not_found("tool group", toolgroup_id, "toolgroup_id")
    return tool_group()


@router.get("/tools", summary="List tools (Llama Stack)")
async def list_tools(toolgroup_id: str | None = None,
                     tenant: str = TENANT) -> dict[str, Any]:
    check_group(toolgroup_id, "toolgroup_id")
    return {"data": [tool()]}


@router.get("/tools/{tool_name}", summary="A tool")
async def get_tool(tool_name: str, tenant: str = TENANT) -> dict[str, Any]:
    if tool_name != KNOWLEDGE_SEARCH:
        raise not_found("tool", tool_name, "tool_name")
    return tool()


@router.get("/tool-runtime/list-tools", summary="List the runtime's tools")
async def runtime_tools(tool_group_id: str | None = None,
                        tenant: str = TENANT) -> dict[str, Any]:
    check_group(tool_group_id, "tool_group_id")
    return {"data": [tool_def()]}


@router.post("/tool-runtime/invoke", summary="Run a tool (knowledge_search)")
async def invoke(body: ToolInvoke, tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, knowledge = v1.deps, v1.knowledge
    if body.tool_name != KNOWLEDGE_SEARCH:
        raise not_found("tool", body.tool_name, "tool_name")
    query, ids, config = rag_arguments(body.kwargs, "kwargs")
    result: dict[str, Any] = await deps.cpu(knowledge_search, deps, knowledge, tenant,
                                            query, ids, config)
    return {**result, "error_code": None, "error_message": None}

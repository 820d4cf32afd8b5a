"""Llama Stack 0.2's agents API: agents, their sessions and turns.

* ``POST /v1/agents`` (``agent_config``) -> ``{"agent_id"}``; ``GET /v1/agents``,
  ``GET`` / ``DELETE /v1/agents/{agent_id}``.
* ``POST /v1/agents/{agent_id}/session`` (``session_name``) -> ``{"session_id"}``;
  ``GET /v1/agents/{agent_id}/sessions``; ``GET`` / ``DELETE`` a session (with turns).
* ``POST /v1/agents/{agent_id}/session/{session_id}/turn`` (``messages``, ``stream``,
  ``toolgroups``): the turn, streamed as the 0.2 client's events or whole (see
  :mod:`.agent_turns`); ``GET`` a turn and one of its steps.

An agent's tools are the ``builtin::rag`` tool group, with ``args`` ``vector_db_ids``
and ``query_config`` (``max_chunks``, ``mode``, ``ranker``, ``max_tokens_in_context``,
``chunk_template``, ``query_generator_config``); tools run on the server, so client
tools and other tool groups are refused when the agent is created. Everything belongs
to the caller's tenant.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from ragloom.server.v1.agent_turns import TURN, rag_args
from ragloom.server.v1.common import SSE_HEADERS, new_id
from ragloom.server.v1.context import TENANT, V1, V1Context
from ragloom.server.v1.errors import OpenAIError, bad_request, not_found
from ragloom.server.v1.llama_context import iso_now
from ragloom.server.v1.llama_objects import LlamaObjects
from ragloom.server.v1.spec import search_options
from ragloom.server.v1.toolgroups import rag_arguments

AGENT, SESSION = "agent", "session"


class AgentConfig(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str
    instructions: str
    toolgroups: list[str | dict[str, Any]] = []
    client_tools: list[dict[str, Any]] = []
    max_infer_iters: int = Field(10, ge=1, le=100)
    sampling_params: dict[str, Any] | None = None
    input_shields: list[str] = []
    output_shields: list[str] = []


class AgentCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    agent_config: AgentConfig


class SessionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_name: str = Field(min_length=1, max_length=500)


class TurnCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool = False
    documents: list[dict[str, Any]] | None = None
    toolgroups: list[str | dict[str, Any]] | None = None
    tool_config: dict[str, Any] | None = None


def check_config(config: AgentConfig, model_name: str | None, param: str) -> None:
    if model_name is None:
        raise bad_request("this server has no language model; start it with one",
                          f"{param}.model", code="model_not_available")
    if config.model != model_name:
        raise OpenAIError(404, f"The model '{config.model}' does not exist; this server "
                          f"serves '{model_name}'.", param=f"{param}.model",
                          code="model_not_found")
    if config.client_tools:
        raise bad_request("client tools are not supported; use the builtin::rag tool group",
                          f"{param}.client_tools", code="unsupported_value")
    if config.input_shields or config.output_shields:
        raise bad_request("shields are not supported", f"{param}.input_shields",
                          code="unsupported_value")
    check_toolgroups(config.toolgroups, f"{param}.toolgroups")


def check_toolgroups(toolgroups: list[str | dict[str, Any]], param: str) -> None:
    for index, group in enumerate(toolgroups):
        name = group if isinstance(group, str) else group.get("name")
        if str(name).split("/")[0] != "builtin::rag":
            raise bad_request(f"tool group {name!r} is not supported; only builtin::rag is",
                              f"{param}[{index}]", code="unsupported_value")
    args = rag_args(list(toolgroups))
    if args:  # a string builtin::rag gets its vector dbs from the turn's toolgroups
        config = rag_arguments({"query": "check", **args}, f"{param}.args")[2]
        search_options(config.model_dump(), f"{param}.args.query_config")


router = APIRouter()


def agent_of(objects: LlamaObjects, tenant: str, agent_id: str) -> dict[str, Any]:
    return objects.get(AGENT, tenant, agent_id, "agent_id")


def session_of(objects: LlamaObjects, tenant: str, agent_id: str, session_id: str
               ) -> dict[str, Any]:
    agent_of(objects, tenant, agent_id)
    session = objects.get(SESSION, tenant, session_id, "session_id")
    if session["agent_id"] != agent_id:
        raise not_found(SESSION, session_id, "session_id")
    return session


@router.post("/agents", summary="Create an agent (Llama Stack 0.2)")
async def create_agent(body: AgentCreate,
                       tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, objects = v1.deps, v1.llama.objects
    model_name = deps.model.name if deps.model is not None else None
    check_config(body.agent_config, model_name, "agent_config")
    agent_id = new_id("agent_")
    record = {"agent_id": agent_id, "created_at": iso_now(),
              "agent_config": body.agent_config.model_dump(exclude_none=True)}
    await deps.cpu(objects.put, AGENT, tenant, agent_id, record)
    return {"agent_id": agent_id}


@router.get("/agents", summary="List agents")
async def list_agents(tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, objects = v1.deps, v1.llama.objects
    return {"data": await deps.cpu(objects.children, AGENT, tenant), "has_more": False}


@router.get("/agents/{agent_id}", summary="An agent")
async def get_agent(agent_id: str, tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, objects = v1.deps, v1.llama.objects
    return await deps.cpu(agent_of, objects, tenant, agent_id)


@router.delete("/agents/{agent_id}", summary="Delete an agent and its sessions",
               response_model=None)
async def delete_agent(agent_id: str, tenant: str = TENANT, v1: V1Context = V1) -> None:
    deps, objects = v1.deps, v1.llama.objects

    def run() -> None:
        agent_of(objects, tenant, agent_id)
        for session in objects.children(SESSION, tenant, agent_id):
            objects.delete_children(TURN, tenant, session["session_id"])
        objects.delete_children(SESSION, tenant, agent_id)
        objects.delete(AGENT, tenant, agent_id)

    await deps.cpu(run)


@router.post("/agents/{agent_id}/session", summary="Create a session")
async def create_session(agent_id: str, body: SessionCreate,
                         tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, objects = v1.deps, v1.llama.objects

    def run() -> dict[str, Any]:
        agent_of(objects, tenant, agent_id)
        session_id = new_id("sess_")
        objects.put(SESSION, tenant, session_id, {
            "session_id": session_id, "session_name": body.session_name,
            "agent_id": agent_id, "started_at": iso_now()}, parent=agent_id)
        return {"session_id": session_id}

    return await deps.cpu(run)


def session_json(objects: LlamaObjects, tenant: str, agent_id: str, session_id: str
                 ) -> dict[str, Any]:
    session = session_of(objects, tenant, agent_id, session_id)
    return {"session_id": session_id, "session_name": session["session_name"],
            "started_at": session["started_at"],
            "turns": objects.children(TURN, tenant, session_id)}


@router.get("/agents/{agent_id}/sessions", summary="List an agent's sessions")
async def list_sessions(agent_id: str, tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, objects = v1.deps, v1.llama.objects

    def run() -> dict[str, Any]:
        agent_of(objects, tenant, agent_id)
        sessions = objects.children(SESSION, tenant, agent_id)
        return {"data": [session_json(objects, tenant, agent_id, s["session_id"])
                         for s in sessions], "has_more": False}

    return await deps.cpu(run)


@router.get("/agents/{agent_id}/session/{session_id}", summary="A session and its turns")
async def get_session(agent_id: str, session_id: str,
                      tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, objects = v1.deps, v1.llama.objects
    return await deps.cpu(session_json, objects, tenant, agent_id, session_id)


@router.delete("/agents/{agent_id}/session/{session_id}", summary="Delete a session",
               response_model=None)
async def delete_session(agent_id: str, session_id: str,
                         tenant: str = TENANT, v1: V1Context = V1) -> None:
    deps, objects = v1.deps, v1.llama.objects

    def run() -> None:
        session_of(objects, tenant, agent_id, session_id)
        objects.delete_children(TURN, tenant, session_id)
        objects.delete(SESSION, tenant, session_id)

    await deps.cpu(run)


@router.post("/agents/{agent_id}/session/{session_id}/turn",
             summary="Create a turn (streamed or whole)", response_model=None)
async def create_turn(agent_id: str, session_id: str, body: TurnCreate,
                      tenant: str = TENANT, v1: V1Context = V1) -> Any:
    deps, objects, turns = v1.deps, v1.llama.objects, v1.turns
    if body.documents:
        raise bad_request("documents on a turn are not supported; insert them with the "
                          "RAG tool first", "documents", code="unsupported_parameter")
    for index, message in enumerate(body.messages):
        if message.get("role") not in ("user", "tool"):
            raise bad_request("messages must be user (or tool) messages",
                              f"messages[{index}].role")
    toolgroups = body.toolgroups or []
    check_toolgroups(toolgroups, "toolgroups")

    def prepare() -> Any:
        session_of(objects, tenant, agent_id, session_id)
        agent = agent_of(objects, tenant, agent_id)
        return turns.plan(tenant, agent, session_id, body.messages, toolgroups)

    plan = await deps.cpu(prepare)
    if not body.stream:
        return await deps.slow(turns.run, plan)
    return StreamingResponse(turns.stream(plan), media_type="text/event-stream",
                             headers=SSE_HEADERS)


@router.get("/agents/{agent_id}/session/{session_id}/turn/{turn_id}", summary="A turn")
async def get_turn(agent_id: str, session_id: str, turn_id: str,
                   tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, objects = v1.deps, v1.llama.objects

    def run() -> dict[str, Any]:
        session_of(objects, tenant, agent_id, session_id)
        turn = objects.get(TURN, tenant, turn_id, "turn_id")
        if turn["session_id"] != session_id:
            raise not_found(TURN, turn_id, "turn_id")
        return turn

    return await deps.cpu(run)


@router.get("/agents/{agent_id}/session/{session_id}/turn/{turn_id}/step/{step_id}",
            summary="A step of a turn")
async def get_step(agent_id: str, session_id: str, turn_id: str, step_id: str,
                   tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    turn = await get_turn(agent_id, session_id, turn_id, tenant, v1)
    for step in turn["steps"]:
        if step["step_id"] == step_id:
            return {"step": step}
    raise not_found("step", step_id, "step_id")


@router.post("/agents/{agent_id}/session/{session_id}/turn/{turn_id}/resume",
             summary="Resume a turn (not needed: tools run on the server)",
             response_model=None)
async def resume(agent_id: str, session_id: str, turn_id: str,
                 tenant: str = TENANT, v1: V1Context = V1) -> None:
    await get_turn(agent_id, session_id, turn_id, tenant, v1)
    raise bad_request("this turn is complete: its tools ran on the server, so there is "
                      "nothing to resume", "turn_id", code="unsupported_value")

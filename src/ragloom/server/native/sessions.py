"""``/api/sessions``: chat sessions with history; asking within one uses it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from ragloom.server.answering import retrieval_query
from ragloom.server.auth import Tenant, current_tenant
from ragloom.server.native.query import STREAM_RESPONSE, answer
from ragloom.server.native.schemas import (
    AskOut,
    AskSettings,
    Deleted,
    SessionCreate,
    SessionDetail,
    SessionList,
    SessionOut,
)
from ragloom.server.state import ServerState, get_state

router = APIRouter(tags=["chat sessions"])


@router.post("/sessions", response_model=SessionOut, status_code=201)
async def create_session(body: SessionCreate, tenant: Tenant = Depends(current_tenant),
                         state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """Start a conversation with some of the caller's knowledge bases."""
    def work() -> dict[str, Any]:
        ids = [state.catalog.get(tenant, name).id for name in body.knowledge_bases]
        return state.sessions.create(tenant, ids, body.title).to_dict()

    return await state.run_cpu(work)


@router.get("/sessions", response_model=SessionList)
async def list_sessions(limit: int = Query(1000, ge=1, le=1000),
                        tenant: Tenant = Depends(current_tenant),
                        state: ServerState = Depends(get_state)) -> dict[str, Any]:
    sessions = await state.run_cpu(state.sessions.list_sessions, tenant, limit)
    return {"object": "list", "data": [s.to_dict() for s in sessions]}


@router.get("/sessions/{session_id}", response_model=SessionDetail)
async def get_session(session_id: str, tenant: Tenant = Depends(current_tenant),
                      state: ServerState = Depends(get_state)) -> dict[str, Any]:
    """A session with its messages (questions and answers, with their sources)."""
    def work() -> dict[str, Any]:
        session = state.sessions.get(tenant, session_id)
        return {**session.to_dict(),
                "messages": [m.to_dict() for m in state.sessions.messages(session)]}

    return await state.run_cpu(work)


@router.delete("/sessions/{session_id}", response_model=Deleted)
async def delete_session(session_id: str, tenant: Tenant = Depends(current_tenant),
                         state: ServerState = Depends(get_state)) -> dict[str, Any]:
    await state.run_cpu(state.sessions.delete, tenant, session_id)
    return {"id": session_id, "object": "chat_session.deleted", "deleted": True}


@router.post("/sessions/{session_id}/ask", response_model=AskOut, responses=STREAM_RESPONSE)
async def ask_in_session(session_id: str, body: AskSettings,
                         tenant: Tenant = Depends(current_tenant),
                         state: ServerState = Depends(get_state)) -> Any:
    """Ask within a session: the last turns go to the model, and the answer is kept."""
    session = await state.run_cpu(state.sessions.get, tenant, session_id)
    history = await state.run_cpu(state.sessions.history, session)

    def keep(payload: dict[str, Any]) -> None:
        state.sessions.append(session, body.question, str(payload.get("answer", "")),
                              {"sources": payload.get("sources", []),
                               "citations": payload.get("citations", [])})

    return await answer(state, tenant, body, session.knowledge_bases, history=history,
                        retrieval_query=retrieval_query(body.question, history),
                        on_done=keep, extra={"session_id": session.id})

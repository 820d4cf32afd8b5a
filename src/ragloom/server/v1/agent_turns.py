"""A Llama Stack 0.2 agent turn: search with ``knowledge_search``, then answer.

A turn of an agent with the ``builtin::rag`` tool group runs one ``tool_execution``
step (``knowledge_search`` for the user's message over the group's ``vector_db_ids``
with its ``query_config``: the RAG tool's own search, see
:func:`~ragloom.server.v1.spec.knowledge_search`), then one ``inference``
step whose answer comes from :func:`~.agent_answer.answer_stream`. Without the tool
group the turn is the inference step alone. The events are the ones the 0.2 client's
``EventLogger`` prints: ``turn_start``, ``step_start`` / ``step_progress`` /
``step_complete`` per step, ``turn_complete`` with the whole turn, which is stored
with its session.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ragloom.server.v1.agent_answer import answer_stream
from ragloom.server.v1.common import new_id
from ragloom.server.v1.errors import bad_request
from ragloom.server.v1.llama_context import LlamaContext, iso_now
from ragloom.server.v1.spec import content_text, knowledge_search_matches
from ragloom.server.v1.toolgroups import rag_arguments
from ragloom.types import ChatMessage, QueryMatch

log = logging.getLogger("ragloom.server.openai.agents")
TURN = "turn"


@dataclass
class TurnPlan:
    """Everything decided (and searched) before the model is called."""

    tenant: str
    agent: dict[str, Any]
    session_id: str
    input_messages: list[dict[str, Any]]
    question: str
    history: list[ChatMessage]
    turn_id: str = field(default_factory=lambda: new_id("turn_"))
    started_at: str = field(default_factory=iso_now)
    steps: list[dict[str, Any]] = field(default_factory=list)
    matches: list[QueryMatch] = field(default_factory=list)


def rag_args(toolgroups: list[Any]) -> dict[str, Any] | None:
    """The args of the ``builtin::rag`` tool group among ``toolgroups``, if it is there
    (a later mention's args win: a turn's toolgroups over its agent's)."""
    found: dict[str, Any] | None = None
    for group in toolgroups:
        name = group if isinstance(group, str) else group.get("name")
        if str(name).split("/")[0] == "builtin::rag":
            found = found or {}
            if isinstance(group, dict):
                found.update(group.get("args") or {})
    return found


def question_of(messages: list[dict[str, Any]]) -> str:
    users = [m for m in messages if m.get("role") == "user"]
    if not users:
        raise bad_request("a turn needs a user message", "messages")
    return content_text(users[-1].get("content", ""), "messages.content")


def history_of(turns: list[dict[str, Any]]) -> list[ChatMessage]:
    history: list[ChatMessage] = []
    for turn in turns:
        history.append(ChatMessage.user(question_of(turn["input_messages"])))
        history.append(ChatMessage.assistant(content_text(turn["output_message"]["content"],
                                                          "content")))
    return history


class AgentTurns:
    def __init__(self, context: LlamaContext, max_answer_tokens: int) -> None:
        self.context = context
        self.max_answer_tokens = max_answer_tokens

    def plan(self, tenant: str, agent: dict[str, Any], session_id: str,
             messages: list[dict[str, Any]], toolgroups: list[Any]) -> TurnPlan:
        config = agent["agent_config"]
        turns = self.context.objects.children(TURN, tenant, session_id)
        plan = TurnPlan(tenant=tenant, agent=agent, session_id=session_id,
                        input_messages=messages, question=question_of(messages),
                        history=history_of(turns))
        args = rag_args([*config.get("toolgroups", []), *toolgroups])
        if args is not None:
            self._search(plan, args)
        return plan

    def _search(self, plan: TurnPlan, args: dict[str, Any]) -> None:
        started = iso_now()
        query, ids, config = rag_arguments({"query": plan.question, **args}, "toolgroups.args")
        context = self.context
        result, plan.matches = knowledge_search_matches(context.deps, context.knowledge,
                                                        plan.tenant, query, ids, config)
        call_id = new_id("call_")
        call = {"call_id": call_id, "tool_name": "knowledge_search",
                "arguments": {"query": plan.question}}
        plan.steps.append({
            "step_id": new_id("step_"), "step_type": "tool_execution", "turn_id": plan.turn_id,
            "tool_calls": [call], "tool_responses": [
                {"call_id": call_id, "tool_name": "knowledge_search",
                 "content": result["content"], "metadata": result["metadata"]}],
            "started_at": started, "completed_at": iso_now()})

    def events(self, plan: TurnPlan) -> Iterator[dict[str, Any]]:
        """The turn's stream payloads; the turn is stored once complete."""
        yield {"event_type": "turn_start", "turn_id": plan.turn_id}
        for step in plan.steps:
            yield {"event_type": "step_start", "step_type": step["step_type"],
                   "step_id": step["step_id"], "metadata": {}}
            yield {"event_type": "step_complete", "step_type": step["step_type"],
                   "step_id": step["step_id"], "step_details": step}
        step_id, started = new_id("step_"), iso_now()
        yield {"event_type": "step_start", "step_type": "inference", "step_id": step_id,
               "metadata": {}}
        config = plan.agent["agent_config"]
        sampling = config.get("sampling_params") or {}
        model = self.context.deps.model
        if model is None:
            raise bad_request("this server has no language model", "model",
                              code="model_not_available")
        text = ""
        for delta in answer_stream(
                model, instructions=config.get("instructions"), history=plan.history,
                question=plan.question, context=plan.matches,
                max_tokens=int(sampling.get("max_tokens") or self.max_answer_tokens),
                embedder=self.context.deps.embedder):
            if delta.response is not None:
                text = delta.response.text
                continue
            if delta.text:
                yield {"event_type": "step_progress", "step_type": "inference",
                       "step_id": step_id, "delta": {"type": "text", "text": delta.text}}
        output = {"role": "assistant", "content": text, "stop_reason": "end_of_turn",
                  "tool_calls": []}
        inference = {"step_id": step_id, "step_type": "inference", "turn_id": plan.turn_id,
                     "model_response": output, "started_at": started,
                     "completed_at": iso_now()}
        yield {"event_type": "step_complete", "step_type": "inference", "step_id": step_id,
               "step_details": inference}
        turn = {"turn_id": plan.turn_id, "session_id": plan.session_id,
                "input_messages": plan.input_messages, "steps": [*plan.steps, inference],
                "output_message": output, "output_attachments": [],
                "started_at": plan.started_at, "completed_at": iso_now()}
        self.context.objects.put(TURN, plan.tenant, plan.turn_id, turn,
                                 parent=plan.session_id)
        yield {"event_type": "turn_complete", "turn": turn}

    def stream(self, plan: TurnPlan) -> Iterator[str]:
        """Server-sent events as the 0.2 client reads them (``data:`` lines)."""
        import json

        try:
            for payload in self.events(plan):
                yield f"data: {json.dumps({'event': {'payload': payload}})}\n\n"
        except Exception as exc:
            log.exception("agent turn %s failed", plan.turn_id)
            error = {"message": f"the turn failed: {exc}", "type": "server_error"}
            yield f"data: {json.dumps({'error': error})}\n\n"

    def run(self, plan: TurnPlan) -> dict[str, Any]:
        turn: dict[str, Any] = {}
        for payload in self.events(plan):
            if payload["event_type"] == "turn_complete":
                turn = payload["turn"]
        return turn

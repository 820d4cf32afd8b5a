"""The agent loop, with a scripted tool-calling model and against a real local HTTP
server speaking the OpenAI wire format."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeservers import FakeServer, Recorded, Reply, Response, openai_api
from ragloom.advanced import Agent, FunctionTool, KnowledgeBaseContentRetriever
from ragloom.advanced.agent import KnowledgeSearchTool, ToolsNotSupportedError, supports_tools
from ragloom.answering.settings import GenerationSettings
from ragloom.chat import SessionStore
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.testing import ScriptedModel
from ragloom.types import ToolCall

from .conftest import tool_model


def _search_tool(kb: VectorKnowledgeBase) -> KnowledgeSearchTool:
    return KnowledgeSearchTool([KnowledgeBaseContentRetriever(kb)], max_chunks=2)


def _passage_answer(messages: list[Any]) -> str:
    """The final answer: the tool results' first sentence (the loop) or the engine's
    first passage's first sentence, citing it."""
    text = messages[-1].content
    if "Content: " in text:
        return "Answer: " + text.split("Content: ")[1][:40]
    if "[1] " not in text:  # a question answered without searching
        return "I answer this one myself."
    first = text.split("[1] ", 1)[1]
    return first.split(".")[0] + " [1]."


def test_agent_searches_then_answers(kb: VectorKnowledgeBase, tmp_path: Path) -> None:
    model = tool_model(
        ToolCall(id="c1", name="knowledge_search", arguments={"query": "frame warranty"}),
        _passage_answer)
    sessions = SessionStore(tmp_path)
    agent = Agent(model, [_search_tool(kb)], max_infer_iters=4, sessions=sessions)
    answer = agent.run("How long is the frame warranty?", session="s1")
    # The final answer went through the answer engine: asked from the passages, cited.
    assert "Frames carry a lifetime warranty" in answer.answer
    assert answer.citations == [1] and not answer.refused
    assert "Context:" in model.calls[2][-1].content and model.tools[2] == []
    assert answer.searches[0]["query"] == "frame warranty"
    assert answer.searches[0]["results"] == 2
    assert answer.sources[0].chunk.source == "warranty.md"
    assert answer.iterations == 2 and answer.queries == ("frame warranty",)
    assert model.tools[0] == ["knowledge_search"]
    tool_message = model.calls[1][-1]
    assert tool_message.role == "tool" and tool_message.tool_call_id == "c1"
    stored = sessions.messages("s1")
    assert [m.role for m in stored] == ["user", "assistant"]
    assert stored[1].metadata["searches"][0]["query"] == "frame warranty"
    again = agent.run("And the gears?", session="s1")  # history reaches the model
    assert "How long is the frame warranty?" in [m.content for m in model.calls[3]]
    assert again.answer


def test_agent_final_answer_is_checked(kb: VectorKnowledgeBase) -> None:
    """A made-up figure is not shown under strict grounding; ``grounding="off"`` shows
    the model's answer as it came; without passages the model's own answer stands."""
    search = ToolCall(id="c1", name="knowledge_search", arguments={"query": "frame warranty"})
    made_up = "Frames carry a 3 year warranty [1]."
    strict = Agent(tool_model(search, made_up), [_search_tool(kb)]).run(
        "How long is the frame warranty?")
    assert "3 year" not in strict.answer
    off = Agent(tool_model(search, made_up), [_search_tool(kb)],
                settings=GenerationSettings(grounding="off")).run(
        "How long is the frame warranty?")
    assert "3 year" in off.answer
    plain_model = tool_model("No search needed.")
    direct = Agent(plain_model, [_search_tool(kb)]).run("Hello?")
    assert direct.answer == "No search needed." and len(plain_model.calls) == 1


def test_agent_is_bounded_by_max_infer_iters(kb: VectorKnowledgeBase) -> None:
    loop = ToolCall(id="c", name="knowledge_search", arguments={"query": "warranty"})
    agent = Agent(tool_model(loop), [_search_tool(kb)], max_infer_iters=3)
    answer = agent.run("q")
    assert answer.iterations == 3 and len(answer.searches) == 3
    assert "max_infer_iters" in answer.notice
    numbers = [s.chunk.source for s in answer.sources]
    assert len(numbers) == 6


def test_other_tools_and_unknown_tools(kb: VectorKnowledgeBase) -> None:
    calls = [ToolCall(id="a", name="add", arguments={"a": 2, "b": 3}),
             ToolCall(id="b", name="nope", arguments={})]
    model = tool_model(calls, lambda m: "done")
    adder = FunctionTool(lambda a, b: str(a + b), name="add", description="adds",
                         parameters={"type": "object", "properties": {
                             "a": {"type": "number"}, "b": {"type": "number"}}})
    answer = Agent(model, [_search_tool(kb), adder]).run("2+3?")
    results = [m.content for m in model.calls[1] if m.role == "tool"]
    assert results[0] == "5" and "no tool named 'nope'" in results[1]
    assert answer.answer == "done" and answer.sources == []


def test_a_model_that_cannot_call_tools_is_refused(kb: VectorKnowledgeBase) -> None:
    assert not supports_tools(ScriptedModel(name="local:smollm2"))
    assert supports_tools(ScriptedModel(name="ollama:llama3.2"))
    agent = Agent(ScriptedModel(name="local:smollm2"), [_search_tool(kb)])
    with pytest.raises(ToolsNotSupportedError, match="cannot call tools"):
        agent.run("q")


def _agent_app(request: Recorded, reply: Reply) -> Response:
    """First request: a knowledge_search call; then text quoting the tool's result."""
    messages = (request.body or {}).get("messages", [])
    tool_results = [m["content"] for m in messages if m.get("role") == "tool"]
    if not tool_results:
        reply = Reply(tool_calls=[("knowledge_search", {"query": "frame warranty"})])
    else:
        content = tool_results[-1].split("Content: ", 1)[1].split("\n", 1)[0]
        reply = Reply(text=f"The documents say: {content} [1]")
    return openai_api.app(request, reply)


@pytest.mark.integration
def test_agent_against_an_openai_wire_server(kb: VectorKnowledgeBase,
                                             monkeypatch: Any) -> None:
    pytest.importorskip("openai")
    from ragloom.registry import make_model

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeServer(_agent_app) as server:
        model = make_model("openai:gpt-test", base_url=server.url + "/v1")
        assert model is not None
        answer = Agent(model, [_search_tool(kb)]).run("How long is the frame warranty?")
        bodies = [r.body for r in server.requests]
    # The tool call, the model's answer after it, then the answer engine's request over
    # the passages found (no tools: it answers, checked against them).
    assert len(bodies) == 3
    assert bodies[0]["tools"][0]["function"]["name"] == "knowledge_search"
    assert bodies[1]["messages"][-2]["tool_calls"][0]["function"]["name"] == "knowledge_search"
    assert "tools" not in bodies[2]
    assert bodies[2]["messages"][-1]["content"].endswith("How long is the frame warranty?")
    assert "Frames carry a lifetime warranty for the original owner" in answer.answer
    assert answer.searches[0]["query"] == "frame warranty"
    assert answer.sources[0].chunk.source == "warranty.md"

"""Agent RAG: a tool-calling model decides when to search.

:class:`Agent` runs the loop: send the conversation and the tools, run the tool
calls the model makes, send back the results, until the model answers in text or
``max_infer_iters`` model calls have been made. :class:`KnowledgeSearchTool` is the
``knowledge_search`` tool over any content retrievers (knowledge bases, web, SQL);
:class:`FunctionTool` wraps any Python function the library user gives.

The answer lists every search the agent made (``AugmentedAnswer.searches``) and
its sources are the passages those searches returned, numbered in order. When the
searches found passages, the final answer goes through the answer engine
(:class:`~ragloom.answering.engine.AnswerEngine`, grounding ``strict`` unless the
caller's ``settings`` say otherwise), so it is checked and cited like every other
answer; without passages it is the model's own answer. A model
that cannot call tools (the in-process ``local:`` models) is refused up front with
:class:`ToolsNotSupportedError` instead of silently answering without searching.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ragloom.advanced.answer import AugmentedAnswer
from ragloom.advanced.augmentor import RetrievalAugmentor
from ragloom.advanced.retrievers import ContentRetriever
from ragloom.answering.engine import AnswerEngine
from ragloom.answering.settings import GenerationSettings
from ragloom.chat.memory import ChatMemory, MessageWindowMemory
from ragloom.chat.sessions import SessionStore
from ragloom.errors import ConfigurationError, InvalidInputError, RagError
from ragloom.protocols import ModelProvider
from ragloom.types import ChatMessage, QueryMatch, Tool, ToolCall, Usage

__all__ = [
    "AGENT_INSTRUCTIONS",
    "Agent",
    "AgentTool",
    "FunctionTool",
    "KnowledgeSearchTool",
    "ToolResult",
    "ToolsNotSupportedError",
    "supports_tools",
]

AGENT_INSTRUCTIONS = (
    "You are a helpful assistant. When a question may be answered by the user's documents, "
    "call the knowledge_search tool (several times with different queries if needed) and "
    "answer from what it returns, citing results by their number like [1]. If the results "
    "do not contain the answer, say that you don't know."
)
#: Providers whose chat models take tools (ragloom.models.*); ``local`` models do not.
TOOL_CALLING_PROVIDERS = frozenset({"openai", "anthropic", "ollama", "gemini"})


class ToolsNotSupportedError(ConfigurationError):
    """The model cannot call tools, so an agent cannot run on it."""


def supports_tools(model: ModelProvider) -> bool:
    """Whether ``model`` can call tools: its own ``supports_tools`` when it has one,
    else whether its provider is one whose models take tools."""
    declared = getattr(model, "supports_tools", None)
    if isinstance(declared, bool):
        return declared
    return model.name.split(":", 1)[0].lower() in TOOL_CALLING_PROVIDERS


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """What a tool gives back: text for the model, passages for the answer's sources."""

    text: str
    matches: list[QueryMatch] = field(default_factory=list)


@runtime_checkable
class AgentTool(Protocol):
    @property
    def tool(self) -> Tool: ...

    def call(self, arguments: Mapping[str, Any]) -> ToolResult: ...


SEARCH_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string",
                             "description": "What to search for, as a standalone question "
                                            "or keywords."}},
    "required": ["query"],
}


class KnowledgeSearchTool:
    """``knowledge_search(query)`` over content retrievers, formatted as Llama Stack's
    RAG tool formats its results (``Result {index}`` blocks between BEGIN/END lines).
    ``first_number`` lets several calls in one answer number passages on."""

    def __init__(self, retrievers: Sequence[ContentRetriever], *, max_chunks: int = 5,
                 name: str = "knowledge_search", description: str = "") -> None:
        if not retrievers:
            raise InvalidInputError("knowledge_search needs at least one retriever")
        self.retrievers = list(retrievers)
        self.augmentor = RetrievalAugmentor(retrievers, max_contents=max_chunks)
        names = ", ".join(r.name for r in retrievers)
        self._tool = Tool(name=name, parameters=SEARCH_PARAMETERS, description=description or (
            f"Search the user's documents ({names}) for passages relevant to a query."))
        self.first_number = 1

    @property
    def tool(self) -> Tool:
        return self._tool

    def call(self, arguments: Mapping[str, Any]) -> ToolResult:
        query = str(arguments.get("query") or "").strip()
        if not query:
            return ToolResult(text="knowledge_search needs a non-empty 'query' argument.")
        matches = self.augmentor.retrieve(query).contents
        if not matches:
            return ToolResult(text=f"knowledge_search found nothing for {query!r}.")
        lines = [f"knowledge_search tool found {len(matches)} chunks:",
                 "BEGIN of knowledge_search tool results."]
        for number, match in enumerate(matches, start=self.first_number):
            lines.append(f"Result {number}\nContent: {match.chunk.text.strip()}\n"
                         f"Metadata: {{'source': {match.chunk.source!r}}}")
        lines.append("END of knowledge_search tool results.")
        self.first_number += len(matches)
        return ToolResult(text="\n".join(lines), matches=list(matches))


class FunctionTool:
    """A Python function as a tool: ``FunctionTool(fn, name, description, parameters)``;
    ``fn`` gets the model's arguments as keywords and returns text."""

    def __init__(self, fn: Callable[..., str], *, name: str, description: str = "",
                 parameters: Mapping[str, Any] | None = None) -> None:
        self.fn = fn
        self._tool = Tool(name=name, description=description,
                          parameters=parameters or {"type": "object", "properties": {}})

    @property
    def tool(self) -> Tool:
        return self._tool

    def call(self, arguments: Mapping[str, Any]) -> ToolResult:
        return ToolResult(text=str(self.fn(**dict(arguments))))


def _embedder_of(tools: Any) -> Any:
    """The embedder of the first knowledge base a search tool reads, if any."""
    for tool in tools:
        for retriever in getattr(tool, "retrievers", ()):
            base = getattr(retriever, "knowledge_base", None)
            embedder = getattr(base, "embedder", None)
            if embedder is not None:
                return embedder
    return None


class Agent:
    """The tool loop (see the module docstring). ``max_infer_iters`` bounds the model
    calls of one question; with a session, the question and answer are stored."""

    def __init__(self, model: ModelProvider, tools: Sequence[AgentTool], *,
                 instructions: str = AGENT_INSTRUCTIONS, max_infer_iters: int = 10,
                 memory: ChatMemory | None = None, sessions: SessionStore | None = None,
                 temperature: float | None = None, max_answer_tokens: int = 512,
                 engine: AnswerEngine | None = None,
                 settings: GenerationSettings | None = None) -> None:
        if max_infer_iters < 1:
            raise InvalidInputError("max_infer_iters must be at least 1")
        names = [t.tool.name for t in tools]
        if len(set(names)) != len(names):
            raise InvalidInputError(f"tool names must be distinct, got {names}")
        self.model = model
        self.tools = {t.tool.name: t for t in tools}
        self.instructions = instructions
        self.max_infer_iters = max_infer_iters
        self.memory = memory or MessageWindowMemory(10)
        self.sessions = sessions
        self.temperature = temperature
        self.max_answer_tokens = max_answer_tokens
        self.settings = settings or GenerationSettings(temperature=temperature)
        self._engine = engine

    @property
    def engine(self) -> AnswerEngine:
        """The answer engine the final answer goes through (ranking sentences with the
        searched knowledge bases' embedder when one is known)."""
        if self._engine is None:
            self._engine = AnswerEngine(_embedder_of(self.tools.values()),
                                        settings=self.settings)
        return self._engine

    def check(self) -> None:
        if not supports_tools(self.model):
            raise ToolsNotSupportedError(
                f"the model {self.model.name} cannot call tools, so the agent cannot search "
                "with it. Use a model that calls tools (openai:..., anthropic:..., "
                "ollama:llama3.2, gemini:...) or ask without --agent.")

    def _run_call(self, call: ToolCall) -> ToolResult:
        tool = self.tools.get(call.name)
        if tool is None:
            return ToolResult(text=f"There is no tool named {call.name!r}; tools: "
                                   f"{', '.join(self.tools)}.")
        try:
            return tool.call(call.arguments)
        except RagError as exc:  # the model may recover (another query, another tool)
            return ToolResult(text=f"The tool {call.name} failed: {exc}")

    def run(self, question: str, *, history: Sequence[ChatMessage] = (),
            session: str | None = None) -> AugmentedAnswer:
        self.check()
        for tool in self.tools.values():
            if isinstance(tool, KnowledgeSearchTool):
                tool.first_number = 1
        past = list(history)
        if session is not None and self.sessions is not None:
            past = self.sessions.history(session) + past
        earlier = list(self.memory.select([m for m in past if m.role != "system"]))
        messages = [ChatMessage.system(self.instructions), *earlier,
                    ChatMessage.user(question)]
        specs = [t.tool for t in self.tools.values()]
        usage = Usage()
        sources: list[QueryMatch] = []
        searches: list[dict[str, Any]] = []
        text, model_name, iterations = "", self.model.name, 0
        notice = ""
        for iterations in range(1, self.max_infer_iters + 1):  # noqa: B007 - kept after
            response = self.model.chat(messages, tools=specs, temperature=self.temperature,
                                       max_tokens=self.max_answer_tokens)
            usage = usage + response.usage
            model_name = response.model or model_name
            calls = response.message.tool_calls
            if not calls:
                text = response.text.strip()
                break
            messages.append(ChatMessage.assistant(response.text, calls))
            for call in calls:
                result = self._run_call(call)
                sources.extend(result.matches)
                searches.append({"tool": call.name, "query": call.arguments.get("query", ""),
                                 "arguments": json.loads(json.dumps(dict(call.arguments),
                                                                    default=str)),
                                 "results": len(result.matches)})
                messages.append(ChatMessage(role="tool", content=result.text,
                                            tool_call_id=call.id, name=call.name))
        else:
            notice = (f"the agent stopped after {self.max_infer_iters} model calls "
                      "(max_infer_iters) without a final answer")
        checked: dict[str, Any] = {}
        if sources and not notice:  # answered from passages: checked like every answer
            answered = self.engine.answer(question, sources, self.model, history=earlier,
                                          settings=self.settings)
            usage = usage + answered.usage
            text, sources = answered.answer, list(answered.sources)
            checked = dict(quote=answered.quote, citations=list(answered.citations),
                           refused=answered.refused, origin=answered.origin,
                           kind=answered.kind, reason=answered.reason,
                           points=list(answered.points),
                           unsupported=list(answered.unsupported))
        answer = AugmentedAnswer(
            question=question, answer=text, sources=sources, usage=usage, model=model_name,
            notice=notice, queries=tuple(str(s["query"]) for s in searches if s["query"]),
            searches=tuple(searches), session=session, iterations=iterations,
            retrieval_skipped=not searches, **checked)
        if session is not None and self.sessions is not None:
            self.sessions.append(session, "user", question)
            self.sessions.append(session, "assistant", answer.answer, sources=sources,
                                 metadata={"searches": searches, "model": model_name,
                                           "agent": True})
        return answer

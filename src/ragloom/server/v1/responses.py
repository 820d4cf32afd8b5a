"""``/v1/responses`` with the ``file_search`` tool: search, answer, cite, store.

A request with ``file_search`` searches its vector stores (the caller's only) for the
last user message, numbers the passages for the model, and returns a
``file_search_call`` item (``results`` only with
``include=["file_search_call.results"]``) and a message whose ``output_text`` carries
``file_citation`` annotations (see :mod:`.citations`). ``previous_response_id``
continues a stored conversation. Streaming sends OpenAI's event sequence, so both
``responses.create(stream=True)`` and ``responses.stream()`` work.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragloom.answering.corpus import Corpus, KnowledgeBaseCorpus
from ragloom.answering.settings import GenerationSettings
from ragloom.protocols import ModelProvider, TokenCounter
from ragloom.rag import DEFAULT_SYSTEM_PROMPT, augment_user_query
from ragloom.server.v1 import expiry
from ragloom.server.v1.chooser import ModelChooser
from ragloom.server.v1.citations import MarkerStripper, Passage, cite
from ragloom.server.v1.collections import VectorStoreCollections
from ragloom.server.v1.common import new_id, now
from ragloom.server.v1.db import MetaDB, dumps
from ragloom.server.v1.engine_adapter import (
    engine_answer,
    file_passages,
    request_settings,
)
from ragloom.server.v1.errors import bad_request, not_found, translate
from ragloom.server.v1.responses_model import (
    ResponseCreate,
    chat_messages,
    input_item,
    input_messages,
)
from ragloom.server.v1.search import (
    RankingOptions,
    SearchRequest,
    openai_filters,
    run_search,
)
from ragloom.server.v1.structured import (
    check_reply,
    model_options,
    require_support,
    responses_text,
    text_format,
)
from ragloom.server.v1.usage import response_usage
from ragloom.types import ChatMessage, QueryMatch, Usage

if TYPE_CHECKING:
    from ragloom.server.v1.responses_llama import LlamaHooks

log = logging.getLogger("ragloom.server.openai.responses")

CITE_HINT = ("Cite the passages you use by their number in square brackets, like [1], "
             "right after the sentence they support.")


@dataclass
class Plan:
    """Everything decided before the model is called."""

    id: str
    request: ResponseCreate
    tenant: str
    created: int
    messages: list[ChatMessage]
    conversation: list[dict[str, str]]
    new_messages: list[dict[str, str]]
    passages: list[Passage] = field(default_factory=list)
    search_item: dict[str, Any] | None = None
    message_id: str = field(default_factory=lambda: new_id("msg_"))
    conversation_id: str | None = None
    #: Set when the answer engine answers (passages retrieved, no structured output).
    engine: EngineRequest | None = None


@dataclass
class EngineRequest:
    """What the answer engine gets: the question, its passages, history and settings."""

    question: str
    matches: list[QueryMatch]
    history: list[ChatMessage]
    settings: GenerationSettings
    corpus: Corpus | None = None


class ResponsesEngine:
    def __init__(self, db: MetaDB, collections: VectorStoreCollections,
                 model: ModelProvider | None, max_answer_tokens: int,
                 clock: Callable[[], float] = time.time,
                 hooks: LlamaHooks | None = None,
                 chooser: ModelChooser | None = None) -> None:
        self.clock = clock
        self.hooks = hooks
        self.chooser = chooser
        self.db = db
        self.collections = collections
        self.model = model
        self.max_answer_tokens = max_answer_tokens

    # ------------------------------------------------------------------ planning
    def _model(self, name: str) -> ModelProvider:
        if self.chooser is None:
            if self.model is None:
                raise bad_request("this server has no language model; start it with one",
                                  "model", code="model_not_available")
            return self.model
        return self.chooser.get(name)

    def stored(self, tenant: str, response_id: str) -> Any:
        row = self.db.row("SELECT * FROM oai_responses WHERE id = ? AND tenant = ?",
                          (response_id, tenant))
        if row is None:
            raise not_found("response", response_id, "response_id")
        return row

    def plan(self, request: ResponseCreate, tenant: str) -> Plan:
        request.check()
        if self.chooser is not None:
            self.chooser.check(request.model, tenant)
        else:
            self._model(request.model)
        require_support(self._model(request.model), text_format(request.text), "text.format")
        tool = request.file_search()
        history: list[dict[str, str]] = []
        if request.previous_response_id:
            previous = self.stored(tenant, request.previous_response_id)
            history = json.loads(previous["conversation"])
        conversation = self.hooks.conversation(tenant, request) if self.hooks else None
        if conversation is not None:
            history = conversation[1]
        new = input_messages(request.input)
        users = [m for m in new if m["role"] == "user"]
        question = users[-1]["content"] if users else new[-1]["content"]
        system = [m["content"] for m in new if m["role"] == "system"]
        turns = [m for m in new if m["role"] != "system"]
        plan = Plan(id=new_id("resp_"), request=request, tenant=tenant, created=now(),
                    messages=[], conversation=history + turns, new_messages=new,
                    conversation_id=conversation[0] if conversation else None)
        matches: list[QueryMatch] = []
        kbs: list[Any] = []
        stores = []
        if tool is not None:
            for vs_id in tool.vector_store_ids:
                row = self.db.row("SELECT * FROM oai_vector_stores WHERE id = ? AND tenant = ?",
                                  (vs_id, tenant))
                if row is None:
                    raise not_found("vector store", vs_id, "tools.vector_store_ids")
                expiry.check_usable(row, int(self.clock()))
                stores.append(row)
        if tool is not None and request.searches():
            search = SearchRequest(
                query=question, filters=tool.filters, max_num_results=tool.max_num_results,
                ranking_options=(RankingOptions.model_validate(tool.ranking_options)
                                 if tool.ranking_options else None))
            kbs = [self.collections.knowledge_base(v) for v in tool.vector_store_ids]
            query, hits = run_search(kbs, search)
            for row in stores:  # searched: in use (see .expiry)
                expiry.touch(self.db, row, int(self.clock()))
            results = []
            for hit in hits:
                for chunk in hit.chunks:
                    matches.append(chunk)
                    plan.passages.append(Passage(len(plan.passages) + 1, hit.file_id,
                                                 hit.filename, chunk.chunk.text))
                results.append({"file_id": hit.file_id, "filename": hit.filename,
                                "score": round(hit.score, 6), "attributes": hit.attributes,
                                "text": "\n".join(c.chunk.text for c in hit.chunks)})
            include = "file_search_call.results" in request.include
            plan.search_item = {"id": new_id("fs_"), "type": "file_search_call",
                                "status": "completed", "queries": [query],
                                "results": results if include else None}
        rag = request.rag_tool()
        if rag is not None and self.hooks is not None and request.searches():
            matches += self.hooks.rag_search(plan, question, rag)
        before = turns[:-1] if turns and turns[-1]["content"] == question else turns
        if matches and text_format(request.text) is None:
            settings = request_settings(
                temperature=request.temperature, max_tokens=request.max_output_tokens,
                system=[request.instructions or "", *system])
            plan.engine = EngineRequest(
                question, matches, chat_messages(history) + chat_messages(before), settings,
                KnowledgeBaseCorpus(kbs, filters=openai_filters(tool.filters, "tools.filters")
                                    if tool is not None and tool.filters is not None
                                    else None) if kbs else None)
            return plan
        instructions = request.instructions or DEFAULT_SYSTEM_PROMPT
        if plan.passages:
            instructions = f"{instructions}\n\n{CITE_HINT}"
        prompt = question
        if matches:
            counter = self.collections.embedder
            prompt = augment_user_query(
                matches, question, max_tokens_in_context=1500,
                token_counter=counter if isinstance(counter, TokenCounter) else None)
        system_text = "\n\n".join([instructions, *system])
        plan.messages = [ChatMessage.system(system_text), *chat_messages(history),
                         *chat_messages(before), ChatMessage.user(prompt)]
        return plan

    def answer(self, plan: Plan) -> tuple[str, list[dict[str, Any]], Usage]:
        """The engine's answer for the plan: text without markers, its file citations
        (``[n]`` mapped to the file of the engine's ``n``-th source), usage."""
        assert plan.engine is not None
        wanted = plan.engine
        answered = engine_answer(self.collections.embedder, wanted.question, wanted.matches,
                                 self._model(plan.request.model), history=wanted.history,
                                 settings=wanted.settings, corpus=wanted.corpus)
        passages = file_passages(answered.sources) if plan.search_item is not None else []
        text, annotations = cite(answered.answer, passages)
        return text, annotations, answered.usage

    # --------------------------------------------------------------- the response
    def body(self, plan: Plan, *, status: str, text: str | None = None,
             annotations: list[dict[str, Any]] | None = None, usage: Usage | None = None,
             error: dict[str, Any] | None = None) -> dict[str, Any]:
        request = plan.request
        output: list[dict[str, Any]] = []
        if plan.search_item is not None and status != "in_progress":
            output.append(plan.search_item)
        if text is not None:
            output.append(self.message_item(plan, text, annotations or [], "completed"))
        return {
            "id": plan.id, "object": "response", "created_at": plan.created,
            "status": status, "error": error, "incomplete_details": None,
            "instructions": request.instructions, "max_output_tokens":
                request.max_output_tokens, "model": request.model, "output": output,
            "parallel_tool_calls": True, "previous_response_id": request.previous_response_id,
            "reasoning": {"effort": None, "summary": None}, "store": request.store,
            "temperature": request.temperature if request.temperature is not None else 1.0,
            "text": responses_text(text_format(request.text)), "tool_choice": request.tool_choice,
            "tools": request.tools, "top_p": request.top_p if request.top_p is not None
            else 1.0, "truncation": "disabled", "metadata": request.metadata or {},
            "user": request.user,
            "usage": None if usage is None else response_usage(usage),
        }

    @staticmethod
    def message_item(plan: Plan, text: str, annotations: list[dict[str, Any]],
                     status: str) -> dict[str, Any]:
        return {"id": plan.message_id, "type": "message", "role": "assistant",
                "status": status, "content": [
                    {"type": "output_text", "text": text, "annotations": annotations,
                     "logprobs": []}]}

    def save(self, plan: Plan, body: dict[str, Any], answer: str) -> None:
        if plan.conversation_id is not None and self.hooks is not None:
            self.hooks.append(plan, body)
        if not plan.request.store:
            return
        conversation = [*plan.conversation, {"role": "assistant", "content": answer}]
        items = [input_item(new_id("msg_"), m) for m in plan.new_messages]
        self.db.execute("INSERT INTO oai_responses VALUES (?, ?, ?, ?, ?, ?)",
                        (plan.id, plan.tenant, plan.created, dumps(body),
                         dumps(conversation), dumps(items)))

    def _max_tokens(self, plan: Plan) -> int:
        return plan.request.max_output_tokens or self.max_answer_tokens

    def run(self, plan: Plan) -> dict[str, Any]:
        if plan.engine is not None:
            text, annotations, usage = self.answer(plan)
            body = self.body(plan, status="completed", text=text, annotations=annotations,
                             usage=usage)
            self.save(plan, body, text)
            return body
        model = self._model(plan.request.model)
        fmt = text_format(plan.request.text)
        response = model.chat(plan.messages, max_tokens=self._max_tokens(plan),
                              temperature=plan.request.temperature, **model_options(fmt))
        check_reply(response.text, fmt)
        # Structured output is kept byte for byte: no markers are read out of JSON.
        text, annotations = ((response.text, []) if fmt is not None
                             else cite(response.text, plan.passages))
        body = self.body(plan, status="completed", text=text, annotations=annotations,
                         usage=response.usage)
        self.save(plan, body, text)
        return body

    def stream(self, plan: Plan) -> Iterator[dict[str, Any]]:
        """OpenAI's event sequence for this response (without sequence numbers)."""
        yield {"type": "response.created", "response": self.body(plan, status="in_progress")}
        yield {"type": "response.in_progress",
               "response": self.body(plan, status="in_progress")}
        index = 0
        if plan.search_item is not None:
            item = plan.search_item
            ref = {"item_id": item["id"], "output_index": index}
            yield {"type": "response.output_item.added", "output_index": index,
                   "response_id": plan.id,
                   "item": {**item, "status": "in_progress", "results": None}}
            yield {"type": "response.file_search_call.in_progress", **ref}
            yield {"type": "response.file_search_call.searching", **ref}
            yield {"type": "response.file_search_call.completed", **ref}
            yield {"type": "response.output_item.done", "output_index": index,
                   "response_id": plan.id, "item": item}
            index += 1
        ref = {"item_id": plan.message_id, "output_index": index, "content_index": 0}
        yield {"type": "response.output_item.added", "output_index": index,
               "response_id": plan.id,
               "item": {**self.message_item(plan, "", [], "in_progress"), "content": []}}
        yield {"type": "response.content_part.added", **ref, "response_id": plan.id,
               "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}}
        try:
            if plan.engine is not None:  # checked before it is shown: one delta
                text, annotations, usage = self.answer(plan)
                if text:
                    yield {"type": "response.output_text.delta", **ref, "delta": text,
                           "logprobs": []}
            else:
                text, annotations, usage = yield from self._model_deltas(plan, ref)
        except Exception as exc:
            log.exception("the model failed while streaming %s", plan.id)
            failure = translate(exc)
            error = {"code": failure.code or "server_error", "message": failure.message}
            yield {"type": "error", "code": "server_error", "message": error["message"],
                   "param": None}
            yield {"type": "response.failed",
                   "response": self.body(plan, status="failed", error=error)}
            return
        for number, annotation in enumerate(annotations):
            yield {"type": "response.output_text.annotation.added", **ref,
                   "annotation_index": number, "annotation": annotation}
        yield {"type": "response.output_text.done", **ref, "text": text, "logprobs": []}
        part = {"type": "output_text", "text": text, "annotations": annotations,
                "logprobs": []}
        yield {"type": "response.content_part.done", **ref, "response_id": plan.id,
               "part": part}
        yield {"type": "response.output_item.done", "output_index": index,
               "response_id": plan.id,
               "item": self.message_item(plan, text, annotations, "completed")}
        body = self.body(plan, status="completed", text=text, annotations=annotations,
                         usage=usage)
        self.save(plan, body, text)
        yield {"type": "response.completed", "response": body}


    def _model_deltas(self, plan: Plan, ref: dict[str, Any]
                      ) -> Generator[dict[str, Any], None,
                                     tuple[str, list[dict[str, Any]], Usage]]:
        """The model's text deltas as events; returns the text, citations and usage."""
        structured = text_format(plan.request.text) is not None
        stripper: MarkerStripper | _Verbatim = (_Verbatim() if structured
                                                else MarkerStripper(plan.passages))
        usage = Usage()
        for delta in self._model(plan.request.model).stream(
                plan.messages, max_tokens=self._max_tokens(plan),
                temperature=plan.request.temperature,
                **model_options(text_format(plan.request.text))):
            if delta.response is not None:
                usage = delta.response.usage
                continue
            piece = stripper.feed(delta.text)
            if piece:
                yield {"type": "response.output_text.delta", **ref, "delta": piece,
                       "logprobs": []}
        rest = stripper.finish()
        if rest:
            yield {"type": "response.output_text.delta", **ref, "delta": rest, "logprobs": []}
        text, annotations = (stripper.raw, []) if structured else cite(stripper.raw,
                                                                        plan.passages)
        return text, annotations, usage


class _Verbatim:
    """A stream passed on as it comes (structured output has no citation markers)."""

    def __init__(self) -> None:
        self.raw = ""

    def feed(self, delta: str) -> str:
        self.raw += delta
        return delta

    def finish(self) -> str:
        return ""

"""``/v1/models``, ``/v1/chat/completions`` and ``/v1/embeddings``.

A chat completion may answer from knowledge: the extra fields ``knowledge_bases``
(native knowledge base names) and ``vector_store_ids`` search for the last user
message; when passages are found the answer comes from the answer engine (see
:mod:`.engine_adapter`: the request's temperature, token limit and system messages
as settings, the earlier messages as history, the answer checked and citing ``[n]``),
with the passages as ``sources`` and the engine's verdict as ``answer`` beside the
choices. Structured output (``response_format``) puts the numbered passages into the
last user message and asks the model directly. Embeddings come as float lists or base64
(little-endian float32, the official client's default).
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterator
from typing import Any

import numpy as np
from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from ragloom.answering.result import EngineAnswer
from ragloom.protocols import ModelProvider, TokenCounter
from ragloom.rag import augment_user_query
from ragloom.server.v1.chooser import ModelChooser
from ragloom.server.v1.common import SSE_HEADERS, new_id, now
from ragloom.server.v1.context import TENANT, V1, V1Context
from ragloom.server.v1.deps import OpenAIDeps
from ragloom.server.v1.engine_adapter import (
    answer_details,
    engine_answer,
    request_settings,
    split_conversation,
)
from ragloom.server.v1.errors import (
    OpenAIError,
    bad_request,
    not_allowed,
    translate,
)
from ragloom.server.v1.knowledge import Knowledge
from ragloom.server.v1.model_names import accepts
from ragloom.server.v1.pooled import stream_in_pool
from ragloom.server.v1.structured import (
    chat_format,
    check_reply,
    model_options,
    require_support,
)
from ragloom.server.v1.token_input import input_texts
from ragloom.server.v1.usage import chat_usage, embedding_usage
from ragloom.stores.memory import dense_values
from ragloom.types import ChatMessage, QueryMatch, Usage

log = logging.getLogger("ragloom.server.openai.chat")


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = Field(None, ge=0.0, le=1.0)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    stop: str | list[str] | None = None
    n: int = 1
    tools: list[dict[str, Any]] | None = None
    logprobs: bool | None = None
    response_format: dict[str, Any] | None = None
    knowledge_bases: list[str] = []
    vector_store_ids: list[str] = []
    top_k: int = Field(5, ge=1, le=50)

    def check(self) -> None:
        if self.n != 1:
            raise bad_request("only n=1 is supported", "n", code="unsupported_value")
        if self.tools:
            raise bad_request("tools are not supported by this server", "tools",
                              code="unsupported_parameter")
        if self.logprobs:
            raise bad_request("logprobs are not supported", "logprobs",
                              code="unsupported_parameter")
        chat_format(self.response_format)


class EmbeddingRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str
    input: Any
    encoding_format: str = "float"
    dimensions: int | None = None
    user: str | None = None


def _content(message: dict[str, Any], index: int) -> str:
    content = message.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                raise bad_request("only text content parts are supported",
                                  f"messages[{index}].content", code="unsupported_value")
            texts.append(str(part.get("text", "")))
        return "".join(texts)
    raise bad_request("message content must be text", f"messages[{index}].content")


def to_messages(raw: list[dict[str, Any]]) -> list[ChatMessage]:
    messages = []
    for index, message in enumerate(raw):
        role = message.get("role")
        if role == "developer":
            role = "system"
        if role not in ("system", "user", "assistant"):
            raise bad_request(f"message role {role!r} is not supported",
                              f"messages[{index}].role", code="unsupported_value")
        messages.append(ChatMessage(role=role, content=_content(message, index)))
    return messages


def source_json(number: int, match: QueryMatch) -> dict[str, Any]:
    meta = match.chunk.metadata
    return {"number": number, "knowledge_base": match.knowledge_base,
            "file_id": meta.get("file_id"), "document": meta.get("filename")
            or match.chunk.source, "score": round(match.score, 6), "text": match.chunk.text}


class ChatCompletions:
    def __init__(self, deps: OpenAIDeps, knowledge: Knowledge) -> None:
        self.deps = deps
        self.knowledge = knowledge
        self.chooser = ModelChooser(deps)

    def model(self, name: str) -> ModelProvider:
        return self.chooser.get(name)

    def prepare(self, body: ChatRequest, tenant: str) -> tuple[list[ChatMessage],
                                                               list[QueryMatch]]:
        body.check()
        self.chooser.check(body.model, tenant)
        require_support(self.model(body.model), chat_format(body.response_format),
                        "response_format")
        messages = to_messages(body.messages)
        if not body.knowledge_bases and not body.vector_store_ids:
            return messages, []
        users = [i for i, m in enumerate(messages) if m.role == "user"]
        if not users:
            raise bad_request("answering from knowledge needs a user message", "messages")
        last = users[-1]
        question = messages[last].content
        matches = self.knowledge.search(tenant, body.knowledge_bases, body.vector_store_ids,
                                        question, body.top_k)
        if matches and self.uses_engine(body, matches):
            return messages, matches  # the engine builds its own prompt (see .answer)
        if matches:
            counter = self.deps.embedder
            prompt = augment_user_query(
                matches, question, max_tokens_in_context=1500,
                token_counter=counter if isinstance(counter, TokenCounter) else None)
            messages[last] = ChatMessage.user(prompt)
            messages.insert(0, ChatMessage.system(
                "Answer using the numbered context passages; cite them like [1]."))
        return messages, matches

    @staticmethod
    def uses_engine(body: ChatRequest, matches: list[QueryMatch]) -> bool:
        """Answers from retrieved passages go through the answer engine; structured
        output keeps the direct model path."""
        return bool(matches) and chat_format(body.response_format) is None

    def engine_answer(self, body: ChatRequest, tenant: str, messages: list[ChatMessage],
                      matches: list[QueryMatch]) -> EngineAnswer:
        system, history, question = split_conversation(messages)
        settings = request_settings(temperature=body.temperature,
                                    max_tokens=body.max_completion_tokens or body.max_tokens,
                                    system=system)
        corpus = self.knowledge.corpus(tenant, body.knowledge_bases, body.vector_store_ids)
        return engine_answer(self.deps.embedder, question, matches, self.model(body.model),
                             history=history, settings=settings, corpus=corpus)

    def options(self, body: ChatRequest) -> dict[str, Any]:
        stop = [body.stop] if isinstance(body.stop, str) else body.stop
        return {"max_tokens": body.max_completion_tokens or body.max_tokens
                or self.deps.max_answer_tokens, "temperature": body.temperature, "stop": stop,
                **model_options(chat_format(body.response_format))}

    def complete(self, body: ChatRequest, tenant: str) -> dict[str, Any]:
        messages, matches = self.prepare(body, tenant)
        details: dict[str, Any] | None = None
        if self.uses_engine(body, matches):
            answered = self.engine_answer(body, tenant, messages, matches)
            text, usage, finish = answered.answer, answered.usage, "stop"
            matches, details = list(answered.sources), answer_details(answered)
        else:
            response = self.model(body.model).chat(messages, **self.options(body))
            check_reply(response.text, chat_format(body.response_format))
            text, usage = response.text, response.usage
            finish = response.finish_reason or "stop"
        result = {"id": new_id("chatcmpl-"), "object": "chat.completion", "created": now(),
                  "model": body.model, "choices": [{
                      "index": 0, "finish_reason": finish, "logprobs": None,
                      "message": {"role": "assistant", "content": text, "refusal": None}}],
                  "usage": chat_usage(usage)}
        if body.knowledge_bases or body.vector_store_ids:
            result["sources"] = [source_json(n, m) for n, m in enumerate(matches, 1)]
        if details is not None:
            result["answer"] = details
        return result

    def stream(self, body: ChatRequest, messages: list[ChatMessage],
               matches: list[QueryMatch], tenant: str = "") -> Iterator[str]:
        chunk_id = new_id("chatcmpl-")
        created = now()

        def chunk(delta: dict[str, Any], finish: str | None = None,
                  extra: dict[str, Any] | None = None) -> str:
            data = {"id": chunk_id, "object": "chat.completion.chunk", "created": created,
                    "model": body.model, "choices": [{"index": 0, "delta": delta,
                                                      "finish_reason": finish,
                                                      "logprobs": None}], **(extra or {})}
            return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

        usage = Usage()
        finish = "stop"
        answered: EngineAnswer | None = None
        if self.uses_engine(body, matches):
            try:  # checked before it is shown: the answer arrives as one delta
                answered = self.engine_answer(body, tenant, messages, matches)
            except Exception as exc:
                log.exception("the answer engine failed while streaming a chat completion")
                yield f"data: {json.dumps(translate(exc).body())}\n\n"
                return
            matches = list(answered.sources)
        extra = ({"sources": [source_json(n, m) for n, m in enumerate(matches, 1)]}
                 if body.knowledge_bases or body.vector_store_ids else {})
        yield chunk({"role": "assistant", "content": ""}, None, extra)
        if answered is not None:
            usage = answered.usage
            if answered.answer:
                yield chunk({"content": answered.answer})
        else:
            try:
                for delta in self.model(body.model).stream(messages, **self.options(body)):
                    if delta.response is not None:
                        usage = delta.response.usage
                        finish = delta.response.finish_reason or "stop"
                    elif delta.text:
                        yield chunk({"content": delta.text})
            except Exception as exc:
                log.exception("the model failed while streaming a chat completion")
                yield f"data: {json.dumps(translate(exc).body())}\n\n"
                return
        yield chunk({}, finish, {"answer": answer_details(answered)} if answered else None)
        if (body.stream_options or {}).get("include_usage"):
            data = {"id": chunk_id, "object": "chat.completion.chunk", "created": created,
                    "model": body.model, "choices": [], "usage": chat_usage(usage)}
            yield f"data: {json.dumps(data)}\n\n"
        yield "data: [DONE]\n\n"


def embed(deps: OpenAIDeps, body: EmbeddingRequest) -> dict[str, Any]:
    embedder = deps.embedder
    if not accepts(embedder.name, body.model):
        raise not_allowed("embedding model", body.model, [embedder.name])
    if body.encoding_format not in ("float", "base64"):
        raise bad_request("encoding_format must be 'float' or 'base64'", "encoding_format")
    if body.dimensions is not None and body.dimensions != embedder.dimension:
        raise bad_request(f"{embedder.name} has {embedder.dimension} dimensions; it cannot "
                          f"return {body.dimensions}", "dimensions", code="unsupported_value")
    strings = input_texts(body.input)
    if any(not t for t in strings):
        raise bad_request("input strings must not be empty", "input")
    if len(strings) > 2048:
        raise bad_request("at most 2048 inputs per request", "input")
    vectors = embedder.embed_documents(strings)
    counter = embedder if isinstance(embedder, TokenCounter) else None
    tokens = sum(counter.count_tokens(t) if counter else len(t.split()) for t in strings)
    data = []
    for index, vector in enumerate(vectors):
        values = np.asarray(dense_values(vector, embedder.name), dtype="<f4")
        encoded: Any = (base64.b64encode(values.tobytes()).decode("ascii")
                        if body.encoding_format == "base64" else values.tolist())
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    return {"object": "list", "data": data, "model": embedder.name,
            "usage": embedding_usage(tokens)}


router = APIRouter()


def models(chat: ChatCompletions, tenant: str) -> list[dict[str, Any]]:
    names = chat.chooser.allowed(tenant)
    names.append(chat.deps.embedder.name)
    return [{"id": name, "object": "model", "created": 0, "owned_by": "ragloom"}
            for name in names]


@router.get("/models", summary="The models this server serves")
def list_models(tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    return {"object": "list", "data": models(v1.chat, tenant)}


@router.get("/models/{model_id:path}", summary="One model")
def get_model(model_id: str, tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    for model in models(v1.chat, tenant):
        if accepts(model["id"], model_id):
            return model
    raise OpenAIError(404, f"The model '{model_id}' does not exist.", param="model",
                      code="model_not_found")


@router.post("/chat/completions", summary="Chat (optionally from knowledge bases)",
             response_model=None)
async def completions(body: ChatRequest, tenant: str = TENANT, v1: V1Context = V1
                      ) -> dict[str, Any] | StreamingResponse:
    deps, chat = v1.deps, v1.chat
    if not body.stream:
        return await deps.slow(chat.complete, body, tenant)
    messages, matches = await deps.cpu(chat.prepare, body, tenant)
    # The whole generation is one task of the model pool (--model-threads).
    events = chat.stream(body, messages, matches, tenant)
    return StreamingResponse(stream_in_pool(deps.slow, events),
                             media_type="text/event-stream", headers=SSE_HEADERS)


@router.post("/embeddings", summary="Embed texts")
async def embeddings(body: EmbeddingRequest,
                     tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps = v1.deps
    return await deps.cpu(embed, deps, body)

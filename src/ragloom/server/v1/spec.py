"""The specifications' own routes, over the same knowledge bases and vector stores.

* ``POST /v1/vector-io/query``: ``vector_store_id`` (or ``vector_db_id``, its 0.2
  name), ``query``, ``params`` (``max_chunks``, ``mode`` (default ``vector``),
  ``score_threshold``, ``ranker``, ``score_normalization``) -> ``{"chunks", "scores"}``.
* ``POST /v1/tool-runtime/rag-tool/insert``: ``documents`` (``document_id``,
  ``content`` as text, content items or a URL, ``mime_type``, ``metadata``),
  ``vector_db_id``, ``chunk_size_in_tokens``.
* ``POST /v1/tool-runtime/rag-tool/query``: ``content``, ``vector_db_ids``,
  ``query_config`` (``max_chunks``, ``max_tokens_in_context``, ``chunk_template``,
  ``mode``, ``ranker``, ``query_generator_config``, ``score_threshold``,
  ``score_normalization``) -> ``{"content", "metadata"}``.

Scores are absolute (docs/retrieval.md, "Scores a threshold can trust"):
``score_threshold`` means the same for every query; ``score_normalization:
"per_query"`` brings back the per-query rescaling of hybrid scores.

``vector_db_id`` names a native knowledge base of the caller, or one of its vector
stores (``vs_…``).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from ragloom.errors import InvalidInputError, RagError
from ragloom.loaders.url import load_url
from ragloom.protocols import TokenCounter
from ragloom.retrieval.options import SEARCH_MODES, SearchOptions
from ragloom.retrieval.search import search
from ragloom.server.v1.cached_search import cached, embedder_for
from ragloom.server.v1.context import TENANT, V1, V1Context
from ragloom.server.v1.deps import OpenAIDeps
from ragloom.server.v1.errors import bad_request
from ragloom.server.v1.knowledge import Knowledge
from ragloom.server.v1.model_names import accepts
from ragloom.templates import check_rag_tool_template, rag_tool_values, render_template
from ragloom.types import QueryMatch, TextDocument

MAX_CHUNKS = 1000
DEFAULT_TEMPLATE = "Result {index}\nContent: {chunk.content}\nMetadata: {metadata}\n"
_HIDDEN = ("content_hash", "start", "end", "index", "size", "attributes")


class VectorIOQuery(BaseModel):
    """``vector_db_id`` (Llama Stack 0.2) or ``vector_store_id`` (0.3 and later)."""

    model_config = ConfigDict(extra="forbid")
    vector_db_id: str | None = None
    vector_store_id: str | None = None
    query: Any
    params: dict[str, Any] | None = None

    def target(self) -> str:
        found = self.vector_store_id or self.vector_db_id
        if not found:
            raise bad_request("send vector_store_id (or vector_db_id, its older name)",
                              "vector_store_id")
        return found


class RagDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")
    document_id: str = Field(min_length=1)
    content: Any
    mime_type: str | None = None
    metadata: dict[str, Any] = {}


class RagInsert(BaseModel):
    model_config = ConfigDict(extra="forbid")
    documents: list[RagDocument]
    vector_db_id: str
    chunk_size_in_tokens: int = Field(512, ge=16, le=8192)


class QueryConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_chunks: int = Field(5, ge=1, le=100)
    max_tokens_in_context: int = Field(4096, ge=1)
    chunk_template: str = DEFAULT_TEMPLATE
    mode: str | None = "vector"
    ranker: dict[str, Any] | None = None
    query_generator_config: dict[str, Any] | None = None
    score_threshold: float | None = Field(None, ge=0.0, le=1.0)
    score_normalization: str | None = None


class RagQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    content: Any
    vector_db_ids: list[str] = Field(min_length=1)
    query_config: QueryConfig = Field(default_factory=lambda: QueryConfig.model_validate({}))


def content_text(content: Any, param: str) -> str:
    """The text of an interleaved content value (text or text items)."""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        if content.get("type") == "text":
            return str(content.get("text", ""))
        raise bad_request(f"content of type {content.get('type')!r} is not supported here; "
                          "send text", param, code="unsupported_value")
    if isinstance(content, Sequence):
        return " ".join(content_text(item, param) for item in content)
    raise bad_request("content must be text or a list of text items", param)


def render(template: str, index: int, match: QueryMatch) -> str:
    """One passage through a client's ``chunk_template`` (named placeholders only:
    :func:`ragloom.templates.render_template`); a 400 naming the template otherwise."""
    metadata = {k: v for k, v in match.chunk.metadata.items() if k not in _HIDDEN}
    metadata["document_id"] = match.chunk.source
    try:
        return render_template(template, rag_tool_values(
            index, match.chunk.text, match.chunk.id, match.chunk.source, metadata, metadata))
    except InvalidInputError as exc:
        raise bad_request(str(exc), "query_config.chunk_template") from exc


def search_options(params: Mapping[str, Any], param: str) -> SearchOptions:
    changes: dict[str, Any] = {}
    mode = params.get("mode")
    if mode is not None:
        if mode not in SEARCH_MODES:
            raise bad_request(f"mode must be one of {', '.join(SEARCH_MODES)}",
                              f"{param}.mode", code="unsupported_value")
        changes["mode"] = mode
    if params.get("score_threshold") is not None:
        changes["score_threshold"] = float(params["score_threshold"])
    if params.get("score_normalization") is not None:
        changes["score_normalization"] = params["score_normalization"]
    ranker = params.get("ranker")
    if isinstance(ranker, str):
        ranker = {"type": ranker}
    if ranker is not None:
        if not isinstance(ranker, Mapping) or ranker.get("type") not in ("rrf", "weighted"):
            raise bad_request("ranker must be {'type': 'rrf', 'impact_factor': k} or "
                              "{'type': 'weighted', 'alpha': a}", f"{param}.ranker",
                              code="unsupported_value")
        changes["ranker"] = ranker["type"]
        if "impact_factor" in ranker:
            changes["impact_factor"] = float(ranker["impact_factor"])
        if "alpha" in ranker:
            changes["alpha"] = float(ranker["alpha"])
    try:
        return SearchOptions().with_(**changes)
    except RagError as exc:
        raise bad_request(str(exc), param) from exc


def _page_size(page: dict[str, Any]) -> int:
    return 200 + sum(600 + len(chunk["content"]) for chunk in page["chunks"])


def chunk_json(match: QueryMatch, embedder: Any = None) -> dict[str, Any]:
    """A chunk as Llama Stack sends it: ``metadata`` for the model's context,
    ``chunk_metadata`` for the backend, and the embedding fields (the vector itself is
    not sent back: ``embedding`` is empty)."""
    metadata = {k: v for k, v in match.chunk.metadata.items() if k != "content_hash"}
    metadata.setdefault("document_id", match.chunk.source)
    name = str(getattr(embedder, "name", "") or "")
    dimension = int(getattr(embedder, "dimension", 0) or 0) if embedder is not None else 0
    chunk_metadata = {"chunk_id": match.chunk.id, "document_id": str(metadata["document_id"]),
                      "source": match.chunk.source or None,
                      "chunk_embedding_model": name, "chunk_embedding_dimension": dimension}
    return {"content": match.chunk.text, "chunk_id": match.chunk.id, "metadata": metadata,
            "chunk_metadata": chunk_metadata, "stored_chunk_id": match.chunk.id,
            "embedding": [], "embedding_model": name, "embedding_dimension": dimension}


def document_text(document: RagDocument, index: int) -> tuple[str, dict[str, Any]]:
    """The text of a RAG document and metadata from where it came from."""
    content = document.content
    param = f"documents[{index}].content"
    uri = content.get("uri") if isinstance(content, Mapping) else None
    if isinstance(content, Mapping) and "url" in content and isinstance(content["url"], dict):
        uri = content["url"].get("uri")
    if uri is None:
        return content_text(content, param), {}
    if uri.startswith("data:"):
        header, _, payload = uri.partition(",")
        data = base64.b64decode(payload) if header.endswith(";base64") else payload.encode()
        try:
            return data.decode("utf-8"), {}
        except UnicodeDecodeError as exc:
            raise bad_request("a data: URL must hold UTF-8 text", param) from exc
    results = load_url(uri)
    texts = [r.document.text for r in results if r.document is not None]
    if not texts:
        reason = results[0].reason if results else "nothing loaded"
        raise bad_request(f"could not load {uri}: {reason}", param)
    return "\n\n".join(texts), {"url": uri}


router = APIRouter()


@router.post("/vector-io/query", summary="Query chunks (Vector IO specification)")
async def vector_io_query(body: VectorIOQuery,
                          tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, knowledge = v1.deps, v1.knowledge

    def run() -> dict[str, Any]:
        params = {"mode": "vector", **(body.params or {})}
        try:
            top_k = int(params.get("max_chunks", 10))
        except (TypeError, ValueError) as exc:
            raise bad_request("max_chunks must be an integer", "params.max_chunks") from exc
        if not 1 <= top_k <= MAX_CHUNKS:
            raise bad_request(f"max_chunks must be between 1 and {MAX_CHUNKS}",
                              "params.max_chunks")
        param = "vector_store_id" if body.vector_store_id else "vector_db_id"
        kb = knowledge.resolve(tenant, body.target(), param=param)
        options = search_options(params, "params").with_(top_k=top_k)
        query = content_text(body.query, "query")
        wrap = embedder_for(deps, tenant) or (lambda embedder: embedder)

        def compute() -> tuple[dict[str, Any], bool]:
            kb.check_embedder()
            result = search(kb.store, wrap(kb.embedder), query, options,
                            knowledge_base=kb.name)
            return {"chunks": [chunk_json(m, kb.embedder) for m in result.matches],
                    "scores": [m.score for m in result.matches],
                    "degraded": result.degraded, "notice": result.notice
                    }, not result.degraded

        return cached(deps, tenant, "v1.vector_io.query", [kb], (repr(options), query),
                      compute, _page_size)

    return await deps.cpu(run)


@router.post("/tool-runtime/rag-tool/insert", summary="Insert documents (RAG tool)")
async def rag_insert(body: RagInsert, tenant: str = TENANT, v1: V1Context = V1) -> None:
    deps, knowledge = v1.deps, v1.knowledge

    def prepare() -> list[TextDocument]:
        documents = []
        for index, item in enumerate(body.documents):
            text, extra = document_text(item, index)
            metadata = {**item.metadata, **extra, "document_id": item.document_id}
            if item.mime_type:
                metadata["mime_type"] = item.mime_type
            documents.append(TextDocument.create(text, source=item.document_id,
                                                 metadata=metadata))
        knowledge.resolve(tenant, body.vector_db_id, create=True)
        return documents

    # A job of the one job system (with its deadline); the answer waits for it.
    await v1.llama.inserts.run(tenant, body.vector_db_id, "vector_db_id",
                               documents=await deps.cpu(prepare),
                               chunk_size=body.chunk_size_in_tokens)


@router.post("/tool-runtime/rag-tool/query", summary="Retrieve context (RAG tool)")
async def rag_query(body: RagQuery, tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, knowledge = v1.deps, v1.knowledge
    return await deps.cpu(knowledge_search, deps, knowledge, tenant, body.content,
                          body.vector_db_ids, body.query_config)


def knowledge_search(deps: OpenAIDeps, knowledge: Knowledge, tenant: str, content: Any,
                     vector_db_ids: Sequence[str], config: QueryConfig) -> dict[str, Any]:
    """The RAG tool's query (and the ``knowledge_search`` tool's result): the chunks
    found, rendered with ``chunk_template`` within ``max_tokens_in_context``, as
    ``{"content", "metadata"}``; ``metadata`` also names the query."""
    return knowledge_search_matches(deps, knowledge, tenant, content, vector_db_ids,
                                    config)[0]


def knowledge_search_matches(deps: OpenAIDeps, knowledge: Knowledge, tenant: str,
                             content: Any, vector_db_ids: Sequence[str], config: QueryConfig
                             ) -> tuple[dict[str, Any], list[QueryMatch]]:
    """:func:`knowledge_search`'s result and the matches it kept."""
    try:
        check_rag_tool_template(config.chunk_template)
    except InvalidInputError as exc:
        raise bad_request(str(exc), "query_config.chunk_template") from exc
    query = generate_query(deps, content, config.query_generator_config)
    options = search_options(config.model_dump(), "query_config")
    matches = knowledge.search(tenant, vector_db_ids, [], query, config.max_chunks, options)
    counter = deps.embedder if isinstance(deps.embedder, TokenCounter) else None
    picked = [{"type": "text", "text": f"knowledge_search tool found {len(matches)} "
               "chunks:\nBEGIN of knowledge_search tool results.\n"}]
    used, kept = 0, []
    for index, match in enumerate(matches, start=1):
        text = render(config.chunk_template, index, match)
        used += counter.count_tokens(text) if counter else len(text.split())
        if used > config.max_tokens_in_context:
            break
        picked.append({"type": "text", "text": text})
        kept.append(match)
    picked.append({"type": "text", "text": "END of knowledge_search tool results.\n"})
    picked.append({"type": "text", "text": (
        "The above results were retrieved to help answer the user's query: "
        f'"{query}". Use them as supporting information only in answering this '
        "query.\n")})
    return {"content": picked, "metadata": {
        "document_ids": [m.chunk.source for m in kept],
        "chunks": [m.chunk.text for m in kept],
        "scores": [m.score for m in kept], "query": query}}, kept


def generate_query(deps: OpenAIDeps, content: Any, config: dict[str, Any] | None) -> str:
    """The search query: the content's text joined (``default``) or written by the model
    from ``template`` (``llm``)."""
    config = config or {"type": "default"}
    kind = config.get("type", "default")
    if kind == "default":
        separator = str(config.get("separator", " "))
        items = content if isinstance(content, list) else [content]
        return separator.join(content_text(i, "content") for i in items)
    if kind != "llm":
        raise bad_request("query_generator_config type must be 'default' or 'llm'",
                          "query_config.query_generator_config.type",
                          code="unsupported_value")
    model = deps.model
    asked = config.get("model")
    if model is None or (asked is not None and not accepts(model.name, str(asked))):
        raise bad_request(f"model {config.get('model')!r} is not served here",
                          "query_config.query_generator_config.model",
                          code="model_not_found")
    template = str(config.get("template", "{messages}"))
    text = content_text(content, "content")
    prompt = template.replace("{messages}", text)
    query = model.chat(prompt, max_tokens=64).text.strip()
    return query or text

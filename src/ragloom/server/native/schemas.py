"""Wire schemas of the native API (they make its OpenAPI document)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorResponse(BaseModel):
    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse, "description": text} for status, text in (
        (400, "Invalid request"), (401, "Missing or invalid API key"),
        (404, "Not found (or another tenant's)"), (409, "Conflict"),
        (413, "Request body too large"), (429, "Rate limit reached"),
        (502, "The model provider failed"))
}


class KnowledgeBaseCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    embedder: str | None = Field(None, description="provider:model [default: the server's]")
    chunking: dict[str, Any] | None = Field(
        None, description='e.g. {"splitter": "recursive", "chunk_size": 256, '
        '"chunk_overlap": 32}; sizes in the embedder\'s tokens for recursive')
    metadata: dict[str, Any] | None = None


class KnowledgeBaseOut(BaseModel):
    id: str
    object: Literal["knowledge_base"] = "knowledge_base"
    name: str
    embedder: str
    chunking: dict[str, Any]
    metadata: dict[str, Any]
    document_count: int
    chunk_count: int
    created_at: int


class KnowledgeBaseList(BaseModel):
    object: Literal["list"] = "list"
    data: list[KnowledgeBaseOut]


class Deleted(BaseModel):
    id: str
    object: str
    deleted: bool


class TextDocumentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    source: str | None = Field(None, max_length=1000,
                               description="the document's name [default: text:<hash>]")
    metadata: dict[str, Any] | None = None


class UrlDocumentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=4000)
    metadata: dict[str, Any] | None = None


class JobError(BaseModel):
    reason: str | None
    message: str


class JobDocument(BaseModel):
    id: str | None
    source: str
    outcome: str
    chunks: int


class JobOut(BaseModel):
    id: str
    object: Literal["ingestion_job"] = "ingestion_job"
    knowledge_base_id: str
    batch_id: str | None
    kind: str
    source: str
    status: Literal["in_progress", "completed", "failed", "cancelled"]
    error: JobError | None
    documents: list[JobDocument]
    chunks: int
    created_at: int
    updated_at: int


class BatchCounts(BaseModel):
    in_progress: int
    completed: int
    failed: int
    cancelled: int
    total: int


class BatchOut(BaseModel):
    id: str
    object: Literal["ingestion_batch"] = "ingestion_batch"
    status: Literal["in_progress", "completed", "failed", "cancelled"]
    file_counts: BatchCounts
    jobs: list[JobOut]


class JobList(BaseModel):
    object: Literal["list"] = "list"
    data: list[JobOut]


class DocumentOut(BaseModel):
    id: str
    object: Literal["document"] = "document"
    source: str
    content_hash: str
    chunk_count: int
    metadata: dict[str, Any]


class DocumentList(BaseModel):
    object: Literal["list"] = "list"
    data: list[DocumentOut]
    #: Whether more documents follow; ask again with ``after=last``.
    has_more: bool = False
    #: The source of this page's last document (the ``after`` of the next page).
    last: str | None = None


class DeleteByFilter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    filters: dict[str, Any] = Field(
        description='a metadata filter, e.g. {"key": "year", "op": "<", "value": 2020}')


class DeletedDocuments(BaseModel):
    object: Literal["documents.deleted"] = "documents.deleted"
    deleted: int
    document_ids: list[str]


class RetrievalSettings(BaseModel):
    """The options of ragloom.retrieval.options.SearchOptions that search and ask share."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["vector", "keyword", "hybrid"] = "hybrid"
    # Each request sets its own default and ceiling (an answer reads fewer passages).
    top_k: int
    score_threshold: float | None = Field(None, ge=0.0, le=1.0)
    ranker: Literal["weighted", "rrf"] = "weighted"
    impact_factor: float = Field(60.0, gt=0.0, le=1e6)
    alpha: float = Field(0.5, ge=0.0, le=1.0)
    filters: dict[str, Any] | None = None
    candidates: int = Field(100, ge=1, le=1000)
    normalization: Literal["minmax", "zscore", "none"] = "minmax"
    graph: bool = Field(False, description="also take chunks mentioning the query's entities "
                        "and their neighbours in the knowledge graph")
    graph_hops: int = Field(1, ge=0, le=3)
    graph_fan_out: int = Field(10, ge=1, le=100)
    graph_weight: float = Field(0.5, ge=0.0, le=100.0)


class SearchSettings(RetrievalSettings):
    """Every option of ragloom.retrieval.options.SearchOptions."""

    knowledge_bases: list[str] = Field(min_length=1, max_length=16,
                                       description="ids or names of the caller's knowledge bases")
    top_k: int = Field(5, ge=1, le=1000)


class SearchIn(SearchSettings):
    query: str = Field(min_length=1, max_length=100_000)
    documents: bool = Field(False, description="one result per document (its best chunk)")


class MatchOut(BaseModel):
    number: int
    chunk_id: str
    document_id: str
    source: str
    knowledge_base: str
    score: float
    raw_score: float
    index: int
    page: int | None
    text: str
    metadata: dict[str, Any]


class SearchOut(BaseModel):
    object: Literal["search_result"] = "search_result"
    query: str
    matches: list[MatchOut]
    degraded: bool
    notice: str


class AskSettings(RetrievalSettings):
    question: str = Field(min_length=1, max_length=100_000)
    stream: bool = Field(False, description="answer as server-sent events: sources, delta..., "
                         "done (or error)")
    top_k: int = Field(5, ge=1, le=100)
    max_tokens_in_context: int | None = Field(1500, ge=1, le=100_000)
    max_answer_tokens: int | None = Field(None, ge=1, le=4096, description="most tokens of "
                                          "the answer [default: the engine's own]")
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    system_prompt: str | None = Field(None, max_length=10_000)
    grounding: Literal["strict", "check", "off"] = Field(
        "strict", description="strict: answers backed by the sentence they cite; check: "
        "unsupported numbers and names flagged; off: the model's answer as it came")


class AskIn(AskSettings):
    knowledge_bases: list[str] = Field(min_length=1, max_length=16)


class Citation(BaseModel):
    model_config = ConfigDict(extra="allow")

    number: int
    source: str
    chunk_id: str


class AnswerUsage(BaseModel):
    model_config = ConfigDict(extra="allow")

    input_tokens: int
    output_tokens: int


class AskOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    question: str
    answer: str
    sources: list[MatchOut]
    citations: list[Citation]
    supporting_quotes: list[dict[str, Any]]
    usage: AnswerUsage
    model: str
    degraded: bool
    notice: str
    session_id: str | None = None


class SessionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    knowledge_bases: list[str] = Field(min_length=1, max_length=16)
    title: str = Field("", max_length=500)


class SessionOut(BaseModel):
    id: str
    object: Literal["chat_session"] = "chat_session"
    title: str
    knowledge_bases: list[str]
    created_at: int


class SessionMessageOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str
    content: str
    created_at: int


class SessionDetail(SessionOut):
    messages: list[SessionMessageOut]


class SessionList(BaseModel):
    object: Literal["list"] = "list"
    data: list[SessionOut]

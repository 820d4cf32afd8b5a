"""Llama Stack's RAG tool as a library object: ``insert`` documents into vector
databases (knowledge bases) and ``query`` them for context formatted for a model.

::

    tool = RagTool(open_kb)                       # vector_db_id -> knowledge base
    tool.insert([RAGDocument(document_id="faq", content="...")], "support",
                chunk_size_in_tokens=256)
    result = tool.query("How long is the warranty?", ["support"],
                        RAGQueryConfig(max_chunks=3, mode="hybrid"))
    result.content     # "knowledge_search tool found 3 chunks:\\nBEGIN of ..."
    result.metadata    # {"document_ids": [...], "chunks": [...], "scores": [...]}
    result.to_dict()   # Llama Stack's wire shape: content as a list of text items

``query_config`` may also be a plain mapping in Llama Stack's JSON shape
(``{"max_chunks": 3, "ranker": {"type": "rrf", "impact_factor": 60},
"query_generator_config": {"type": "default", "separator": " "}}``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragloom.errors import InvalidInputError, QueryError
from ragloom.protocols import ModelProvider, TokenCounter
from ragloom.retrieval.options import SearchOptions
from ragloom.templates import check_rag_tool_template, rag_tool_values, render_template
from ragloom.types import Document, QueryMatch, TextDocument

__all__ = ["RAGDocument", "RAGQueryConfig", "RAGQueryResult", "RagTool"]

DEFAULT_CHUNK_TEMPLATE = "Result {index}\nContent: {chunk.content}\nMetadata: {metadata}\n"
DEFAULT_LLM_TEMPLATE = (
    "Write one search query that would find passages answering the conversation's last "
    "question. Reply with the query only.\n\n{messages}"
)


@dataclass(frozen=True, kw_only=True)
class RAGDocument:
    """A document to insert, as Llama Stack names it."""

    document_id: str
    content: str
    mime_type: str = "text/plain"
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class RAGQueryConfig:
    """How ``query`` searches and formats (Llama Stack's ``RAGQueryConfig``).

    ``ranker`` is ``{"type": "rrf", "impact_factor": 60}`` or ``{"type":
    "weighted", "alpha": 0.5}``; ``query_generator_config`` is ``{"type":
    "default", "separator": " "}`` or ``{"type": "llm", "model": "...",
    "template": "... {messages} ..."}``.
    """

    max_chunks: int = 5
    max_tokens_in_context: int = 4096
    chunk_template: str = DEFAULT_CHUNK_TEMPLATE
    mode: str = "vector"
    ranker: Mapping[str, Any] | None = None
    query_generator_config: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "default", "separator": " "})
    score_threshold: float | None = None

    def __post_init__(self) -> None:
        if self.max_chunks < 1:
            raise InvalidInputError("max_chunks must be at least 1")
        if self.max_tokens_in_context < 1:
            raise InvalidInputError("max_tokens_in_context must be at least 1")
        for name in ("{index}", "{chunk.content}"):
            if name not in self.chunk_template:
                raise InvalidInputError(f"chunk_template needs {name}")
        check_rag_tool_template(self.chunk_template)
        kind = self.query_generator_config.get("type", "default")
        if kind not in ("default", "llm"):
            raise InvalidInputError(f"query_generator_config type {kind!r} is not default "
                                    "or llm")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> RAGQueryConfig:
        known = {"max_chunks", "max_tokens_in_context", "chunk_template", "mode", "ranker",
                 "query_generator_config", "score_threshold"}
        unknown = set(data or {}) - known
        if unknown:
            raise InvalidInputError(f"unknown query_config field(s) {sorted(unknown)}; "
                                    f"known: {sorted(known)}")
        return cls(**{k: v for k, v in (data or {}).items() if v is not None})

    def search_options(self) -> SearchOptions:
        ranker = dict(self.ranker or {})
        kind = ranker.get("type", SearchOptions().ranker)
        options = SearchOptions(mode=self.mode, top_k=self.max_chunks,  # type: ignore[arg-type]
                                ranker=kind, score_threshold=self.score_threshold)
        if "impact_factor" in ranker:
            options = options.with_(impact_factor=float(ranker["impact_factor"]))
        if "alpha" in ranker:
            options = options.with_(alpha=float(ranker["alpha"]))
        return options


@dataclass(frozen=True, kw_only=True)
class RAGQueryResult:
    """Context for a model (``content``, also as ``items``) and what it came from."""

    content: str
    items: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    matches: tuple[QueryMatch, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": item} for item in self.items],
                "metadata": dict(self.metadata)}


def _content_text(content: Any, separator: str) -> str:
    """Llama Stack's interleaved content (a string, text items, or a list) as text."""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        return str(content.get("text", ""))
    if isinstance(content, Sequence):
        return separator.join(t for t in (_content_text(c, separator) for c in content) if t)
    return str(content)


def _approx_tokens(text: str) -> int:
    return max(1, len(text.split()) * 4 // 3)


class RagTool:
    """The RAG tool over knowledge bases named by ``vector_db_id``.

    ``knowledge_bases`` maps an id to a knowledge base (a mapping, or a function
    that opens one, e.g. in the server's database); ``models`` resolves the model
    name of an ``llm`` query generator.
    """

    def __init__(self, knowledge_bases: Mapping[str, Any] | Callable[[str], Any], *,
                 models: Callable[[str], ModelProvider] | None = None) -> None:
        self._knowledge_bases = knowledge_bases
        self._models = models

    def knowledge_base(self, vector_db_id: str) -> Any:
        if callable(self._knowledge_bases):
            return self._knowledge_bases(vector_db_id)
        try:
            return self._knowledge_bases[vector_db_id]
        except KeyError:
            known = ", ".join(sorted(self._knowledge_bases)) or "none"
            raise QueryError(f"no vector database {vector_db_id!r}; known: {known}") from None

    # -------------------------------------------------------------------- insert
    def insert(self, documents: Sequence[RAGDocument | Document | Mapping[str, Any]],
               vector_db_id: str, chunk_size_in_tokens: int = 512) -> Any:
        """Chunk (``chunk_size_in_tokens`` of the knowledge base's embedder, a quarter
        of it overlapping), embed and store; returns the ingest report."""
        from ragloom.chunking import RecursiveSplitter
        from ragloom.knowledge_base import VectorKnowledgeBase

        if chunk_size_in_tokens < 8:
            raise InvalidInputError("chunk_size_in_tokens must be at least 8")
        base = self.knowledge_base(vector_db_id)
        counter = base.embedder if isinstance(base.embedder, TokenCounter) else None
        size = chunk_size_in_tokens if counter is not None else chunk_size_in_tokens * 4
        splitter = RecursiveSplitter(size, size // 4, token_counter=counter)
        sized = VectorKnowledgeBase(base.store, base.embedder, splitter, name=base.name,
                                    search=base.search_options)
        return sized.ingest([self._document(d) for d in documents])

    @staticmethod
    def _document(item: RAGDocument | Document | Mapping[str, Any]) -> Document:
        if isinstance(item, Document):
            return item
        if isinstance(item, Mapping):
            item = RAGDocument(document_id=str(item["document_id"]),
                               content=_content_text(item.get("content", ""), "\n"),
                               mime_type=str(item.get("mime_type") or "text/plain"),
                               metadata=dict(item.get("metadata") or {}))
        metadata = {**item.metadata, "document_id": item.document_id,
                    "mime_type": item.mime_type}
        return TextDocument.create(item.content, source=item.document_id, metadata=metadata)

    # --------------------------------------------------------------------- query
    def generate_query(self, content: Any, config: RAGQueryConfig) -> str:
        generator = config.query_generator_config
        if generator.get("type", "default") == "default":
            return _content_text(content, str(generator.get("separator", " "))).strip()
        if self._models is None or not generator.get("model"):
            raise InvalidInputError("an llm query generator needs a model name and a RagTool "
                                    "built with models=")
        template = str(generator.get("template") or DEFAULT_LLM_TEMPLATE)
        messages = _content_text(content, "\n")
        model = self._models(str(generator["model"]))
        reply = model.chat(template.replace("{messages}", messages), temperature=0.0,
                           max_tokens=64).text.strip()
        return reply.splitlines()[0].strip().strip("\"'") if reply else messages

    def query(self, content: Any, vector_db_ids: Sequence[str],
              query_config: RAGQueryConfig | Mapping[str, Any] | None = None
              ) -> RAGQueryResult:
        config = (query_config if isinstance(query_config, RAGQueryConfig)
                  else RAGQueryConfig.from_dict(query_config))
        if not vector_db_ids:
            raise QueryError("name at least one vector_db_id to search")
        query = self.generate_query(content, config)
        options = config.search_options()
        matches: list[QueryMatch] = []
        for vector_db_id in dict.fromkeys(vector_db_ids):
            base = self.knowledge_base(vector_db_id)
            found = base.search(query, options).matches
            matches.extend(QueryMatch(chunk=m.chunk, score=m.score, raw_score=m.raw_score,
                                      knowledge_base=vector_db_id) for m in found)
        matches.sort(key=lambda m: -m.score)
        matches = matches[: config.max_chunks]
        return self.format(query, matches, config)

    def format(self, query: str, matches: Sequence[QueryMatch], config: RAGQueryConfig
               ) -> RAGQueryResult:
        """Llama Stack's layout: a header, one templated block per chunk while the
        token budget lasts, an END line and a reminder of the query."""
        if not matches:
            text = "No relevant information found for the query.\n"
            return RAGQueryResult(content=text, items=(text,), metadata={
                "document_ids": [], "chunks": [], "scores": [], "query": query})
        items = [f"knowledge_search tool found {len(matches)} chunks:\n"
                 "BEGIN of knowledge_search tool results.\n"]
        used: list[QueryMatch] = []
        tokens = 0
        for index, match in enumerate(matches, start=1):
            chunk = match.chunk
            document_id = str(chunk.metadata.get("document_id") or chunk.source
                              or chunk.document_id)
            metadata = {"document_id": document_id, "chunk_id": chunk.id,
                        "vector_db_id": match.knowledge_base}
            block = render_template(config.chunk_template, rag_tool_values(
                index, chunk.text, chunk.id, document_id, chunk.metadata, metadata))
            tokens += _approx_tokens(block)
            if tokens > config.max_tokens_in_context and used:
                break
            items.append(block)
            used.append(match)
        items.append("END of knowledge_search tool results.\n")
        items.append(f'The above results were retrieved to help answer the user\'s query: '
                     f'"{query}". Use them as supporting information only in answering this '
                     "query.\n")
        summary: dict[str, Any] = {
            "document_ids": [str(m.chunk.metadata.get("document_id") or m.chunk.source
                                 or m.chunk.document_id) for m in used],
            "chunks": [m.chunk.text for m in used],
            "scores": [m.score for m in used],
            "vector_db_ids": [m.knowledge_base for m in used],
            "query": query,
        }
        return RAGQueryResult(content="".join(items), items=tuple(items), metadata=summary,
                              matches=tuple(used))

"""The MCP tools as plain functions over ragloom's library API.

Each function takes a :class:`Backend` (where the knowledge bases are: a local
database for ``ragloom mcp``, one tenant's knowledge bases in ``ragloom serve``)
and the tool's arguments as a client sends them, checks the arguments, and returns
a JSON-ready dict. A bad argument is a :class:`ToolArgumentError` whose message
starts with the argument's name; the MCP layer turns it into an error result.

Answers go through :func:`answer_question`, the one call to the answer engine.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ragloom.errors import InvalidInputError, QueryError, RagError
from ragloom.filters import MetadataFilters, kind_of, parse_filters
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import ModelProvider
from ragloom.rag import RagAnswer
from ragloom.retrieval.options import SearchOptions
from ragloom.types import ChatMessage, QueryMatch

MODES = ("vector", "keyword", "hybrid")
MAX_TOP_K = 50
DEFAULT_SEARCH_TOP_K = 5
DEFAULT_ASK_TOP_K = 5
MAX_TEXT_CHARS = 1_000_000
MAX_NAME_CHARS = 200


class ToolArgumentError(InvalidInputError):
    """A tool argument that cannot be used; the message starts with its name."""

    def __init__(self, argument: str, message: str = "invalid value") -> None:
        self.argument = argument
        super().__init__(f"{argument}: {message}")


@dataclass(frozen=True)
class KnowledgeBaseInfo:
    """What an agent needs to choose a knowledge base."""

    name: str
    documents: int
    chunks: int
    embedder: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "documents": self.documents, "chunks": self.chunks,
                "embedder": self.embedder}


class Backend(Protocol):
    """Where the tools find knowledge bases, the model and chat sessions."""

    def list_knowledge_bases(self) -> list[KnowledgeBaseInfo]:
        """The knowledge bases the caller may use."""
        ...

    def knowledge_base(self, name: str | None, *, create: bool = False) -> VectorKnowledgeBase:
        """The named one (None: the default); a ToolArgumentError naming
        ``knowledge_base`` when there is no such one and ``create`` is false."""
        ...

    def model(self) -> ModelProvider | None:
        """The answering model (built on first call; None: retrieval only)."""
        ...

    def history(self, session: str) -> list[ChatMessage]:
        """The earlier turns of a chat session (empty for a new one)."""
        ...

    def remember(self, session: str, knowledge_base: str, answer: RagAnswer) -> None:
        """Add a question and its answer to a chat session."""
        ...


# --------------------------------------------------------------------------- checks
def _text(argument: str, value: object, *, limit: int = MAX_TEXT_CHARS) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ToolArgumentError(argument, "must be non-empty text")
    if len(value) > limit:
        raise ToolArgumentError(argument, f"has {len(value):,} characters; the limit is "
                                f"{limit:,}")
    return value


def _name(argument: str, value: str | None) -> str | None:
    if value is None:
        return None
    return _text(argument, value, limit=MAX_NAME_CHARS)


def check_top_k(top_k: object) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise ToolArgumentError("top_k", f"must be a whole number from 1 to {MAX_TOP_K}, "
                                f"not {top_k!r}")
    return top_k


def check_mode(mode: object) -> str:
    if mode not in MODES:
        raise ToolArgumentError("mode", f"must be one of {', '.join(MODES)}, not {mode!r}")
    return str(mode)


def check_query(argument: str, query: object) -> str:
    from ragloom.retrieval.search import check_query as library_check

    if not isinstance(query, str):
        raise ToolArgumentError(argument, "must be text")
    try:
        return library_check(query)
    except QueryError as exc:
        raise ToolArgumentError(argument, str(exc)) from exc


def parse_filter_argument(raw: object, store: Any) -> MetadataFilters | None:
    """``filters`` as ragloom's filter JSON (a string, or an object already parsed),
    checked against the metadata keys the knowledge base holds."""
    if raw is None or raw == "":
        return None
    data: object = raw
    if isinstance(raw, str):
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ToolArgumentError("filters", f"is not valid JSON: {exc.msg} at character "
                                    f"{exc.pos}") from exc
    try:
        filters = parse_filters(data)
    except RagError as exc:
        raise ToolArgumentError("filters", str(exc)) from exc
    metadata_keys = getattr(store, "metadata_keys", None)
    if not callable(metadata_keys):
        return filters
    known: dict[str, set[str]] = metadata_keys()
    for leaf in filters.leaves():
        if leaf.key not in known:
            names = ", ".join(sorted(known)) or "none"
            raise ToolArgumentError("filters", f"no passage has the metadata key {leaf.key!r}; "
                                    f"keys present: {names}")
        values = leaf.value if isinstance(leaf.value, tuple) else (leaf.value,)
        kinds = {kind_of(v) for v in values}
        held = known[leaf.key]
        if held and not kinds & held:
            raise ToolArgumentError(
                "filters", f"metadata key {leaf.key!r} holds {'/'.join(sorted(held))} values, "
                f"not {'/'.join(sorted(k or '?' for k in kinds))}")
    return filters


def _non_empty(knowledge_base: VectorKnowledgeBase) -> VectorKnowledgeBase:
    if knowledge_base.store.count() == 0:
        raise ToolArgumentError("knowledge_base", f"{knowledge_base.name!r} is empty; add "
                                "documents to it first")
    return knowledge_base


# --------------------------------------------------------------------------- results
def passage(number: int, match: QueryMatch) -> dict[str, Any]:
    """One passage as a tool returns it: where it is, how well it matched, its text."""
    chunk = match.chunk
    metadata = chunk.metadata
    source = chunk.source or chunk.document_id
    file_name = str(metadata.get("file_name") or source)
    row = metadata.get("row", metadata.get("row_number"))
    location = file_name
    if chunk.page is not None:
        location += f", page {chunk.page}"
    if isinstance(row, int):
        location += f", row {row}"
    return {"number": number, "source": source, "file": file_name, "page": chunk.page,
            "row": row if isinstance(row, int) else None, "location": location,
            "score": round(float(match.score), 4), "text": chunk.text,
            "knowledge_base": match.knowledge_base, "document_id": chunk.document_id,
            "chunk_id": chunk.id}


# --------------------------------------------------------------------------- tools
def list_knowledge_bases(backend: Backend) -> dict[str, Any]:
    return {"knowledge_bases": [info.to_dict() for info in backend.list_knowledge_bases()]}


def search(backend: Backend, query: str, knowledge_base: str | None = None,
           top_k: int = DEFAULT_SEARCH_TOP_K, mode: str = "hybrid",
           filters: str | Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Passages for ``query``, best first."""
    query = check_query("query", query)
    top_k, mode = check_top_k(top_k), check_mode(mode)
    base = _non_empty(backend.knowledge_base(_name("knowledge_base", knowledge_base)))
    options = SearchOptions(mode=mode, top_k=top_k,  # type: ignore[arg-type]
                            filters=parse_filter_argument(filters, base.store))
    result = base.search(query, options)
    return {"query": query, "knowledge_base": base.name, "mode": mode,
            "passages": [passage(n, m) for n, m in enumerate(result.matches, 1)],
            "notice": result.notice or None}


class _FollowUp:
    """A knowledge base searched with the previous question before the new one, so a
    follow-up ("and the second one?") finds its passages."""

    def __init__(self, knowledge_base: VectorKnowledgeBase, previous: str) -> None:
        self.knowledge_base = knowledge_base
        self.previous = previous
        self.name = knowledge_base.name
        self.embedder = knowledge_base.embedder
        self.store = knowledge_base.store
        self.search_options = knowledge_base.search_options

    def search(self, query: str, options: SearchOptions | None = None) -> Any:
        return self.knowledge_base.search(f"{self.previous}\n{query}", options)


def answer_question(knowledge_base: VectorKnowledgeBase, model: ModelProvider | None,
                    question: str, options: SearchOptions,
                    history: Sequence[ChatMessage] = ()) -> RagAnswer:
    """The one call to the answer engine (what ``ragloom ask`` uses): retrieve, answer
    with numbered citations, check the answer against its passages."""
    from ragloom.answering.corpus import KnowledgeBaseCorpus
    from ragloom.rag import NaiveRag

    previous = [m.content for m in history if m.role == "user"]
    searched: Any = _FollowUp(knowledge_base, previous[-1]) if previous else knowledge_base
    rag = NaiveRag(searched, model, search=options,
                   corpus=KnowledgeBaseCorpus([knowledge_base], filters=options.filters))
    return rag.query(question, history=history)


def ask(backend: Backend, question: str, knowledge_base: str | None = None,
        session: str | None = None) -> dict[str, Any]:
    """An answer with numbered citations and the quote that supports it."""
    question = check_query("question", question)
    session = _name("session", session)
    base = _non_empty(backend.knowledge_base(_name("knowledge_base", knowledge_base)))
    history = backend.history(session) if session else []
    answer = answer_question(base, backend.model(), question,
                             SearchOptions(top_k=DEFAULT_ASK_TOP_K), history)
    if session:
        backend.remember(session, base.name, answer)
    sources = [passage(n, m) for n, m in enumerate(answer.sources, 1)]
    cited = [n for n in answer.citations if 1 <= n <= len(sources)]
    return {"question": question, "answer": answer.answer, "knowledge_base": base.name,
            "citations": [{"number": n, "source": sources[n - 1]["source"],
                           "location": sources[n - 1]["location"]} for n in cited],
            "quotes": [{"text": answer.quote, "number": cited[0] if cited else None}]
            if answer.quote else [],
            "refused": answer.refused, "sources": sources, "session": session,
            "notice": answer.notice or None, "model": answer.model or None}


def ingest_text(backend: Backend, text: str, knowledge_base: str | None = None,
                source: str | None = None,
                metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Add a text document (created with the knowledge base if need be)."""
    from ragloom.types import TextDocument

    text = _text("text", text)
    source = _name("source", source)
    if metadata is not None and not isinstance(metadata, Mapping):
        raise ToolArgumentError("metadata", "must be a JSON object")
    base = backend.knowledge_base(_name("knowledge_base", knowledge_base), create=True)
    document = TextDocument.create(text, source=source or "", metadata=dict(metadata or {}))
    report = base.ingest([document])
    return {"knowledge_base": base.name, "document_id": document.id,
            "source": document.source, "chunks": report.chunks_written,
            "unchanged": report.chunks_written == 0}


def delete_document(backend: Backend, document_id: str,
                    knowledge_base: str | None = None) -> dict[str, Any]:
    """Remove one document, named by its id or its source."""
    document_id = _text("document_id", document_id, limit=4096)
    base = backend.knowledge_base(_name("knowledge_base", knowledge_base))
    deleted = base.delete([document_id]) > 0
    if not deleted:
        deleted = bool(base.delete_sources([document_id]))
    if not deleted:
        raise ToolArgumentError("document_id", f"no document {document_id!r} in the "
                                f"knowledge base {base.name!r} (give an id from search "
                                "results, or a source)")
    return {"knowledge_base": base.name, "deleted": document_id}

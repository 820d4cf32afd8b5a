"""The contracts between ragloom's parts: one small Protocol per role.

A new backend implements one protocol; optional capabilities (keyword search,
document bookkeeping) are protocols of their own so a retriever or knowledge base
can check for them with ``isinstance`` instead of knowing store classes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ragloom.filters import MetadataFilters
from ragloom.types import (
    ChatDelta,
    ChatMessage,
    ChatResponse,
    Document,
    Embedding,
    QueryMatch,
    RagAnswer,
    TextChunk,
    TextDocument,
    Tool,
    VectorEntry,
    VectorMatch,
)


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens the way a model does; chunkers size chunks with it."""

    def count_tokens(self, text: str) -> int: ...


@runtime_checkable
class TokenSpanner(Protocol):
    """A token counter that can also say where each token of a text lies.

    ``token_spans`` gives the ``(start, end)`` character offsets of the tokens
    ``count_tokens`` counts, or None when its tokenizer's tokens may cross
    whitespace or punctuation (then a piece cut at a word edge would not tokenize
    as it does inside the text). A splitter then tokenizes a document once and
    measures each piece by counting the tokens inside it.
    """

    def token_spans(self, text: str) -> Sequence[tuple[int, int]] | None: ...


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into embeddings, in batches; queries have their own path."""

    @property
    def name(self) -> str:
        """``provider:model``, recorded by every knowledge base it fills."""
        ...

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]: ...

    def embed_query(self, text: str) -> Embedding: ...


@runtime_checkable
class VectorStore(Protocol):
    """Holds embedded chunks and finds the nearest ones."""

    def add(self, entries: Sequence[VectorEntry]) -> None:
        """Insert or replace entries (upsert by chunk id)."""
        ...

    def query(
        self, embedding: Embedding, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[VectorMatch]: ...

    def delete(self, ids: Sequence[str]) -> int:
        """Remove entries by chunk id; returns how many were removed."""
        ...

    def count(self) -> int: ...


@runtime_checkable
class KeywordSearchable(Protocol):
    """A store that can rank chunks by keyword relevance (BM25)."""

    def keyword_query(
        self, text: str, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[VectorMatch]: ...


@runtime_checkable
class RankedSearchable(Protocol):
    """A keyword-searchable store that ranks chunk ids without reading chunks back.

    Hybrid search asks each side for ``candidates`` matches but returns ``top_k``:
    with these it fuses (chunk id, score, raw score) lists and reads only the chunks
    it returns. Scores and order are those of ``query`` and ``keyword_query``.
    """

    def ranked_ids(
        self, embedding: Embedding, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[tuple[str, float, float]]: ...

    def keyword_ranked_ids(
        self, text: str, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[tuple[str, float, float]]: ...

    def get_chunks(self, ids: Sequence[str]) -> list[TextChunk]: ...


@runtime_checkable
class EmbeddingReadable(Protocol):
    """A store that gives back the embeddings it holds, as they were added (searches
    with ``include_embeddings`` attach them to their matches)."""

    def get_embeddings(self, ids: Sequence[str]) -> dict[str, Embedding]:
        """The stored embeddings of these chunk ids; unknown ids are absent."""
        ...


class RankingView(Protocol):
    """Both rankings of one consistent state of a store (see :class:`ViewRankable`).

    ``keyword_ranked_ids`` runs on the thread that opened the view; ``ranked_ids`` may
    run on another thread at the same time, while the view is open. Both answer as
    the store's methods of the same names would, with the view's filters.
    """

    def ranked_ids(self, embedding: Embedding, top_k: int) -> list[tuple[str, float, float]]:
        ...

    def keyword_ranked_ids(self, text: str, top_k: int) -> list[tuple[str, float, float]]:
        ...


@runtime_checkable
class ViewRankable(RankedSearchable, Protocol):
    """A ranked store whose vector and keyword rankings can run at once on two threads
    over one snapshot: a hybrid query on a large store ranks both sides side by side."""

    def ranking_view(
        self, filters: MetadataFilters | None = None
    ) -> AbstractContextManager[RankingView]: ...


@dataclass(frozen=True, kw_only=True)
class StoredDocument:
    """What a store remembers about an ingested document."""

    id: str
    source: str
    content_hash: str
    chunk_count: int
    settings: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class CollectionInfo:
    """The embedding model a knowledge base was built with."""

    name: str
    embedder: str
    dimension: int


@dataclass(frozen=True, kw_only=True)
class CollectionStats:
    """Size and settings of one collection (knowledge base) in a store."""

    name: str
    embedder: str | None
    dimension: int | None
    metric: str
    document_count: int
    chunk_count: int


@runtime_checkable
class CollectionHandle(Protocol):
    """An open collection a server keeps: what the handle cache needs of it.

    ``drop`` deletes the collection and everything in it (False when there was none;
    later writes through this handle raise
    :class:`~ragloom.errors.CollectionDroppedError` instead of creating it again),
    ``stats`` sizes it, ``close`` frees what it holds (connection, pool, in-memory
    indexes); a closed handle reopens on its next use.
    """

    def drop(self) -> bool: ...

    def stats(self) -> CollectionStats: ...

    def close(self) -> None: ...


@runtime_checkable
class DocumentIndex(Protocol):
    """Document bookkeeping a knowledge base needs: one record per source."""

    def collection_info(self) -> CollectionInfo | None: ...

    def bind_embedder(self, embedder: str, dimension: int) -> CollectionInfo:
        """Record the embedder on first use; refuse a different one afterwards."""
        ...

    def find_document(self, source: str) -> StoredDocument | None: ...

    def replace_document(
        self, document: Document, entries: Sequence[VectorEntry], *, settings: str = ""
    ) -> None:
        """Store a document and its chunks atomically, replacing any earlier
        document from the same source."""
        ...

    def delete_documents(self, document_ids: Sequence[str]) -> int: ...

    def list_documents(self) -> list[StoredDocument]: ...


@runtime_checkable
class Chunker(Protocol):
    """Splits a document into chunks."""

    def split(self, document: TextDocument) -> list[TextChunk]: ...


@runtime_checkable
class Retriever(Protocol):
    def retrieve(self, query: str, filters: MetadataFilters | None = None) -> list[QueryMatch]: ...


@runtime_checkable
class Reranker(Protocol):
    """Re-scores matches for a question; may reorder and drop them."""

    def rerank(self, question: str, matches: Sequence[QueryMatch]) -> list[QueryMatch]: ...


@runtime_checkable
class KnowledgeBase(Protocol):
    def ingest(self, items: Sequence[Document] | Sequence[TextChunk]) -> Any: ...

    def retrieve(self, query: str, filters: MetadataFilters | None = None) -> list[QueryMatch]: ...

    def delete(self, document_ids: Sequence[str]) -> int: ...


@runtime_checkable
class ModelProvider(Protocol):
    """A chat model: one user message or a conversation in, an assistant message out."""

    @property
    def name(self) -> str: ...

    def chat(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage],
        *,
        tools: Sequence[Tool] = (),
        stop: Sequence[str] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatResponse: ...

    def stream(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage],
        *,
        tools: Sequence[Tool] = (),
        stop: Sequence[str] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[ChatDelta]:
        """Text deltas; the last delta carries the full ChatResponse."""
        ...


@runtime_checkable
class Rag(Protocol):
    def ingest(self, documents: Sequence[Document]) -> Any: ...

    def query(self, question: str, filters: MetadataFilters | None = None) -> RagAnswer: ...


def as_messages(messages: str | ChatMessage | Sequence[ChatMessage]) -> list[ChatMessage]:
    """One message or a conversation, as a list of messages: a ``str`` is one user
    message, a single :class:`ChatMessage` is kept whole (whatever its role)."""
    if isinstance(messages, str):
        return [ChatMessage.user(messages)]
    if isinstance(messages, ChatMessage):
        return [messages]
    return list(messages)

"""ragloom: retrieval-augmented generation, offline by default.

The curated public API. Importing ragloom loads no model, torch, web framework or
SDK; those come in when a provider or command needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragloom.errors import RagError
from ragloom.filters import MetadataFilter, MetadataFilters, evaluate, parse_filters
from ragloom.knowledge_base import IngestReport, VectorKnowledgeBase
from ragloom.protocols import (
    Chunker,
    DocumentIndex,
    EmbeddingProvider,
    KeywordSearchable,
    KnowledgeBase,
    ModelProvider,
    Rag,
    Reranker,
    Retriever,
    VectorStore,
)
from ragloom.rag import NaiveRag, RagAnswer, augment_user_query
from ragloom.registry import make_embedder, make_model
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.vector import VectorRetriever
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.types import (
    BinaryDocument,
    ChatMessage,
    ChatResponse,
    Chunk,
    Document,
    Embedding,
    HybridVector,
    Prompt,
    QueryMatch,
    SparseVector,
    TextChunk,
    TextDocument,
    Tool,
    ToolCall,
    Usage,
    Vector,
    VectorEntry,
    VectorMatch,
)

if TYPE_CHECKING:
    from ragloom.stores.sqlite import SqliteVectorStore

__version__ = "0.1.0"

__all__ = [
    "BinaryDocument", "ChatMessage", "ChatResponse", "Chunk", "Chunker", "Document",
    "DocumentIndex", "Embedding",
    "EmbeddingProvider", "HybridVector", "InMemoryVectorStore", "IngestReport",
    "KeywordSearchable", "KnowledgeBase", "MetadataFilter", "MetadataFilters", "ModelProvider",
    "NaiveRag", "Prompt", "QueryMatch", "Rag", "RagAnswer", "RagError", "Reranker", "Retriever",
    "SearchOptions", "SparseVector", "SqliteVectorStore", "TextChunk", "TextDocument", "Tool",
    "ToolCall", "Usage", "Vector", "VectorEntry", "VectorKnowledgeBase", "VectorMatch",
    "VectorRetriever", "VectorStore", "__version__", "augment_user_query", "evaluate",
    "make_embedder", "make_model", "parse_filters",
]


def __getattr__(name: str) -> Any:
    if name == "SqliteVectorStore":
        from ragloom.stores.sqlite import SqliteVectorStore

        return SqliteVectorStore
    raise AttributeError(f"module 'ragloom' has no attribute {name!r}")

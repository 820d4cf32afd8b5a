"""Core value types: documents, chunks, embeddings, matches and chat messages.

Everything here is a frozen dataclass with no I/O. Ids are content-addressed, so the
same content from the same source always gets the same id and ingesting it twice is
a no-op. ``to_dict`` / ``from_dict`` give one versioned JSON shape for each type.

This is the public module: import every value type from here. The definitions live
by role in ``ragloom._types``: ``documents`` (documents, chunks, ids, metadata),
``vectors`` (embeddings and matches), ``chat`` (messages, responses, ``Prompt``) and
``answers`` (``RagAnswer``).
"""

from __future__ import annotations

from ragloom._types.answers import RagAnswer
from ragloom._types.chat import (
    ChatDelta,
    ChatMessage,
    ChatResponse,
    Prompt,
    PromptPart,
    Role,
    Tool,
    ToolCall,
    Usage,
    part_text,
)
from ragloom._types.documents import (
    JSON,
    SCHEMA_VERSION,
    BinaryDocument,
    Chunk,
    Document,
    JSONScalar,
    Metadata,
    TextChunk,
    TextDocument,
    content_id,
    text_hash,
    without_nul,
)
from ragloom._types.vectors import (
    Embedding,
    FloatArray,
    HybridVector,
    QueryMatch,
    SparseVector,
    Vector,
    VectorEntry,
    VectorMatch,
)

__all__ = [
    "JSON",
    "SCHEMA_VERSION",
    "BinaryDocument",
    "ChatDelta",
    "ChatMessage",
    "ChatResponse",
    "Chunk",
    "Document",
    "Embedding",
    "FloatArray",
    "HybridVector",
    "JSONScalar",
    "Metadata",
    "Prompt",
    "PromptPart",
    "QueryMatch",
    "RagAnswer",
    "Role",
    "SparseVector",
    "TextChunk",
    "TextDocument",
    "Tool",
    "ToolCall",
    "Usage",
    "Vector",
    "VectorEntry",
    "VectorMatch",
    "content_id",
    "part_text",
    "text_hash",
    "without_nul",
]

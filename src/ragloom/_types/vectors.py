"""Embeddings (dense, sparse, hybrid) and what stores and retrievers return for them:
``VectorEntry``, ``VectorMatch``, ``QueryMatch``. Re-exported by :mod:`ragloom.types`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from ragloom._types.documents import TextChunk

# -------------------------------------------------------------------------- embeddings

FloatArray: TypeAlias = npt.NDArray[np.float32]


@dataclass(frozen=True, eq=False)
class Vector:
    """A dense embedding (float32)."""

    values: FloatArray

    def __post_init__(self) -> None:
        array = np.asarray(self.values, dtype=np.float32)
        if array.ndim != 1:
            raise ValueError("a Vector holds a one-dimensional array")
        object.__setattr__(self, "values", array)

    @property
    def dimension(self) -> int:
        return int(self.values.shape[0])

    def to_dict(self) -> dict[str, Any]:
        return {"type": "vector", "values": self.values.tolist()}


@dataclass(frozen=True, eq=False)
class SparseVector:
    """A sparse embedding: parallel tuples of indices and values."""

    indices: tuple[int, ...]
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.indices) != len(self.values):
            raise ValueError("SparseVector needs as many values as indices")

    def to_dict(self) -> dict[str, Any]:
        return {"type": "sparse", "indices": list(self.indices), "values": list(self.values)}


@dataclass(frozen=True, eq=False)
class HybridVector:
    """A dense and a sparse embedding of the same text."""

    dense: Vector
    sparse: SparseVector

    def to_dict(self) -> dict[str, Any]:
        return {"type": "hybrid", "dense": self.dense.to_dict(), "sparse": self.sparse.to_dict()}


Embedding: TypeAlias = Vector | SparseVector | HybridVector


# ----------------------------------------------------------------------------- matches


@dataclass(frozen=True, kw_only=True, eq=False)
class VectorEntry:
    """What a vector store holds: a chunk and its embedding."""

    chunk: TextChunk
    embedding: Embedding

    @property
    def id(self) -> str:
        return self.chunk.id


@dataclass(frozen=True, kw_only=True)
class VectorMatch:
    """A store's answer to a query.

    ``score`` is in [0, 1], higher is better, whatever the store, metric or mode;
    ``raw_score`` is the store's own number (cosine, distance, BM25...).
    """

    chunk: TextChunk
    score: float
    raw_score: float


@dataclass(frozen=True, kw_only=True)
class QueryMatch:
    """A retrieved chunk with its score, as a retriever returns it.

    ``embedding`` is the chunk's stored embedding when the search asked for it
    (``SearchOptions(include_embeddings=True)``), else None.
    """

    chunk: TextChunk
    score: float
    raw_score: float = 0.0
    knowledge_base: str = ""
    embedding: Embedding | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        data = {"chunk_id": self.chunk.id, "document_id": self.chunk.document_id,
                "document": self.chunk.source or self.chunk.document_id, "score": self.score,
                "raw_score": self.raw_score, "knowledge_base": self.knowledge_base,
                "text": self.chunk.text, "metadata": dict(self.chunk.metadata)}
        if self.embedding is not None:
            data["embedding"] = self.embedding.to_dict()
        return data

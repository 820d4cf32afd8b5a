"""Embeddings from the OpenAI API or any server with ``/v1/embeddings`` (``openai:``).

The dimension is known before the first call for OpenAI's own models (or from the
``dimensions`` option); for other models one probe call discovers it, once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragloom.errors import InvalidInputError
from ragloom.models._http import DEFAULT_TIMEOUT, bad_response
from ragloom.models.openai import OpenAIChatModel
from ragloom.types import Embedding, Vector

KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
DEFAULT_BATCH_SIZE = 128


class OpenAIEmbedder:
    """Dense embeddings through the OpenAI embeddings endpoint."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        batch_size: int = DEFAULT_BATCH_SIZE,
        dimensions: int | None = None,
        provider: str = "openai",
    ) -> None:
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be at least 1, not {batch_size}")
        # The chat model owns client creation, key handling and error mapping.
        self._api = OpenAIChatModel(model, base_url=base_url, timeout=timeout, provider=provider)
        self.model = model
        self.provider = provider
        self.batch_size = batch_size
        self.dimensions = dimensions
        self._dimension: int | None = dimensions or KNOWN_DIMENSIONS.get(model)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self._api.base_url!r})"

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self.embed_query("dimension probe")
        assert self._dimension is not None
        return self._dimension

    def _batch(self, texts: Sequence[str]) -> list[Vector]:
        request: dict[str, Any] = {"model": self.model, "input": list(texts),
                                   "encoding_format": "float"}
        if self.dimensions:
            request["dimensions"] = self.dimensions
        client = self._api.client()
        try:
            response = client.embeddings.create(**request)
        except Exception as exc:
            mapped = self._api.error(exc)
            if mapped is None:
                raise
            raise mapped from exc
        try:
            rows = sorted(response.data, key=lambda row: row.index)
            vectors = [Vector(row.embedding) for row in rows]
        except (AttributeError, TypeError, ValueError) as exc:
            raise bad_response(f"no embeddings in {str(response)[:200]!r}",
                               provider=self.provider, model=self.model) from exc
        if len(vectors) != len(texts):
            raise bad_response(f"asked for {len(texts)} embeddings, got {len(vectors)}",
                               provider=self.provider, model=self.model)
        if vectors:
            self._dimension = vectors[0].dimension
        return vectors

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        out: list[Embedding] = []
        for start in range(0, len(texts), self.batch_size):
            out.extend(self._batch(texts[start:start + self.batch_size]))
        return out

    def embed_query(self, text: str) -> Embedding:
        return self._batch([text])[0]


def create_embedder(model: str, *, provider: str = "openai", **options: Any) -> OpenAIEmbedder:
    """Registry entry: ``openai:text-embedding-3-small``; options ``base_url``, ``timeout``,
    ``batch_size``, ``dimensions``."""
    return OpenAIEmbedder(model, provider=provider, **options)

"""Embeddings from an Ollama server's ``/api/embed`` (``ollama:`` names).

Ollama does not say a model's dimension up front, so one probe call discovers it
(unless the ``dimensions`` option fixes it) and the answer is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragloom.errors import InvalidInputError
from ragloom.models._http import DEFAULT_TIMEOUT, bad_response
from ragloom.models.ollama import OllamaClientMixin, resolve_host
from ragloom.types import Embedding, Vector

DEFAULT_BATCH_SIZE = 64


class OllamaEmbedder(OllamaClientMixin):
    """Dense embeddings from a model on an Ollama server."""

    def __init__(
        self,
        model: str,
        *,
        host: str | None = None,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        batch_size: int = DEFAULT_BATCH_SIZE,
        dimensions: int | None = None,
        provider: str = "ollama",
    ) -> None:
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be at least 1, not {batch_size}")
        self.model = model
        self.provider = provider
        self.host = resolve_host(host or base_url)
        self.timeout = float(timeout)
        self.batch_size = batch_size
        self.dimensions = dimensions
        self._dimension: int | None = dimensions
        self._client = None

    def __repr__(self) -> str:
        return f"OllamaEmbedder(model={self.model!r}, host={self.host!r})"

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
        request: dict[str, Any] = {"model": self.model, "input": list(texts)}
        if self.dimensions:
            request["dimensions"] = self.dimensions
        try:
            response = self.client().embed(**request)
        except Exception as exc:
            self._raise(exc)
        try:
            vectors = [Vector(values) for values in response.embeddings]
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


def create_embedder(model: str, *, provider: str = "ollama", **options: Any) -> OllamaEmbedder:
    """Registry entry: ``ollama:nomic-embed-text``; options ``host`` (or ``base_url``),
    ``timeout``, ``batch_size``, ``dimensions``."""
    return OllamaEmbedder(model, provider=provider, **options)

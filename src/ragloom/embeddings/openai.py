"""Embeddings from the OpenAI API or any server with ``/v1/embeddings`` (``openai:``).

The dimension is known before the first call for OpenAI's own models (or from the
``dimensions`` option); for other models one probe call discovers it, once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ragloom.embeddings._remote import ChatBackedEmbedder
from ragloom.models._http import DEFAULT_TIMEOUT
from ragloom.models.openai import OpenAIChatModel

KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
DEFAULT_BATCH_SIZE = 128


class OpenAIEmbedder(ChatBackedEmbedder):
    """Dense embeddings through the OpenAI embeddings endpoint."""

    known_dimensions = KNOWN_DIMENSIONS

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
        self._connect(lambda: OpenAIChatModel(model, base_url=base_url, timeout=timeout,
                                              provider=provider),
                      model, provider=provider, batch_size=batch_size, dimensions=dimensions)

    def _embed(self, texts: list[str]) -> Any:
        request: dict[str, Any] = {"model": self.model, "input": texts,
                                   "encoding_format": "float"}
        if self.dimensions:
            request["dimensions"] = self.dimensions
        client = self._api.client()
        try:
            return client.embeddings.create(**request)
        except Exception as exc:
            self._raise(exc)

    def _rows(self, response: Any) -> Iterable[Any]:
        return [row.embedding for row in sorted(response.data, key=lambda row: row.index)]


def create_embedder(model: str, *, provider: str = "openai", **options: Any) -> OpenAIEmbedder:
    """Registry entry: ``openai:text-embedding-3-small``; options ``base_url``, ``timeout``,
    ``batch_size``, ``dimensions``."""
    return OpenAIEmbedder(model, provider=provider, **options)

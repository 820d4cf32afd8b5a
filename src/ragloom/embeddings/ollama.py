"""Embeddings from an Ollama server's ``/api/embed`` (``ollama:`` names).

Ollama does not say a model's dimension up front, so one probe call discovers it
(unless the ``dimensions`` option fixes it) and the answer is kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ragloom.embeddings._remote import RemoteEmbedder, check_batch_size
from ragloom.models._http import DEFAULT_TIMEOUT
from ragloom.models.ollama import OllamaClientMixin, resolve_host

DEFAULT_BATCH_SIZE = 64


class OllamaEmbedder(OllamaClientMixin, RemoteEmbedder):
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
        self.batch_size = check_batch_size(batch_size)
        self.model = model
        self.provider = provider
        self.host = resolve_host(host or base_url)
        self.timeout = float(timeout)
        self.dimensions = dimensions
        self._dimension = dimensions
        self._client = None

    def __repr__(self) -> str:
        return f"OllamaEmbedder(model={self.model!r}, host={self.host!r})"

    def _embed(self, texts: list[str]) -> Any:
        request: dict[str, Any] = {"model": self.model, "input": texts}
        if self.dimensions:
            request["dimensions"] = self.dimensions
        try:
            return self.client().embed(**request)
        except Exception as exc:
            self._raise(exc)

    def _rows(self, response: Any) -> Iterable[Any]:
        return response.embeddings  # type: ignore[no-any-return]


def create_embedder(model: str, *, provider: str = "ollama", **options: Any) -> OllamaEmbedder:
    """Registry entry: ``ollama:nomic-embed-text``; options ``host`` (or ``base_url``),
    ``timeout``, ``batch_size``, ``dimensions``."""
    return OllamaEmbedder(model, provider=provider, **options)

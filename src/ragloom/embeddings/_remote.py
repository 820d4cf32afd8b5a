"""Batching and dimension probing shared by the remote embedders (OpenAI, Ollama,
Gemini), and the request setup of those that go through their provider's chat model
(:class:`ChatBackedEmbedder`: client, key handling, base URL, timeout and error
mapping, so 429s become ``RateLimitError`` that ``ragloom.resilience`` retries)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from ragloom.errors import InvalidInputError, ProviderError
from ragloom.models._remote import ProviderBound
from ragloom.tracing import embeddings_span
from ragloom.types import Embedding, Vector


def check_batch_size(batch_size: int) -> int:
    if batch_size < 1:
        raise InvalidInputError(f"batch_size must be at least 1, not {batch_size}")
    return batch_size


class RemoteEmbedder(ProviderBound):
    """Embeds in batches of ``batch_size`` through the hooks ``_embed`` and ``_rows``.

    A model whose dimension is not known up front is asked once with a probe text;
    every answer then keeps the dimension it saw.
    """

    batch_size: int
    _dimension: int | None

    def _embed(self, texts: list[str]) -> Any:
        """One request for ``texts``; SDK exceptions are already mapped."""
        raise NotImplementedError

    def _embed_for(self, texts: list[str], query: bool) -> Any:
        """``_embed``, told whether the texts are a query (asymmetric APIs use it)."""
        return self._embed(texts)

    def _rows(self, response: Any) -> Iterable[Any]:
        """The vectors' values in input order; may raise AttributeError/TypeError."""
        raise NotImplementedError

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self.embed_query("dimension probe")
        assert self._dimension is not None
        return self._dimension

    def _batch(self, texts: Sequence[str], query: bool = False) -> list[Vector]:
        response = self._embed_for(list(texts), query)
        try:
            vectors = [Vector(values) for values in self._rows(response)]
        except (AttributeError, TypeError, ValueError) as exc:
            raise self._bad(f"no embeddings in {str(response)[:200]!r}") from exc
        if len(vectors) != len(texts):
            raise self._bad(f"asked for {len(texts)} embeddings, got {len(vectors)}")
        if vectors:
            self._dimension = vectors[0].dimension
        return vectors

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        out: list[Embedding] = []
        with embeddings_span(self.name, len(texts)):
            for start in range(0, len(texts), self.batch_size):
                out.extend(self._batch(texts[start:start + self.batch_size]))
        return out

    def embed_query(self, text: str) -> Embedding:
        with embeddings_span(self.name, 1):
            return self._batch([text], query=True)[0]


class ChatBackedEmbedder(RemoteEmbedder):
    """A remote embedder whose requests go through its provider's chat model, which owns
    client creation, key handling and error mapping (``self._api``)."""

    #: Dimensions of the provider's models known before any call.
    known_dimensions: ClassVar[Mapping[str, int]] = {}
    _api: Any
    dimensions: int | None

    def _connect(self, api: Callable[[], Any], model: str, *, provider: str,
                 batch_size: int, dimensions: int | None) -> None:
        """Set up requests: ``api()`` makes the chat model (after ``batch_size`` is
        checked); ``model`` is the embedding model's name as requests send it."""
        self.batch_size = check_batch_size(batch_size)
        self._api = api()
        self.model = model
        self.provider = provider
        self.dimensions = dimensions
        self._dimension = dimensions or self.known_dimensions.get(model)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self._api.base_url!r})"

    def error(self, exc: Exception) -> ProviderError | None:
        mapped: ProviderError | None = self._api.error(exc)
        return mapped

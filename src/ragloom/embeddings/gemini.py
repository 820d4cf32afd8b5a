"""Embeddings from Google's Gemini API (``gemini:`` names), e.g.
``gemini:gemini-embedding-001`` or ``gemini:text-embedding-004``.

Requests go to ``models/{model}:batchEmbedContents`` through the google-genai SDK
(extra ``gemini``), with the chat provider's key handling (``GEMINI_API_KEY`` or
``GOOGLE_API_KEY``), base URL (option ``base_url`` or ``GEMINI_BASE_URL``) and error
mapping: a 429 is a :class:`~ragloom.errors.RateLimitError` carrying ``Retry-After``,
which ``ragloom.resilience`` retries (``build_embedder`` wraps every hosted embedder).
Queries are embedded with the task type ``RETRIEVAL_QUERY`` and documents with
``RETRIEVAL_DOCUMENT``, as Gemini's retrieval guide says. ``dimensions`` asks for
fewer output dimensions (``output_dimensionality``: gemini-embedding-001 gives 3072,
and 768 or 1536 on request); otherwise one probe call discovers the dimension.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ragloom.embeddings._remote import ChatBackedEmbedder
from ragloom.models._http import DEFAULT_TIMEOUT
from ragloom.models.gemini import GeminiChatModel

KNOWN_DIMENSIONS = {"gemini-embedding-001": 3072, "text-embedding-004": 768,
                    "embedding-001": 768}
#: The Gemini API takes at most 100 requests in one batchEmbedContents call.
DEFAULT_BATCH_SIZE = 100
QUERY_TASK = "RETRIEVAL_QUERY"
DOCUMENT_TASK = "RETRIEVAL_DOCUMENT"


class GeminiEmbedder(ChatBackedEmbedder):
    """Dense embeddings through the Gemini API's ``batchEmbedContents``."""

    known_dimensions = KNOWN_DIMENSIONS

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        batch_size: int = DEFAULT_BATCH_SIZE,
        dimensions: int | None = None,
        provider: str = "gemini",
    ) -> None:
        self._connect(lambda: GeminiChatModel(model, base_url=base_url, timeout=timeout,
                                              provider=provider),
                      model.removeprefix("models/"), provider=provider,
                      batch_size=min(batch_size, DEFAULT_BATCH_SIZE), dimensions=dimensions)

    def _embed(self, texts: list[str]) -> Any:
        return self._embed_for(texts, query=False)

    def _embed_for(self, texts: list[str], query: bool) -> Any:
        config: dict[str, Any] = {"task_type": QUERY_TASK if query else DOCUMENT_TASK}
        if self.dimensions:
            config["output_dimensionality"] = self.dimensions
        client = self._api.client()
        try:
            return client.models.embed_content(model=self.model, contents=texts,
                                               config=config)
        except Exception as exc:
            self._raise(exc)

    def _rows(self, response: Any) -> Iterable[Any]:
        return [item.values for item in response.embeddings]


def create_embedder(model: str, *, provider: str = "gemini", **options: Any) -> GeminiEmbedder:
    """Registry entry: ``gemini:gemini-embedding-001``; options ``base_url``,
    ``timeout``, ``batch_size``, ``dimensions``."""
    return GeminiEmbedder(model, provider=provider, **options)

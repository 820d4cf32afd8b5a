"""An embedder wrapper that embeds each query text once while the wrapper lives.

Scope it to one unit of work (one request, one evaluation run) and drop it with
that work: nothing is shared between units, so no answer is built from another's
query. Documents pass straight through.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragloom.protocols import EmbeddingProvider
from ragloom.types import Embedding


class QueryWrapper:
    """An embedder over ``embedder``: its name, dimension and document embeddings pass
    straight through; subclasses decide where ``embed_query`` answers from."""

    def __init__(self, embedder: EmbeddingProvider) -> None:
        self.embedder = embedder

    @property
    def name(self) -> str:
        return self.embedder.name

    @property
    def dimension(self) -> int:
        return self.embedder.dimension

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        return self.embedder.embed_documents(texts)

    def embed_query(self, text: str) -> Embedding:
        return self.embedder.embed_query(text)


class QueryMemo(QueryWrapper):
    """``QueryMemo(embedder)``: ``embed_query`` runs once per distinct text."""

    def __init__(self, embedder: EmbeddingProvider) -> None:
        super().__init__(embedder)
        self._queries: dict[str, Embedding] = {}

    def embed_query(self, text: str) -> Embedding:
        found = self._queries.get(text)
        if found is None:
            found = self._queries[text] = self.embedder.embed_query(text)
        return found

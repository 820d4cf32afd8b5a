"""VectorRetriever: embeds the question and asks any VectorStore."""

from __future__ import annotations

from ragloom.filters import MetadataFilters
from ragloom.protocols import EmbeddingProvider, VectorStore
from ragloom.types import QueryMatch


class VectorRetriever:
    """Dense retrieval through the VectorStore protocol; works with every store."""

    def __init__(
        self,
        store: VectorStore,
        embedder: EmbeddingProvider,
        *,
        top_k: int = 5,
        score_threshold: float | None = None,
        knowledge_base: str = "",
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.top_k = top_k
        self.score_threshold = score_threshold
        self.knowledge_base = knowledge_base

    def retrieve(self, query: str, filters: MetadataFilters | None = None) -> list[QueryMatch]:
        embedding = self.embedder.embed_query(query)
        matches = self.store.query(embedding, top_k=self.top_k, filters=filters)
        return [
            QueryMatch(chunk=m.chunk, score=m.score, raw_score=m.raw_score,
                       knowledge_base=self.knowledge_base)
            for m in matches
            if self.score_threshold is None or m.score >= self.score_threshold
        ]

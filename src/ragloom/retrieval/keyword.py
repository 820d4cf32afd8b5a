"""KeywordRetriever and HybridRetriever: the search modes behind the Retriever protocol."""

from __future__ import annotations

from ragloom.filters import MetadataFilters
from ragloom.protocols import EmbeddingProvider, VectorStore
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import SearchResult, search
from ragloom.types import QueryMatch


class _NoEmbedder:
    """Stands in for an embedder in keyword mode, which never embeds."""

    name = "none"
    dimension = 0

    def embed_documents(self, texts: object) -> list[object]:  # pragma: no cover - unused
        raise NotImplementedError

    def embed_query(self, text: str) -> object:  # pragma: no cover - unused
        raise NotImplementedError


class SearchRetriever:
    """Any search mode as a Retriever; ``last`` keeps the latest SearchResult."""

    def __init__(
        self,
        store: VectorStore,
        embedder: EmbeddingProvider,
        options: SearchOptions | None = None,
        *,
        knowledge_base: str = "",
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.options = options or SearchOptions()
        self.knowledge_base = knowledge_base
        self.last: SearchResult | None = None

    def search(self, query: str, filters: MetadataFilters | None = None) -> SearchResult:
        options = self.options if filters is None else self.options.with_(filters=filters)
        self.last = search(self.store, self.embedder, query, options,
                           knowledge_base=self.knowledge_base)
        return self.last

    def retrieve(self, query: str, filters: MetadataFilters | None = None) -> list[QueryMatch]:
        return self.search(query, filters).matches


class KeywordRetriever(SearchRetriever):
    """BM25 retrieval from a KeywordSearchable store (no embedder needed)."""

    def __init__(
        self,
        store: VectorStore,
        *,
        top_k: int = 5,
        score_threshold: float | None = None,
        knowledge_base: str = "",
    ) -> None:
        options = SearchOptions(mode="keyword", top_k=top_k, score_threshold=score_threshold)
        super().__init__(store, _NoEmbedder(), options,  # type: ignore[arg-type]
                         knowledge_base=knowledge_base)


class HybridRetriever(SearchRetriever):
    """Vector and keyword results fused (RRF or weighted, as ``options`` say)."""

    def __init__(
        self,
        store: VectorStore,
        embedder: EmbeddingProvider,
        options: SearchOptions | None = None,
        *,
        knowledge_base: str = "",
    ) -> None:
        options = (options or SearchOptions()).with_(mode="hybrid")
        super().__init__(store, embedder, options, knowledge_base=knowledge_base)

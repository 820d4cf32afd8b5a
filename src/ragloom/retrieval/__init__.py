"""Retrieval: search modes, score normalisation, fusion rankers and retrievers."""

from ragloom.retrieval.documents import DocumentMatch, documents_from_matches
from ragloom.retrieval.keyword import HybridRetriever, KeywordRetriever, SearchRetriever
from ragloom.retrieval.multi import search_many
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.rerank import MaximalMarginalRelevance
from ragloom.retrieval.search import SearchResult
from ragloom.retrieval.vector import VectorRetriever

__all__ = [
    "DocumentMatch",
    "HybridRetriever",
    "KeywordRetriever",
    "MaximalMarginalRelevance",
    "SearchOptions",
    "SearchResult",
    "SearchRetriever",
    "VectorRetriever",
    "documents_from_matches",
    "search_many",
]

"""Advanced RAG: a retrieval augmentor composed of small parts, re-ranking, retrieval
expansion, agents with a ``knowledge_search`` tool, and Llama Stack's RAG tool.

Each role is a protocol with named implementations, composed by passing them in:

=====================  ==========================================================
role                   implementations
=====================  ==========================================================
QueryTransformer       DefaultQueryTransformer, CompressingQueryTransformer,
                       ExpandingQueryTransformer, HypotheticalAnswerTransformer
QueryRouter            DefaultQueryRouter, LanguageModelQueryRouter
ContentRetriever       KnowledgeBaseContentRetriever, WebSearchContentRetriever,
                       SqlDatabaseContentRetriever
ContentAggregator      DefaultContentAggregator (two-stage RRF),
                       RerankingContentAggregator
ContentInjector        DefaultContentInjector
ScoringModel           CrossEncoderScoringModel, ChatModelScoringModel
=====================  ==========================================================

Heavy pieces (web, SQL, the RAG tool) are imported from their modules on first
use, so ``import ragloom.advanced`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragloom.advanced.aggregation import (
    ContentAggregator,
    DefaultContentAggregator,
    QueryResults,
    RerankingContentAggregator,
)
from ragloom.advanced.answer import (
    AnswerEvent,
    AugmentedAnswer,
    ErrorEvent,
    SourcesEvent,
    StreamEvent,
    TokenEvent,
)
from ragloom.advanced.augmentor import AugmentationResult, RetrievalAugmentor
from ragloom.advanced.injection import ContentInjector, DefaultContentInjector
from ragloom.advanced.query import (
    ChainedQueryTransformer,
    CompressingQueryTransformer,
    DefaultQueryTransformer,
    ExpandingQueryTransformer,
    HypotheticalAnswerTransformer,
    Query,
    QueryTransformer,
)
from ragloom.advanced.retrievers import ContentRetriever, KnowledgeBaseContentRetriever
from ragloom.advanced.routing import DefaultQueryRouter, LanguageModelQueryRouter, QueryRouter
from ragloom.advanced.scoring import (
    ChatModelScoringModel,
    CrossEncoderScoringModel,
    ScoringModel,
    ScoringReranker,
)

if TYPE_CHECKING:
    from ragloom.advanced.agent import Agent, FunctionTool, KnowledgeSearchTool
    from ragloom.advanced.expansion import ParentDocumentExpander, SentenceWindowExpander
    from ragloom.advanced.pipeline import AugmentedRag
    from ragloom.advanced.rag_tool import RagTool
    from ragloom.advanced.sql import SqlDatabaseContentRetriever
    from ragloom.advanced.web import WebSearchContentRetriever

_LAZY = {
    "Agent": "agent", "FunctionTool": "agent", "KnowledgeSearchTool": "agent",
    "ParentDocumentExpander": "expansion", "SentenceWindowExpander": "expansion",
    "AugmentedRag": "pipeline", "RagTool": "rag_tool",
    "SqlDatabaseContentRetriever": "sql", "WebSearchContentRetriever": "web",
}

__all__ = [
    "Agent", "AnswerEvent", "AugmentationResult", "AugmentedAnswer", "AugmentedRag",
    "ChainedQueryTransformer", "ChatModelScoringModel", "CompressingQueryTransformer",
    "ContentAggregator", "ContentInjector", "ContentRetriever", "CrossEncoderScoringModel",
    "DefaultContentAggregator", "DefaultContentInjector", "DefaultQueryRouter",
    "DefaultQueryTransformer", "ErrorEvent", "ExpandingQueryTransformer", "FunctionTool",
    "HypotheticalAnswerTransformer", "KnowledgeBaseContentRetriever", "KnowledgeSearchTool",
    "LanguageModelQueryRouter", "ParentDocumentExpander", "Query", "QueryResults",
    "QueryRouter", "QueryTransformer", "RagTool", "RerankingContentAggregator",
    "RetrievalAugmentor", "ScoringModel", "ScoringReranker", "SentenceWindowExpander",
    "SourcesEvent", "SqlDatabaseContentRetriever", "StreamEvent", "TokenEvent",
    "WebSearchContentRetriever",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragloom.advanced' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"ragloom.advanced.{module}"), name)

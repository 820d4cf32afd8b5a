"""Knowledge graphs: entities and relations extracted at ingestion, stored with the
chunks, and used by graph-aware retrieval (``SearchOptions(graph=True)``).

See docs/graph.md. Nothing here is imported by ``import ragloom``; importing
``ragloom.graph`` lets ``SearchOptions(graph=True)`` run (the retrieval layer below
takes :func:`graph_search` as a collaborator, see :mod:`ragloom.graph.retrieval`).
"""

from ragloom.graph.extractors import EXTRACTORS, make_extractor
from ragloom.graph.indexing import GraphIndexer, graph_indexer_for, graph_step
from ragloom.graph.llm import GRAPH_JSON_SCHEMA, LlmExtractor, validate_graph_json
from ragloom.graph.merge import merge_document, name_key
from ragloom.graph.model import (
    ChunkGraph,
    DocumentGraph,
    Entity,
    ExtractionFailure,
    GraphExtractor,
    GraphStats,
    Neighbour,
    Relation,
    StoredEntity,
    StoredRelation,
)
from ragloom.graph.offline import OfflineExtractor
from ragloom.graph.retrieval import GraphCandidates, graph_candidates, graph_search
from ragloom.graph.sqlite_graph import SqliteGraph

__all__ = [
    "EXTRACTORS", "GRAPH_JSON_SCHEMA", "ChunkGraph", "DocumentGraph", "Entity",
    "ExtractionFailure", "GraphCandidates", "GraphExtractor", "GraphIndexer", "GraphStats",
    "LlmExtractor", "Neighbour", "OfflineExtractor", "Relation", "SqliteGraph",
    "StoredEntity", "StoredRelation", "graph_candidates", "graph_indexer_for",
    "graph_search", "graph_step", "make_extractor", "merge_document", "name_key",
    "validate_graph_json",
]

"""Graph extraction as an ingestion step.

:class:`GraphIndexer` is what :class:`~ragloom.ingestion.IngestionPipeline` calls
for each document it is about to store: it extracts, merges entities across the
document's chunks and stages the result with the graph store, which writes it in the
document's own transaction. Its :attr:`settings` join the pipeline's, so switching
graph extraction on (or changing extractor) re-ingests documents on the next run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from ragloom.graph.merge import merge_document
from ragloom.graph.model import GraphExtractor, GraphStats
from ragloom.graph.sqlite_graph import SqliteGraph, StagedGraph
from ragloom.protocols import ModelProvider
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.types import TextChunk, TextDocument


class GraphIndexer:
    """``GraphIndexer(extractor, graph)``: extract and stage one document at a time."""

    def __init__(self, extractor: GraphExtractor, graph: SqliteGraph) -> None:
        self.extractor = extractor
        self.graph = graph.attach()
        self.stats = GraphStats()

    @property
    def settings(self) -> str:
        return f"graph:{self.extractor.name}"

    def prepare(self, document: TextDocument, chunks: Sequence[TextChunk]) -> None:
        started = time.perf_counter()
        extracted = self.extractor.extract(document, chunks)
        entities, relations = merge_document(extracted)
        self.graph.stage(document.id, StagedGraph(
            entities=entities, relations=relations, failures=list(extracted.failures),
            extractor=extracted.extractor))
        stats = self.stats
        stats.documents += 1
        stats.chunks += len(chunks)
        stats.entities += len(entities)
        stats.relations += len(relations)
        stats.failures.extend((document.id, f) for f in extracted.failures)
        stats.seconds += time.perf_counter() - started


def graph_indexer_for(
    store: SqliteVectorStore, *, enable: bool | None, extractor: str | None = None,
    build: Callable[[str, dict[str, Any]], GraphExtractor], **options: Any,
) -> GraphIndexer | None:
    """The knowledge base's graph step as its setting says, after applying a request.

    ``enable=True`` switches extraction on (with ``extractor``, else the one set
    before, else ``offline``) and saves that as the knowledge base's setting;
    ``enable=False`` switches it off; ``None`` follows the saved setting.
    ``options`` (e.g. ``llm``, the extractor's model) are saved with it; ``build``
    makes an extractor from a name and the saved options.
    """
    graph = SqliteGraph(store)
    saved = graph.settings()
    if enable is False:
        if saved is not None:
            graph.save_settings(None)
        return None
    if enable is None and saved is None:
        return None
    name = str(extractor or (saved or {}).get("extractor") or "offline")
    kept = {k: v for k, v in (saved or {}).items() if k != "extractor"}
    chosen = {**kept, **{k: v for k, v in options.items() if v is not None}}
    extractor_object = build(name, chosen)  # fails (and saves nothing) if unusable
    if saved is None or saved.get("extractor") != name or chosen != kept:
        graph.save_settings(name, **chosen)
    return GraphIndexer(extractor_object, graph)


def graph_step(
    store: SqliteVectorStore, *, enable: bool | None = None, extractor: str | None = None,
    model: Callable[[], ModelProvider | None] = lambda: None,
) -> GraphIndexer | None:
    """:func:`graph_indexer_for` with the named extractors; ``model`` gives the chat
    model of the ``llm`` extractor (called only when that extractor is chosen)."""
    from ragloom.graph.extractors import make_extractor

    def build(name: str, options: dict[str, Any]) -> GraphExtractor:
        return make_extractor(name, model=model() if name == "llm" else None)

    return graph_indexer_for(store, enable=enable, extractor=extractor, build=build)

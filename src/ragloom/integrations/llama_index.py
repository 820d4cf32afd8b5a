"""ragloom inside LlamaIndex: a vector store and an embedding model.

``pip install 'ragloom[llama-index]'``::

    from llama_index.core import Document, VectorStoreIndex
    from ragloom.integrations.llama_index import RagloomEmbedding, RagloomVectorStore

    store = RagloomVectorStore(path="kb.db", collection="notes")
    index = VectorStoreIndex.from_vector_store(
        store, embed_model=RagloomEmbedding(model="local:all-MiniLM-L6-v2-int8"))
    index.insert(Document(text="SQLite keeps the vectors", id_="a"))
    index.as_retriever(similarity_top_k=1).retrieve("where are vectors kept?")

Each node is one ragloom chunk (its id is the node id); the node's metadata is stored
at the top level, so filters reach it, with LlamaIndex's bookkeeping keys
(``_node_content``, ``ref_doc_id``...). Query modes: ``default`` (the query embedding,
ragloom's vector search), ``text_search`` (ragloom's BM25) and ``hybrid`` (ragloom's
fusion; the knowledge base's embedder embeds the query text).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ragloom._optional import require

require("llama_index.core", package="llama-index-core", extra="llama-index",
        purpose="ragloom.integrations.llama_index")

from llama_index.core.base.embeddings.base import BaseEmbedding  # noqa: E402
from llama_index.core.schema import BaseNode, TextNode  # noqa: E402
from llama_index.core.vector_stores.types import (  # noqa: E402
    BasePydanticVectorStore,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import (  # noqa: E402
    metadata_dict_to_node,
    node_to_metadata_dict,
)
from pydantic import PrivateAttr  # noqa: E402

from ragloom import filters as rf  # noqa: E402
from ragloom.errors import ConfigurationError, QueryError  # noqa: E402
from ragloom.integrations._base import (  # noqa: E402
    Record,
    as_floats,
    get_chunks,
    list_chunks,
    resolve_knowledge_base,
    write_records,
)
from ragloom.integrations._translate import llama_index_filters  # noqa: E402
from ragloom.knowledge_base import VectorKnowledgeBase  # noqa: E402
from ragloom.protocols import DocumentIndex, EmbeddingProvider  # noqa: E402
from ragloom.retrieval.options import SearchOptions  # noqa: E402
from ragloom.types import QueryMatch, TextChunk, Vector  # noqa: E402

__all__ = ["RagloomEmbedding", "RagloomVectorStore"]


class RagloomEmbedding(BaseEmbedding):
    """A ragloom embedder as a LlamaIndex embedding model: ``RagloomEmbedding(model=
    "local:all-MiniLM-L6-v2-int8")`` (any ``provider:model``) or ``embedder=...``."""

    _embedder: EmbeddingProvider = PrivateAttr()

    def __init__(self, model: str | None = None, *,
                 embedder: EmbeddingProvider | None = None, **kwargs: Any) -> None:
        if (model is None) == (embedder is None):
            raise ConfigurationError("RagloomEmbedding takes a model name such as "
                                     "'local:all-MiniLM-L6-v2-int8' or an embedder, not both")
        if embedder is None:
            from ragloom.registry import make_embedder

            embedder = make_embedder(str(model))
        super().__init__(model_name=embedder.name, **kwargs)
        self._embedder = embedder

    @property
    def embedder(self) -> EmbeddingProvider:
        return self._embedder

    def _get_query_embedding(self, query: str) -> list[float]:
        return as_floats(self._embedder.embed_query(query))

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return [as_floats(e) for e in self._embedder.embed_documents(texts)]


def _node(chunk: TextChunk) -> BaseNode:
    if "_node_content" in chunk.metadata:
        return metadata_dict_to_node(dict(chunk.metadata), text=chunk.text)
    # A chunk ragloom ingested itself.
    return TextNode(id_=chunk.id, text=chunk.text, metadata=dict(chunk.metadata))


def _ref_filter(key: str, values: Sequence[str]) -> rf.MetadataFilters:
    return rf.MetadataFilters((rf.MetadataFilter(key, "in", tuple(values)),))


def _both(a: rf.MetadataFilters | None, b: rf.MetadataFilters | None) -> rf.MetadataFilters | None:
    if a is None or b is None:
        return a or b
    return rf.MetadataFilters((a, b), "and")


class RagloomVectorStore(BasePydanticVectorStore):
    """A LlamaIndex vector store over a ragloom knowledge base (``stores_text=True``).

    ``RagloomVectorStore(path=DB, collection=NAME)`` opens (or creates on first write)
    knowledge base ``NAME`` where ``ragloom --db DB`` would; ``embedder`` names the
    ragloom embedder for hybrid and text queries (default: the knowledge base's own);
    given, it is recorded as the collection's embedder, so use the same model as
    LlamaIndex's ``embed_model`` (e.g. :class:`RagloomEmbedding` with that name).
    ``RagloomVectorStore(knowledge_base=KB)`` wraps one you built.
    """

    stores_text: bool = True
    flat_metadata: bool = False
    path: str | None = None
    collection: str = "default"
    embedder: str | None = None
    _kb: VectorKnowledgeBase = PrivateAttr()

    def __init__(self, path: str | os.PathLike[str] | None = None, collection: str = "default",
                 embedder: str | None = None, *,
                 knowledge_base: VectorKnowledgeBase | None = None, **kwargs: Any) -> None:
        super().__init__(  # type: ignore[call-arg]
            path=None if path is None else os.fspath(path), collection=collection,
            embedder=embedder, **kwargs)
        ragloom_embedder = None
        if embedder is not None:
            from ragloom.registry import make_embedder

            ragloom_embedder = make_embedder(embedder)
        self._kb = resolve_knowledge_base(knowledge_base, self.path, collection,
                                          ragloom_embedder, "RagloomVectorStore")

    @classmethod
    def class_name(cls) -> str:
        return "RagloomVectorStore"

    @property
    def client(self) -> VectorKnowledgeBase:
        """The ragloom knowledge base."""
        return self._kb

    def close(self) -> None:
        """Close the store's file or connections (reopened on next use)."""
        close = getattr(self._kb.store, "close", None)
        if callable(close):
            close()

    # ------------------------------------------------------------------------- write
    def add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        """Upsert nodes with the embeddings LlamaIndex computed (the knowledge base's
        embedder embeds a node that has none)."""
        records = [Record(id=node.node_id, text=node.get_content(),
                          metadata=node_to_metadata_dict(node, remove_text=True,
                                                         flat_metadata=self.flat_metadata),
                          embedding=node.embedding, document_id=node.ref_doc_id or "")
                   for node in nodes]
        if self.embedder is not None and records and all(r.embedding for r in records):
            # Vectors from LlamaIndex's model, declared to be ``embedder``'s: recorded so
            # that ragloom (CLI, server, hybrid queries) searches with the same one.
            self._kb.check_embedder()
            if isinstance(self._kb.index, DocumentIndex):
                self._kb.index.bind_embedder(self._kb.embedder.name, self._kb.embedder.dimension)
        return write_records(self._kb, records)

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Remove every node of the source document ``ref_doc_id``."""
        self._kb.delete_where(_ref_filter("ref_doc_id", [ref_doc_id]))

    def delete_nodes(self, node_ids: list[str] | None = None,
                     filters: MetadataFilters | None = None, **delete_kwargs: Any) -> None:
        if filters is None:
            self._kb.store.delete(list(node_ids or []))
        elif node_ids is None:
            self._kb.delete_where(llama_index_filters(filters))
        else:
            self._kb.store.delete([n.node_id for n in self.get_nodes(node_ids, filters)])

    def clear(self) -> None:
        self._kb.clear()

    def get_nodes(self, node_ids: list[str] | None = None,
                  filters: MetadataFilters | None = None) -> list[BaseNode]:
        translated = llama_index_filters(filters)
        if node_ids is None:
            return [_node(c) for c in list_chunks(self._kb, translated)]
        return [_node(c) for c in get_chunks(self._kb, node_ids)
                if rf.evaluate(translated, c.metadata)]

    # ------------------------------------------------------------------------ search
    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        if query.node_ids:
            raise QueryError("RagloomVectorStore cannot restrict a query to node_ids; "
                             "filter on metadata instead")
        filters = _both(llama_index_filters(query.filters),
                        _ref_filter("ref_doc_id", query.doc_ids) if query.doc_ids else None)
        top_k = max(1, query.similarity_top_k)
        mode = query.mode
        matches: list[QueryMatch]
        if mode == VectorStoreQueryMode.DEFAULT:
            if query.query_embedding is None:
                raise QueryError("a default-mode query needs a query embedding")
            found = self._kb.store.query(Vector(query.query_embedding),  # type: ignore[arg-type]
                                         top_k=top_k, filters=filters)
            matches = [QueryMatch(chunk=m.chunk, score=m.score) for m in found]
        elif mode in (VectorStoreQueryMode.HYBRID, VectorStoreQueryMode.TEXT_SEARCH):
            if not query.query_str:
                raise QueryError(f"a {mode.value} query needs the query text")
            options = SearchOptions(
                mode="hybrid" if mode == VectorStoreQueryMode.HYBRID else "keyword",
                top_k=top_k, filters=filters,
                alpha=0.5 if query.alpha is None else float(query.alpha))
            matches = self._kb.search(query.query_str, options).matches
        else:
            raise QueryError(f"query mode {mode.value!r} is not served by ragloom; use "
                             "default, hybrid or text_search")
        return VectorStoreQueryResult(nodes=[_node(m.chunk) for m in matches],
                                      similarities=[float(m.score) for m in matches],
                                      ids=[m.chunk.id for m in matches])

"""ragloom inside LangChain: a vector store, a retriever and an embeddings wrapper.

``pip install 'ragloom[langchain]'``::

    from ragloom.integrations.langchain import RagloomEmbeddings, RagloomVectorStore

    store = RagloomVectorStore(path="kb.db", collection="notes",
                               embedding=RagloomEmbeddings(model="local:all-MiniLM-L6-v2-int8"))
    store.add_texts(["SQLite keeps the vectors"], metadatas=[{"lang": "en"}], ids=["a"])
    store.similarity_search("where are vectors kept?", k=1, filter={"lang": "en"})

Everything goes through a ragloom knowledge base: its store (SQLite, PostgreSQL,
Milvus), its embedder and its search. A LangChain document is one chunk whose id is
the document's id; its metadata is stored as given. Async methods run the sync ones
in an executor (LangChain's defaults). Filters: see :func:`langchain_filters`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from typing import Any

from ragloom._optional import require

require("langchain_core", package="langchain-core", extra="langchain",
        purpose="ragloom.integrations.langchain")

from langchain_core.callbacks import CallbackManagerForRetrieverRun  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.vectorstores import VectorStore  # noqa: E402
from langchain_core.vectorstores.utils import maximal_marginal_relevance  # noqa: E402
from pydantic import ConfigDict, PrivateAttr  # noqa: E402

from ragloom.errors import ConfigurationError  # noqa: E402
from ragloom.filters import MetadataFilters, parse_filters  # noqa: E402
from ragloom.integrations._base import (  # noqa: E402
    FunctionEmbedder,
    Record,
    as_floats,
    get_chunks,
    resolve_knowledge_base,
    write_records,
)
from ragloom.integrations._translate import langchain_filters  # noqa: E402
from ragloom.knowledge_base import VectorKnowledgeBase  # noqa: E402
from ragloom.protocols import EmbeddingProvider  # noqa: E402
from ragloom.retrieval.options import SearchOptions  # noqa: E402
from ragloom.types import TextChunk, Vector, content_id  # noqa: E402

__all__ = ["RagloomEmbeddings", "RagloomRetriever", "RagloomVectorStore", "langchain_filters"]


class RagloomEmbeddings(Embeddings):
    """A ragloom embedder as LangChain ``Embeddings``: ``RagloomEmbeddings(model=
    "local:all-MiniLM-L6-v2-int8")`` (any ``provider:model``) or ``embedder=<ragloom
    EmbeddingProvider>``. Loads nothing until the first text is embedded."""

    def __init__(self, model: str | None = None, *,
                 embedder: EmbeddingProvider | None = None, **options: Any) -> None:
        if (model is None) == (embedder is None):
            raise ConfigurationError("RagloomEmbeddings takes a model name such as "
                                     "'local:all-MiniLM-L6-v2-int8' or an embedder, not both")
        if embedder is None:
            from ragloom.registry import make_embedder

            embedder = make_embedder(str(model), **options)
        self.embedder: EmbeddingProvider = embedder

    @property
    def model(self) -> str:
        return self.embedder.name

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [as_floats(e) for e in self.embedder.embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        return as_floats(self.embedder.embed_query(text))


def ragloom_embedder(embedding: Embeddings | EmbeddingProvider | None) -> EmbeddingProvider | None:
    """The ragloom embedder behind a LangChain embedding object (wrapped when foreign)."""
    if embedding is None or isinstance(embedding, RagloomEmbeddings):
        return None if embedding is None else embedding.embedder
    if isinstance(embedding, Embeddings):
        return FunctionEmbedder(f"langchain:{type(embedding).__name__}",
                                embedding.embed_documents, embedding.embed_query)
    if isinstance(embedding, EmbeddingProvider):
        return embedding
    raise ConfigurationError(f"embedding must be LangChain Embeddings or a ragloom embedder, "
                             f"not {type(embedding).__name__}")


def _document(chunk: TextChunk) -> Document:
    return Document(id=chunk.id, page_content=chunk.text, metadata=dict(chunk.metadata))


def _filters(value: Any) -> MetadataFilters | None:
    return langchain_filters(value)


class RagloomVectorStore(VectorStore):
    """A LangChain ``VectorStore`` over a ragloom knowledge base.

    ``RagloomVectorStore(path=DB, collection=NAME, embedding=EMBEDDINGS)`` opens (or
    creates on first write) the knowledge base ``NAME`` where ``ragloom --db DB`` would;
    ``RagloomVectorStore(knowledge_base=KB)`` wraps one you built. A LangChain
    embedding object embeds texts and queries; a :class:`RagloomEmbeddings` gives its
    ragloom embedder directly. Without an embedding, the knowledge base's own is used.
    """

    def __init__(self, knowledge_base: VectorKnowledgeBase | None = None, *,
                 path: str | os.PathLike[str] | None = None, collection: str = "default",
                 embedding: Embeddings | None = None) -> None:
        self.knowledge_base = resolve_knowledge_base(
            knowledge_base, path, collection, ragloom_embedder(embedding), "RagloomVectorStore")
        self._embedding = embedding

    @property
    def embeddings(self) -> Embeddings | None:
        return self._embedding or RagloomEmbeddings(embedder=self.knowledge_base.embedder)

    # ------------------------------------------------------------------------- write
    def add_texts(self, texts: Iterable[str], metadatas: list[dict[str, Any]] | None = None,
                  *, ids: list[str] | None = None, **kwargs: Any) -> list[str]:
        """Upsert texts; a given id is kept (``None`` ids get a content-derived one)."""
        texts = list(texts)
        metas = list(metadatas) if metadatas is not None else [{} for _ in texts]
        given: list[str | None] = list(ids) if ids is not None else [None] * len(texts)
        if len(metas) != len(texts) or len(given) != len(texts):
            raise ValueError(f"add_texts got {len(texts)} texts, {len(metas)} metadatas and "
                             f"{len(given)} ids; give as many of each")
        records = [Record(id=i or content_id("langchain", t, json.dumps(m, sort_keys=True,
                                                                          default=str)),
                          text=t, metadata=m) for t, m, i in zip(texts, metas, given, strict=True)]
        return write_records(self.knowledge_base, records)

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Delete by id; ``None`` empties the knowledge base."""
        if ids is None:
            self.knowledge_base.clear()
        else:
            self.knowledge_base.store.delete(list(ids))
        return True

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        return [_document(c) for c in get_chunks(self.knowledge_base, ids)]

    # ------------------------------------------------------------------------ search
    def _by_vector(self, vector: Sequence[float], k: int,
                   filter: Any) -> list[tuple[Document, float]]:
        if k < 1:
            return []
        matches = self.knowledge_base.store.query(Vector(vector), top_k=k,  # type: ignore[arg-type]
                                                  filters=_filters(filter))
        return [(_document(m.chunk), float(m.score)) for m in matches]

    def _query_vector(self, query: str) -> list[float]:
        self.knowledge_base.check_embedder()  # the one the knowledge base was built with
        return as_floats(self.knowledge_base.embedder.embed_query(query))

    def similarity_search(self, query: str, k: int = 4, filter: Any = None,
                          **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, filter)]

    def similarity_search_with_score(self, query: str, k: int = 4, filter: Any = None,
                                     **kwargs: Any) -> list[tuple[Document, float]]:
        """Vector search; the score is ragloom's, in [0, 1], higher is nearer."""
        return self._by_vector(self._query_vector(query), k, filter)

    def similarity_search_by_vector(self, embedding: list[float], k: int = 4,
                                    filter: Any = None, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self._by_vector(embedding, k, filter)]

    def _select_relevance_score_fn(self) -> Any:
        return lambda score: score  # ragloom's scores are relevance scores already

    def max_marginal_relevance_search(self, query: str, k: int = 4, fetch_k: int = 20,
                                      lambda_mult: float = 0.5, filter: Any = None,
                                      **kwargs: Any) -> list[Document]:
        return self.max_marginal_relevance_search_by_vector(
            self._query_vector(query), k, fetch_k, lambda_mult, filter)

    def max_marginal_relevance_search_by_vector(
        self, embedding: list[float], k: int = 4, fetch_k: int = 20,
        lambda_mult: float = 0.5, filter: Any = None, **kwargs: Any,
    ) -> list[Document]:
        """``fetch_k`` nearest by ragloom's vector search, then LangChain's MMR picks
        ``k`` (the candidates are embedded again to compare them with each other)."""
        import numpy as np

        candidates = self._by_vector(embedding, max(fetch_k, k), filter)
        if not candidates:
            return []
        vectors = [as_floats(e) for e in self.knowledge_base.embedder.embed_documents(
            [doc.page_content for doc, _ in candidates])]
        chosen = maximal_marginal_relevance(np.array(embedding, dtype=np.float32), vectors,
                                            lambda_mult=lambda_mult, k=k)
        return [candidates[i][0] for i in chosen]

    @classmethod
    def from_texts(cls, texts: list[str], embedding: Embeddings,
                   metadatas: list[dict[str, Any]] | None = None, *,
                   ids: list[str] | None = None, **kwargs: Any) -> RagloomVectorStore:
        """A store (``path``/``collection`` or ``knowledge_base`` in ``kwargs``) holding
        ``texts``."""
        store = cls(embedding=embedding, **kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store


class RagloomRetriever(BaseRetriever):
    """A LangChain retriever over a ragloom knowledge base, hybrid by default.

    ``RagloomRetriever(path=DB, collection=NAME, k=4, mode="hybrid", filters=None)`` or
    ``RagloomRetriever(knowledge_base=KB)``; ``filters`` is ragloom's filter JSON (or a
    ``MetadataFilters``). ``invoke(query, k=1, mode="vector", filters=...)`` overrides
    them per call. Each document's metadata gains ``score`` (ragloom's, in [0, 1]),
    ``raw_score`` and ``chunk_id``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    knowledge_base: Any = None
    path: str | None = None
    collection: str = "default"
    embedding: Any = None
    k: int = 4
    mode: str = "hybrid"
    filters: Any = None
    _kb: VectorKnowledgeBase | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any) -> None:
        SearchOptions(mode=self.mode, top_k=self.k)  # type: ignore[arg-type]  # checks them
        self._parsed(self.filters)

    @staticmethod
    def _parsed(filters: Any) -> MetadataFilters | None:
        return None if filters is None else parse_filters(filters)

    def open(self) -> VectorKnowledgeBase:
        if self._kb is None:
            self._kb = resolve_knowledge_base(self.knowledge_base, self.path, self.collection,
                                              ragloom_embedder(self.embedding), "RagloomRetriever",
                                              must_exist=True)
        return self._kb

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None, mode: str | None = None, filters: Any = None,
    ) -> list[Document]:
        options = SearchOptions(mode=mode or self.mode, top_k=k or self.k,  # type: ignore[arg-type]
                                filters=self._parsed(filters if filters is not None
                                                     else self.filters))
        matches = self.open().search(query, options).matches
        return [Document(id=m.chunk.id, page_content=m.chunk.text,
                         metadata={**m.chunk.metadata, "score": m.score,
                                   "raw_score": m.raw_score, "chunk_id": m.chunk.id})
                for m in matches]

"""What the framework adapters share, with no framework imported.

* :func:`open_knowledge_base`: a knowledge base from what ``ragloom --db`` takes (a
  folder, a ``.db`` file or a database URL) and a collection name;
* :class:`FunctionEmbedder`: a framework's embedding object as a ragloom
  :class:`~ragloom.protocols.EmbeddingProvider`;
* :func:`write_records`: records with caller-chosen ids, upserted as one chunk each;
* :func:`list_chunks`: the chunks a ragloom filter keeps, filtered in the store.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragloom.errors import (
    ConfigurationError,
    KnowledgeBaseNotFoundError,
    UnsupportedEmbeddingError,
)
from ragloom.filters import MetadataFilters, evaluate
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import DocumentIndex, EmbeddingProvider
from ragloom.types import Embedding, TextChunk, Vector, VectorEntry

__all__ = ["FunctionEmbedder", "Record", "as_floats", "list_chunks", "open_knowledge_base",
           "resolve_knowledge_base", "write_records"]


def open_knowledge_base(
    path: str | os.PathLike[str], collection: str = "default",
    embedder: EmbeddingProvider | None = None, *, must_exist: bool = False,
) -> VectorKnowledgeBase:
    """The knowledge base ``collection`` at ``path`` (a folder or ``.db`` file for SQLite,
    ``postgresql://...``, ``milvus://...``): created on first write when new, unless
    ``must_exist`` (then a missing one is a KnowledgeBaseNotFoundError, and no file is
    created). Without an ``embedder``, the one the collection was built with, else
    ragloom's default."""
    from ragloom.registry import DEFAULT_EMBEDDER, make_embedder
    from ragloom.stores.factory import exists, open_store, parse_location

    if not isinstance(collection, str) or not collection:
        raise ConfigurationError("collection must be a non-empty knowledge base name")
    location = parse_location(os.fspath(path))
    if must_exist and not exists(location):
        raise KnowledgeBaseNotFoundError(
            f"no database at {location.display()}; ingest documents first: ragloom ingest "
            f"PATH --db {os.fspath(path)} --kb {collection}")
    store = open_store(location, collection)
    if must_exist and collection not in {c.name for c in store.list_collections()}:
        store.close()
        raise KnowledgeBaseNotFoundError(
            f"no knowledge base named {collection!r} in {location.display()}; create it "
            f"with: ragloom ingest PATH --db {os.fspath(path)} --kb {collection}")
    if embedder is None:
        info = store.collection_info()
        embedder = make_embedder(info.embedder if info is not None else DEFAULT_EMBEDDER)
    return VectorKnowledgeBase(store, embedder, name=collection)


def resolve_knowledge_base(
    knowledge_base: VectorKnowledgeBase | None, path: str | os.PathLike[str] | None,
    collection: str | None, embedder: EmbeddingProvider | None, owner: str,
    *, must_exist: bool = False,
) -> VectorKnowledgeBase:
    """``knowledge_base`` as given, or opened from ``path`` and ``collection``."""
    if knowledge_base is not None:
        if path is not None:
            raise ConfigurationError(f"{owner}: give either knowledge_base or path, not both")
        if embedder is not None and embedder.name != knowledge_base.embedder.name:
            raise ConfigurationError(
                f"{owner}: the knowledge base embeds with {knowledge_base.embedder.name}, "
                f"not {embedder.name}; leave the embedding out or open it by path")
        return knowledge_base
    if path is None:
        raise ConfigurationError(
            f"{owner} needs a knowledge base: knowledge_base=VectorKnowledgeBase(...) or "
            "path=<what ragloom --db takes> with collection=<knowledge base name>")
    return open_knowledge_base(path, collection or "default", embedder, must_exist=must_exist)


class FunctionEmbedder:
    """An embedding object of another framework as a ragloom embedder.

    ``documents`` and ``query`` return plain float lists; the dimension is learnt from
    the first vector (a probe query embeds one word when it is asked for first).
    """

    def __init__(self, name: str, documents: Callable[[list[str]], Sequence[Sequence[float]]],
                 query: Callable[[str], Sequence[float]]) -> None:
        self._name = name
        self._documents = documents
        self._query = query
        self._dimension: int | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self.embed_query("dimension")
        assert self._dimension is not None
        return self._dimension

    def _vector(self, values: Sequence[float]) -> Vector:
        vector = Vector(values)  # type: ignore[arg-type]
        if self._dimension is None:
            self._dimension = vector.dimension
        return vector

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        if not texts:
            return []
        return [self._vector(values) for values in self._documents(list(texts))]

    def embed_query(self, text: str) -> Embedding:
        return self._vector(self._query(text))


def as_floats(embedding: Embedding) -> list[float]:
    """A dense embedding as a float list (what the frameworks pass around)."""
    if not isinstance(embedding, Vector):
        raise UnsupportedEmbeddingError(
            f"the frameworks take dense vectors; this embedder gives {type(embedding).__name__}")
    return [float(value) for value in embedding.values]


@dataclass(frozen=True)
class Record:
    """One framework document: stored as one chunk whose id is ``id``."""

    id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    embedding: Sequence[float] | None = None  # None: the knowledge base's embedder embeds it
    document_id: str = ""


def write_records(knowledge_base: VectorKnowledgeBase, records: Sequence[Record]) -> list[str]:
    """Upsert ``records`` (one chunk each, keeping their ids) in batches; returns the ids.

    Texts without an embedding are embedded by the knowledge base's embedder, which is
    recorded as the collection's (a different one is refused, as in ``ingest``)."""
    if not records:
        return []
    embedder = knowledge_base.embedder
    own = [r for r in records if r.embedding is None]
    if own:
        knowledge_base.check_embedder()
    size = knowledge_base.batch_size
    for start in range(0, len(records), size):
        batch = records[start:start + size]
        texts = [r.text for r in batch if r.embedding is None]
        computed = iter(embedder.embed_documents(texts))
        entries = []
        for record in batch:
            vector = (next(computed) if record.embedding is None
                      else Vector(record.embedding))  # type: ignore[arg-type]
            chunk = TextChunk(id=record.id, document_id=record.document_id or record.id,
                              index=0, start=0, end=len(record.text), text=record.text,
                              metadata=dict(record.metadata))
            entries.append(VectorEntry(chunk=chunk, embedding=vector))
        if texts and start == 0 and isinstance(knowledge_base.index, DocumentIndex):
            knowledge_base.index.bind_embedder(embedder.name, embedder.dimension)
        knowledge_base.store.add(entries)
    return [r.id for r in records]


def list_chunks(knowledge_base: VectorKnowledgeBase,
                filters: MetadataFilters | None = None) -> list[TextChunk]:
    """The chunks ``filters`` keeps, in insertion order; the store filters when it can."""
    listing = getattr(knowledge_base.store, "chunks", None)
    if not callable(listing):
        raise ConfigurationError(
            f"{type(knowledge_base.store).__name__} cannot list its chunks")
    import inspect

    if "filters" in inspect.signature(listing).parameters:
        return list(listing(filters))
    # A store whose chunks() takes no filter: ragloom's reference evaluator filters.
    return [c for c in listing() if evaluate(filters, c.metadata)]


def get_chunks(knowledge_base: VectorKnowledgeBase, ids: Sequence[str]) -> list[TextChunk]:
    """The chunks with these ids, in the order asked; unknown ids are skipped."""
    reader = getattr(knowledge_base.store, "get_chunks", None)
    if callable(reader):
        return list(reader(list(ids)))
    wanted = {c.id: c for c in list_chunks(knowledge_base) if c.id in set(ids)}
    return [wanted[i] for i in ids if i in wanted]

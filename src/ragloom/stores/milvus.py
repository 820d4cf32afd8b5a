"""MilvusStore: knowledge bases in Milvus, on a server or in Milvus Lite (a local file).

``MilvusStore("http://host:19530", "kb")`` talks to a Milvus server or cluster;
``MilvusStore("/path/file.db", "kb")`` runs Milvus Lite in process. Same code, same
behaviour.

Each knowledge base is two Milvus collections (names derived from the knowledge
base's name, since Milvus allows only letters, digits and ``_``):

* ``rl_<name>_<hash>_c``: one row per chunk: id, document id, text, the analysed
  terms (``terms``, the ragloom tokenizer's output, which Milvus's BM25 function
  indexes after its standard tokenizer, so keyword analysis matches the other
  stores: lower-cased, diacritics removed, Porter-stemmed), metadata
  (JSON), the kind-tagged filter field ``fm`` (:mod:`ragloom.stores.milvus_expr`),
  chunk position (JSON) and the dense vector. Index ``FLAT`` (exact) or ``HNSW``.
* ``rl_<name>_<hash>_d``: one row per document, plus one row (``#collection``)
  recording the knowledge base's name, embedder, dimension and metric. Milvus needs
  a vector field in every collection; this one has a 2-dimensional placeholder.

Keyword search is Milvus's BM25 (``FunctionType.BM25``) over the same terms as the
other stores, with the same formula (Lucene's idf, k1=1.2, b=0.75) but Milvus's own
statistics (float32, per segment), so raw scores differ by a few per cent from the
other stores and near ties may order differently.

Milvus has no multi-row transactions: a write is ordered so that a crash leaves at
worst stale extra chunks of a document whose record has not changed yet, which the
next ingestion of that document replaces (the record is written last). Writes from
one store object are serialised by a lock; consistency level is ``Strong``.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np

from ragloom.errors import (
    ConfigurationError,
    DimensionMismatchError,
    EmbedderMismatchError,
    InvalidInputError,
    MissingDependencyError,
    StoreError,
)
from ragloom.filters import MetadataFilters
from ragloom.protocols import CollectionInfo, StoredDocument
from ragloom.retrieval.scores import cosine_to_score, dot_to_score, euclidean_to_score
from ragloom.retrieval.tokenize import tokenize
from ragloom.stores.exact import METRICS, Metric
from ragloom.stores.memory import dense_values
from ragloom.stores.milvus_expr import (
    compile_expression,
    flat_filter_fields,
    ids_expression,
    string_literal,
)
from ragloom.stores.milvus_schema import (
    MAX_TEXT_BYTES,
    chunks_schema,
    collection_names,
    documents_schema,
)
from ragloom.stores.pgvector_sql import plain
from ragloom.stores.sqlite import CollectionStats
from ragloom.stores.sqlite_keyword import keyword_matches
from ragloom.types import Document, Embedding, TextChunk, Vector, VectorEntry, VectorMatch

_STORE = "MilvusStore"
IndexKind = Literal["exact", "hnsw"]
_INFO_ID = "#collection"
#: Milvus's largest ``limit`` for one search.
MAX_TOP_K = 16_384
_CHUNK_FIELDS = ["id", "document_id", "text", "metadata", "position"]
_DOC_FIELDS = ["id", "source", "data"]


def _pymilvus() -> Any:
    try:
        import pymilvus
    except ImportError as exc:
        raise MissingDependencyError("pymilvus", "milvus", "the Milvus store") from exc
    return pymilvus


class MilvusStore:
    """One knowledge base in Milvus (server URI or Milvus Lite file path).

    ``metric=None`` means the existing collection's metric, or cosine for a new one.
    ``index``: ``"exact"`` (FLAT, the default) or ``"hnsw"`` (``m``,
    ``ef_construction``; ``ef_search`` per query). ``token`` authenticates to a
    server. Nothing connects until first use or :meth:`open`.
    """

    def __init__(
        self,
        uri: str,
        collection: str = "default",
        metric: Metric | None = None,
        *,
        index: IndexKind = "exact",
        token: str = "",
        m: int = 16,
        ef_construction: int = 200,
        ef_search: int = 128,
    ) -> None:
        if metric is not None and metric not in METRICS:
            raise ConfigurationError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
        if index not in ("exact", "hnsw"):
            raise ConfigurationError(f"unknown index {index!r}; use 'exact' or 'hnsw'")
        if not isinstance(collection, str) or not collection:
            raise ConfigurationError("a collection name must be a non-empty string")
        self.uri = str(uri)
        self.name = collection
        self.index_kind: IndexKind = index
        self.hnsw = (int(m), int(ef_construction), int(ef_search))
        self._metric_arg = metric
        self._token = token
        self._chunks_name, self._docs_name = collection_names(collection)
        self._client: Any = None
        self._lock = threading.RLock()
        self._info: dict[str, Any] | None = None

    # ---------------------------------------------------------------- connection
    def open(self) -> MilvusStore:
        self._db()
        return self

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                try:
                    self._client.close()
                finally:
                    self._client = None
                    self._info = None

    def __enter__(self) -> MilvusStore:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _db(self) -> Any:
        with self._lock:
            if self._client is None:
                pymilvus = _pymilvus()
                try:
                    self._client = pymilvus.MilvusClient(uri=self.uri, token=self._token)
                except Exception as exc:
                    raise StoreError(f"cannot reach Milvus at {self.uri}: {exc}") from exc
            return self._client

    def _call(self, what: str, method: str, *args: Any, **kwargs: Any) -> Any:
        client = self._db()
        try:
            return getattr(client, method)(*args, **kwargs)
        except Exception as exc:
            raise StoreError(f"Milvus {what} failed ({self.uri}): {exc}") from exc

    # ---------------------------------------------------------------- collections
    def _load_info(self) -> dict[str, Any] | None:
        """The knowledge base's record, or None if it does not exist yet."""
        if self._info is not None:
            return self._info
        if not self._call("listing collections", "has_collection", self._docs_name):
            return None
        self._call("loading", "load_collection", self._docs_name)
        rows = self._call("reading", "get", self._docs_name, ids=[_INFO_ID],
                          output_fields=["data"])
        if not rows:
            return None
        info = dict(rows[0]["data"])
        if self._call("listing collections", "has_collection", self._chunks_name):
            self._call("loading", "load_collection", self._chunks_name)
        if self._metric_arg is not None and info["metric"] != self._metric_arg:
            raise ConfigurationError(
                f"collection {self.name!r} uses the {info['metric']} metric, not "
                f"{self._metric_arg}; open it with metric={info['metric']!r} or metric=None")
        self._info = info
        return info

    def _fresh_info(self) -> dict[str, Any] | None:
        self._info = None
        return self._load_info()

    def _save_info(self, info: dict[str, Any]) -> None:
        self._call("writing", "upsert", self._docs_name,
                   [{"id": _INFO_ID, "source": "", "data": info, "v": [0.0, 0.0]}])
        self._info = info

    def _ensure(self, dimension: int | None) -> dict[str, Any]:
        """Create the documents collection (and, once the dimension is known, the chunks
        collection); returns the record."""
        info = self._load_info()
        if info is None:
            schema, params = documents_schema(_pymilvus(), self._db())
            self._call("creating a collection", "create_collection", self._docs_name,
                       schema=schema, index_params=params, consistency_level="Strong")
            info = {"name": self.name, "embedder": None, "dimension": None,
                    "metric": self._metric_arg or "cosine", "index": self.index_kind}
            self._save_info(info)
        if dimension is not None and info["dimension"] is None:
            info = {**info, "dimension": dimension}
            self._save_info(info)
        if info["dimension"] is not None and not self._call(
                "listing collections", "has_collection", self._chunks_name):
            schema, params = chunks_schema(
                _pymilvus(), self._db(), dimension=int(info["dimension"]),
                metric=str(info["metric"]), index=self.index_kind, hnsw=self.hnsw)
            self._call("creating a collection", "create_collection", self._chunks_name,
                       schema=schema, index_params=params, consistency_level="Strong")
        return info

    def _has_chunks(self) -> bool:
        info = self._load_info()
        return info is not None and info["dimension"] is not None and bool(
            self._call("listing collections", "has_collection", self._chunks_name))

    # ---------------------------------------------------------------- writing
    def _rows(self, entries: Sequence[VectorEntry], dimension: int | None
              ) -> list[dict[str, Any]]:
        """Validated Milvus rows (nothing is written if any entry is refused)."""
        rows: dict[str, dict[str, Any]] = {}
        for entry in entries:
            vector = np.asarray(dense_values(entry.embedding, _STORE), dtype=np.float32)
            if dimension is None:
                dimension = int(vector.shape[0])
            if vector.shape[0] != dimension:
                raise DimensionMismatchError(
                    f"vector has {vector.shape[0]} dimensions; collection {self.name!r} holds "
                    f"{dimension}. Use the embedder the collection was built with.")
            chunk = entry.chunk
            text = chunk.text.replace("\x00", "\ufffd")
            terms = " ".join(tokenize(text))
            if max(len(text.encode("utf-8")), len(terms.encode("utf-8"))) > MAX_TEXT_BYTES:
                raise InvalidInputError(
                    f"chunk {chunk.id} has more than {MAX_TEXT_BYTES} bytes of text, Milvus's "
                    "limit; split documents into smaller chunks")
            metadata = plain(dict(chunk.metadata))
            rows[chunk.id] = {
                "id": chunk.id, "document_id": chunk.document_id, "text": text,
                "terms": terms, "metadata": metadata, "fm": flat_filter_fields(metadata),
                "position": {"index": chunk.index, "start": chunk.start, "end": chunk.end,
                             "page": chunk.page},
                "dense": vector.tolist()}
        return list(rows.values())

    def _dimension(self) -> int | None:
        info = self._load_info()
        return None if info is None or info["dimension"] is None else int(info["dimension"])

    def _document_ids_of(self, ids: Sequence[str]) -> set[str]:
        if not ids or not self._has_chunks():
            return set()
        rows = self._call("reading", "get", self._chunks_name, ids=list(ids),
                          output_fields=["document_id"])
        return {row["document_id"] for row in rows}

    def _recount(self, document_ids: set[str]) -> None:
        """Set the chunk counts of these documents' records (those that exist)."""
        if not document_ids:
            return
        records = self._call("reading", "get", self._docs_name, ids=sorted(document_ids),
                             output_fields=_DOC_FIELDS)
        for record in records:
            data = dict(record["data"])
            data["chunk_count"] = self._count(ids_expression("document_id", [record["id"]]))
            self._call("writing", "upsert", self._docs_name,
                       [{"id": record["id"], "source": record["source"], "data": data,
                         "v": [0.0, 0.0]}])

    def add(self, entries: Sequence[VectorEntry]) -> None:
        """Insert or replace entries (upsert by chunk id)."""
        if not entries:
            return
        with self._lock:
            rows = self._rows(entries, self._dimension())
            self._ensure(len(rows[0]["dense"]))
            touched = self._document_ids_of([row["id"] for row in rows])
            self._call("writing", "upsert", self._chunks_name, rows)
            self._recount(touched | {row["document_id"] for row in rows})

    def _delete_chunks(self, expression: str) -> tuple[int, set[str]]:
        if not self._has_chunks():
            return 0, set()
        found = self._call("reading", "query", self._chunks_name, filter=expression,
                           output_fields=["id", "document_id"])
        if not found:
            return 0, set()
        self._call("deleting", "delete", self._chunks_name,
                   filter=ids_expression("id", [row["id"] for row in found]))
        return len(found), {row["document_id"] for row in found}

    def delete(self, ids: Sequence[str]) -> int:
        """Remove chunks by id; returns how many were removed."""
        if not ids:
            return 0
        with self._lock:
            removed, documents = self._delete_chunks(ids_expression("id", list(ids)))
            self._recount(documents)
            return removed

    def delete_where(self, filters: MetadataFilters | None) -> int:
        """Remove every chunk whose metadata matches ``filters`` (``None`` empties the
        knowledge base); documents left without chunks lose their records too.
        Returns how many chunks were removed."""
        with self._lock:
            if self._load_info() is None:
                return 0
            removed, documents = self._delete_chunks(compile_expression(filters) or "id != \"\"")
            if filters is None:
                self._call("deleting", "delete", self._docs_name, filter=f"id != \"{_INFO_ID}\"")
                return removed
            self._recount(documents)
            empty = [d.id for d in self.list_documents()
                     if d.id in documents and d.chunk_count == 0]
            if empty:
                self._call("deleting", "delete", self._docs_name,
                           filter=ids_expression("id", empty))
            return removed

    def replace_document(
        self, document: Document, entries: Sequence[VectorEntry], *, settings: str = ""
    ) -> None:
        """Store a document and its chunks, replacing any earlier document with the same
        source (or id) and all of its chunks; the record is written last."""
        strays = sorted({e.chunk.document_id for e in entries} - {document.id})
        if strays:
            raise InvalidInputError(
                f"chunks passed with document {document.id} ({document.source}) belong to "
                f"other documents: {', '.join(strays[:3])}; build them from this document")
        with self._lock:
            rows = self._rows(entries, self._dimension())
            self._ensure(len(rows[0]["dense"]) if rows else None)
            old = self._call("reading", "query", self._docs_name,
                             filter=f"source == {_quote(document.source)} or "
                                    f"{ids_expression('id', [document.id])}",
                             output_fields=["id"])
            doomed = sorted({row["id"] for row in old} | {document.id})
            if rows:
                self._call("writing", "upsert", self._chunks_name, rows)
            keep = [row["id"] for row in rows]
            stale = ids_expression("document_id", doomed)
            if keep:
                stale += f" and not ({ids_expression('id', keep)})"
            self._delete_chunks(stale)
            others = [doc_id for doc_id in doomed if doc_id != document.id]
            if others:
                self._call("deleting", "delete", self._docs_name,
                           filter=ids_expression("id", others))
            data = {"content_hash": str(document.metadata.get("content_hash", "")),
                    "settings": settings, "metadata": plain(dict(document.metadata)),
                    "chunk_count": len(rows)}
            self._call("writing", "upsert", self._docs_name,
                       [{"id": document.id, "source": document.source, "data": data,
                         "v": [0.0, 0.0]}])

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        if not document_ids:
            return 0
        with self._lock:
            if self._load_info() is None:
                return 0
            found = self._call("reading", "get", self._docs_name,
                               ids=[i for i in document_ids if i != _INFO_ID],
                               output_fields=["id"])
            self._delete_chunks(ids_expression("document_id", list(document_ids)))
            if found:
                self._call("deleting", "delete", self._docs_name,
                           filter=ids_expression("id", [row["id"] for row in found]))
            return len(found)

    def bind_embedder(self, embedder: str, dimension: int) -> CollectionInfo:
        """Record the embedder on first use; refuse a different one afterwards."""
        with self._lock:
            info = self._fresh_info()
            if info is not None and info["embedder"] is not None:
                if (info["embedder"], info["dimension"]) != (embedder, dimension):
                    raise EmbedderMismatchError(
                        f"knowledge base {self.name!r} was built with {info['embedder']} "
                        f"({info['dimension']} dimensions), not {embedder} ({dimension}). Use "
                        f"{info['embedder']}, or ingest into a new knowledge base.")
                return CollectionInfo(name=self.name, embedder=embedder, dimension=dimension)
            if info is not None and info["dimension"] not in (None, dimension):
                raise EmbedderMismatchError(
                    f"knowledge base {self.name!r} holds {info['dimension']}-dimensional "
                    f"vectors; {embedder} makes {dimension}. Use a matching embedder or a new "
                    "knowledge base.")
            info = self._ensure(dimension)
            self._save_info({**info, "embedder": embedder})
            return CollectionInfo(name=self.name, embedder=embedder, dimension=dimension)

    def drop_collection(self) -> bool:
        """Delete this knowledge base and everything in it; False if it did not exist."""
        with self._lock:
            existed = False
            for name in (self._chunks_name, self._docs_name):
                if self._call("listing collections", "has_collection", name):
                    self._call("dropping a collection", "drop_collection", name)
                    existed = True
            self._info = None
            return existed

    # ---------------------------------------------------------------- reading
    @staticmethod
    def _chunk(row: dict[str, Any]) -> TextChunk:
        position = row["position"]
        return TextChunk(id=row["id"], document_id=row["document_id"], index=position["index"],
                         start=position["start"], end=position["end"], page=position["page"],
                         text=row["text"], metadata=dict(row["metadata"]))

    def query(
        self, embedding: Embedding, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[VectorMatch]:
        """The ``top_k`` nearest chunks, optionally filtered by metadata."""
        vector = dense_values(embedding, _STORE)
        expression = compile_expression(filters)
        with self._lock:
            info = self._load_info()
            if info is None or top_k <= 0 or not self._has_chunks():
                return []
            if vector.shape[0] != info["dimension"]:
                raise DimensionMismatchError(
                    f"query has {vector.shape[0]} dimensions; this collection holds "
                    f"{info['dimension']}")
            params: dict[str, Any] = {}
            if self.index_kind == "hnsw":
                params = {"params": {"ef": max(self.hnsw[2], top_k)}}
            hits = self._call("searching", "search", self._chunks_name,
                              data=[np.asarray(vector, dtype=np.float32).tolist()],
                              anns_field="dense", limit=min(top_k, MAX_TOP_K),
                              filter=expression, output_fields=_CHUNK_FIELDS,
                              search_params=params)[0]
        metric = str(info["metric"])
        raw = np.array([hit["distance"] for hit in hits], dtype=np.float64)
        if metric == "euclidean":
            raw = np.sqrt(np.maximum(raw, 0.0))
            scores = euclidean_to_score(raw)
        elif metric == "dot":
            scores = dot_to_score(raw)
        else:
            scores = cosine_to_score(raw)
        return [VectorMatch(chunk=self._chunk(hit["entity"]), score=float(score),
                            raw_score=float(value))
                for hit, value, score in zip(hits, raw, scores, strict=True)]

    def keyword_query(
        self, text: str, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[VectorMatch]:
        """Chunks ranked by Milvus's BM25 over the ragloom tokenizer's terms."""
        terms = Counter(tokenize(text))
        if not terms or top_k <= 0:
            return []
        expression = compile_expression(filters)
        with self._lock:
            if not self._has_chunks():
                return []
            hits = self._call("searching", "search", self._chunks_name,
                              data=[" ".join(tokenize(text))], anns_field="sparse",
                              limit=min(top_k, MAX_TOP_K), filter=expression,
                              output_fields=_CHUNK_FIELDS)[0]
        # Milvus Lite reports BM25 negated (smaller is better); a server reports it as is.
        best = sorted(((self._chunk(hit["entity"]), abs(float(hit["distance"]))) for hit in hits),
                      key=lambda item: (-item[1], item[0].id))
        return keyword_matches([item for item in best if item[1] > 0.0])

    def _count(self, expression: str = "") -> int:
        if not self._has_chunks():
            return 0
        rows = self._call("counting", "query", self._chunks_name, filter=expression,
                          output_fields=["count(*)"])
        return int(rows[0]["count(*)"]) if rows else 0

    def count(self) -> int:
        with self._lock:
            return self._count()

    def chunks(self) -> list[TextChunk]:
        """Every chunk of the collection."""
        return [entry.chunk for batch in self.export_entries() for entry in batch]

    def get_chunks(self, ids: Sequence[str]) -> list[TextChunk]:
        if not ids or not self._has_chunks():
            return []
        rows = self._call("reading", "get", self._chunks_name, ids=list(ids),
                          output_fields=_CHUNK_FIELDS)
        found = {row["id"]: self._chunk(row) for row in rows}
        return [found[i] for i in ids if i in found]

    def export_entries(self, batch_size: int = 1000) -> Iterator[list[VectorEntry]]:
        """Every chunk with its vector, in batches."""
        if not self._has_chunks():
            return
        iterator = self._call("reading", "query_iterator", self._chunks_name,
                              batch_size=batch_size, filter="",
                              output_fields=[*_CHUNK_FIELDS, "dense"])
        try:
            while True:
                rows = iterator.next()
                if not rows:
                    return
                yield [VectorEntry(chunk=self._chunk(row),
                                   embedding=Vector(np.asarray(row["dense"], dtype=np.float32)))
                       for row in rows]
        finally:
            iterator.close()

    def collection_info(self) -> CollectionInfo | None:
        with self._lock:
            info = self._fresh_info()
        if info is None or info["embedder"] is None or info["dimension"] is None:
            return None
        return CollectionInfo(name=self.name, embedder=info["embedder"],
                              dimension=int(info["dimension"]))

    @staticmethod
    def _document(row: dict[str, Any]) -> StoredDocument:
        data = row["data"]
        return StoredDocument(id=row["id"], source=row["source"],
                              content_hash=data["content_hash"],
                              chunk_count=int(data["chunk_count"]), settings=data["settings"],
                              metadata=dict(data["metadata"]))

    def find_document(self, source: str) -> StoredDocument | None:
        with self._lock:
            if self._load_info() is None:
                return None
            rows = self._call("reading", "query", self._docs_name,
                              filter=f"source == {_quote(source)} and id != \"{_INFO_ID}\"",
                              output_fields=_DOC_FIELDS)
        return self._document(rows[0]) if rows else None

    def list_documents(self) -> list[StoredDocument]:
        with self._lock:
            if self._load_info() is None:
                return []
            rows = self._call("reading", "query", self._docs_name,
                              filter=f"id != \"{_INFO_ID}\"", output_fields=_DOC_FIELDS)
        return sorted((self._document(row) for row in rows), key=lambda d: d.source)

    def stats(self) -> CollectionStats:
        with self._lock:
            info = self._fresh_info()
            if info is None:
                return CollectionStats(name=self.name, embedder=None, dimension=None,
                                       metric=self._metric_arg or "cosine", document_count=0,
                                       chunk_count=0)
            documents = len(self._call("reading", "query", self._docs_name,
                                       filter=f"id != \"{_INFO_ID}\"", output_fields=["id"]))
            return CollectionStats(name=self.name, embedder=info["embedder"],
                                   dimension=info["dimension"], metric=info["metric"],
                                   document_count=documents, chunk_count=self._count())

    def list_collections(self) -> list[CollectionStats]:
        """Every ragloom knowledge base in this Milvus, by name."""
        names = self._call("listing collections", "list_collections")
        found = []
        for name in names:
            if not (name.startswith("rl_") and name.endswith("_d")):
                continue
            rows = self._call("reading", "get", name, ids=[_INFO_ID], output_fields=["data"]) \
                if self._loaded(name) else []
            if rows:
                other = MilvusStore(self.uri, rows[0]["data"]["name"], token=self._token)
                other._client = self._db()
                found.append(other.stats())
        return sorted(found, key=lambda stats: stats.name)

    def _loaded(self, name: str) -> bool:
        self._call("loading", "load_collection", name)
        return True

    def metadata_keys(self) -> dict[str, set[str]]:
        """Each chunk metadata key (top level and one level down, dotted) mapped to the
        filter kinds seen under it."""
        kinds = {"b": "bool", "n": "number", "s": "string"}
        keys: dict[str, set[str]] = {}
        for chunk_batch in self.export_entries():
            for entry in chunk_batch:
                for key, value in entry.chunk.metadata.items():
                    keys.setdefault(key, set())
                    if isinstance(value, dict):
                        for inner in value:
                            keys.setdefault(f"{key}.{inner}", set())
                for tagged in flat_filter_fields(entry.chunk.metadata):
                    kind, _, path = tagged.partition(":")
                    if path.count(".") <= 1:
                        keys.setdefault(path, set()).add(kinds[kind])
        return keys


def _quote(text: str) -> str:
    return string_literal(text)


__all__ = ["MilvusStore", "collection_names"]

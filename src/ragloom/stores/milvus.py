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

Writes (:mod:`ragloom.stores.milvus_write`) are ordered so that a crash leaves at
worst stale extra chunks of a document whose record has not changed yet; writes from
one store object are serialised by a lock; consistency level is ``Strong``. The
connection and the knowledge base's record live in
:mod:`ragloom.stores.milvus_client`.

Index types: ``FLAT`` (exact) or ``HNSW`` for the dense vectors on a Milvus server and
on Milvus Lite (whose engine, pure Python since milvus-lite 3, builds FAISS indexes
per sealed segment and searches its in-memory segment by brute force; it knows
``FLAT``, ``HNSW``, ``IVF_FLAT`` and ``AUTOINDEX`` but not ``IVF_SQ8``/``IVF_PQ``,
DiskANN or GPU indexes), ``SPARSE_INVERTED_INDEX`` for BM25, ``INVERTED`` for
``document_id``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ragloom.errors import DimensionMismatchError
from ragloom.filters import MetadataFilters
from ragloom.lexical.tokenize import tokenize
from ragloom.protocols import CollectionInfo, CollectionStats, StoredDocument
from ragloom.stores.exact import Metric
from ragloom.stores.memory import dense_values
from ragloom.stores.milvus_client import INFO_ID, MilvusCollections
from ragloom.stores.milvus_expr import compile_expression, flat_filter_fields, string_literal
from ragloom.stores.milvus_schema import collection_names
from ragloom.stores.milvus_write import MilvusWriter
from ragloom.stores.server_store import IndexKind, ServerStore, scores_of
from ragloom.stores.sqlite_keyword import keyword_matches
from ragloom.types import Document, Embedding, TextChunk, Vector, VectorEntry, VectorMatch

_STORE = "MilvusStore"
#: Milvus's largest ``limit`` for one search.
MAX_TOP_K = 16_384
_CHUNK_FIELDS = ["id", "document_id", "text", "metadata", "position"]
_DOC_FIELDS = ["id", "source", "data"]


class MilvusStore(ServerStore):
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
        super().__init__(collection, metric, index, (m, ef_construction, ef_search))
        self.uri = str(uri)
        self._token = token
        self._db = MilvusCollections(self.uri, collection, token, metric=metric, index=index,
                                     hnsw=self.hnsw, lock=self._lock)
        self._writer = MilvusWriter(self._db, metric or "cosine")

    # ---------------------------------------------------------------- connection
    def _connect(self) -> Any:
        return self._db.connect()

    def _disconnect(self) -> None:
        self._db.disconnect()

    def _info(self, *, fresh: bool = False) -> dict[str, Any] | None:
        info = self._db.info(fresh=fresh)
        if info is not None:
            self._check_metric(str(info["metric"]))
        return info

    # ---------------------------------------------------------------- writing
    def add(self, entries: Sequence[VectorEntry]) -> None:
        """Insert or replace entries (upsert by chunk id)."""
        if entries:
            self._refuse_dropped()
            self._info()
            self._writer.add(entries)

    def delete(self, ids: Sequence[str]) -> int:
        """Remove chunks by id; returns how many were removed."""
        return self._writer.delete(ids) if ids else 0

    def delete_where(self, filters: MetadataFilters | None) -> int:
        """Remove every chunk whose metadata matches ``filters`` (``None`` empties the
        knowledge base); documents left without chunks lose their records too.
        Returns how many chunks were removed."""
        return self._writer.delete_where(filters)

    def replace_document(
        self, document: Document, entries: Sequence[VectorEntry], *, settings: str = ""
    ) -> None:
        """Store a document and its chunks, replacing any earlier document with the same
        source (or id) and all of its chunks; the record is written last."""
        self.replace_documents([(document, entries)], settings=settings)

    def replace_documents(
        self, items: Sequence[tuple[Document, Sequence[VectorEntry]]], *, settings: str = ""
    ) -> None:
        """:meth:`replace_document` for several documents with the calls of one."""
        self._refuse_dropped()
        self._info()
        self._writer.replace_documents(items, settings)

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        return self._writer.delete_documents(document_ids) if document_ids else 0

    def bind_embedder(self, embedder: str, dimension: int) -> CollectionInfo:
        """Record the embedder on first use; refuse a different one afterwards."""
        with self._lock:
            info = self._info(fresh=True)
            if info is not None:
                bound = self._check_binding(info["embedder"], info["dimension"], embedder,
                                            dimension)
                if bound is not None:
                    return bound
            self._refuse_dropped()
            info = self._db.ensure(dimension, self._metric_arg or "cosine")
            self._db.save_info({**info, "embedder": embedder})
            return CollectionInfo(name=self.name, embedder=embedder, dimension=dimension)

    def drop_collection(self) -> bool:
        """Delete this knowledge base and everything in it; False if it did not exist.
        Later writes through this object raise CollectionDroppedError."""
        with self._lock:
            self._dropped = True
            return self._db.drop()

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
            info = self._info()
            if info is None or top_k <= 0 or not self._db.has_chunks():
                return []
            if vector.shape[0] != info["dimension"]:
                raise DimensionMismatchError(
                    f"query has {vector.shape[0]} dimensions; this collection holds "
                    f"{info['dimension']}")
            params: dict[str, Any] = {}
            if self.index_kind == "hnsw":
                params = {"params": {"ef": max(self.hnsw[2], top_k)}}
            hits = self._db.call("searching", "search", self._db.chunks,
                                 data=[np.asarray(vector, dtype=np.float32).tolist()],
                                 anns_field="dense", limit=min(top_k, MAX_TOP_K),
                                 filter=expression, output_fields=_CHUNK_FIELDS,
                                 search_params=params)[0]
        metric = str(info["metric"])
        raw = np.array([hit["distance"] for hit in hits], dtype=np.float64)
        if metric == "euclidean":  # Milvus's L2 is the squared distance
            raw = np.sqrt(np.maximum(raw, 0.0))
        scores = scores_of(metric, raw)
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
            if self._info() is None or not self._db.has_chunks():
                return []
            hits = self._db.call("searching", "search", self._db.chunks,
                                 data=[" ".join(tokenize(text))], anns_field="sparse",
                                 limit=min(top_k, MAX_TOP_K), filter=expression,
                                 output_fields=_CHUNK_FIELDS)[0]
        # Milvus Lite has reported BM25 negated (smaller is better); a server reports it
        # as is.
        best = sorted(((self._chunk(hit["entity"]), abs(float(hit["distance"]))) for hit in hits),
                      key=lambda item: (-item[1], item[0].id))
        return keyword_matches([item for item in best if item[1] > 0.0])

    def count(self) -> int:
        with self._lock:
            return self._db.count() if self._info() is not None else 0

    def chunks(self) -> list[TextChunk]:
        """Every chunk of the collection."""
        return [entry.chunk for batch in self.export_entries() for entry in batch]

    def get_chunks(self, ids: Sequence[str]) -> list[TextChunk]:
        with self._lock:
            if not ids or self._info() is None or not self._db.has_chunks():
                return []
            rows = self._db.call("reading", "get", self._db.chunks, ids=list(ids),
                                 output_fields=_CHUNK_FIELDS)
        found = {row["id"]: self._chunk(row) for row in rows}
        return [found[i] for i in ids if i in found]

    def get_embeddings(self, ids: Sequence[str]) -> dict[str, Embedding]:
        """The stored vectors of these chunk ids; unknown ids are absent."""
        with self._lock:
            if not ids or self._info() is None or not self._db.has_chunks():
                return {}
            rows = self._db.call("reading", "get", self._db.chunks, ids=list(ids),
                                 output_fields=["id", "dense"])
        return {row["id"]: Vector(np.asarray(row["dense"], dtype=np.float32)) for row in rows}

    def export_entries(self, batch_size: int = 1000) -> Iterator[list[VectorEntry]]:
        """Every chunk with its vector, in batches."""
        with self._lock:
            if self._info() is None or not self._db.has_chunks():
                return
            iterator = self._db.call("reading", "query_iterator", self._db.chunks,
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
            info = self._info(fresh=True)
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

    def _documents(self, expression: str, fields: list[str]) -> list[dict[str, Any]]:
        with self._lock:
            if self._info() is None:
                return []
            rows = self._db.call("reading", "query", self._db.documents,
                                 filter=f"({expression}) and id != \"{INFO_ID}\"",
                                 output_fields=fields)
        return list(rows)

    def find_document(self, source: str) -> StoredDocument | None:
        rows = self._documents(f"source == {string_literal(source)}", _DOC_FIELDS)
        return self._document(rows[0]) if rows else None

    def list_documents(self) -> list[StoredDocument]:
        rows = self._documents("id != \"\"", _DOC_FIELDS)
        return sorted((self._document(row) for row in rows), key=lambda d: d.source)

    def stats(self) -> CollectionStats:
        with self._lock:
            info = self._info(fresh=True)
            if info is None:
                return self._empty_stats()
            documents = len(self._documents("id != \"\"", ["id"]))
            return CollectionStats(name=self.name, embedder=info["embedder"],
                                   dimension=info["dimension"], metric=info["metric"],
                                   document_count=documents, chunk_count=self._db.count())

    def list_collections(self) -> list[CollectionStats]:
        """Every ragloom knowledge base in this Milvus, by name."""
        names = self._db.call("listing collections", "list_collections")
        found = []
        for name in names:
            if not (name.startswith("rl_") and name.endswith("_d")):
                continue
            self._db.call("loading", "load_collection", name)
            rows = self._db.call("reading", "get", name, ids=[INFO_ID], output_fields=["data"])
            if rows:
                other = MilvusStore(self.uri, rows[0]["data"]["name"], token=self._token)
                other._db.client = self._connect()  # our client; never closed by it
                found.append(other.stats())
        return sorted(found, key=lambda stats: stats.name)

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


__all__ = ["MilvusStore", "collection_names"]

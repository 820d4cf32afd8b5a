"""SqliteVectorStore: the embedded default store, one SQLite file for everything.

Layout (``PRAGMA user_version`` holds :data:`SCHEMA_VERSION`):

* ``collections``: one row per knowledge base (name, embedder, dimension, metric and
  a ``generation`` counter bumped by every write).
* ``documents``: one row per ingested source (unique per collection).
* ``chunks``: text, metadata JSON and the vector as a little-endian float32 BLOB.
* per collection ``N`` (its integer id): a view ``chunk_text_N`` over its chunks, an
  external-content FTS5 table ``fts_N`` on that view (so BM25 statistics are the
  collection's own) and triggers that keep ``fts_N`` in step with ``chunks``.

Crash safety: every write is one ``BEGIN IMMEDIATE`` transaction in WAL mode and the
FTS rows change through triggers inside it, so a process killed mid-write leaves the
database as it was before or after that write: never a document without its chunks
or a chunk without its vector or its FTS row. ``synchronous=NORMAL`` keeps committed
writes across a killed process; a power cut may lose the last commits but never
corrupts the file.

Vector search is exact: the collection's vectors live in a
:class:`~ragloom.stores.exact.DenseMatrix` rebuilt from the BLOBs on first use and
changed only after a commit. Other connections (another store object, another
process) are noticed through ``generation``; their changes are then read from the
change log (:mod:`ragloom.stores.sqlite_changes`) and applied, not reloaded.

Keyword search runs on FTS5, or on an in-memory copy of the text index (a
:class:`~ragloom.stores.bm25.BM25Index`, same formula, same results) once the store
object has answered a few keyword queries (``keyword_index``): the copy is built from
the chunk texts, changed after this object's own commits like the matrix, and
brought past other connections' writes from the change log (rebuilt in a background
thread, FTS5 answering meanwhile, when that is too much or the log has moved on).

Beside this module: the schema and SQL snippets in :mod:`ragloom.stores.sqlite_schema`,
opening the file in :mod:`ragloom.stores.sqlite_connection`, reading and writing rows
in :mod:`ragloom.stores.sqlite_rows`, FTS5 ranking and the in-memory copy's
bookkeeping in :mod:`ragloom.stores.sqlite_keyword`. This module holds the store's
state: the connection, the transactions and the caches kept in step with them.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ragloom.errors import (
    CollectionDroppedError,
    ConfigurationError,
    DimensionMismatchError,
    EmbedderMismatchError,
    RagError,
    StoreError,
)
from ragloom.filters import MetadataFilters
from ragloom.lexical.tokenize import query_terms
from ragloom.protocols import CollectionInfo, CollectionStats, StoredDocument
from ragloom.scores import bm25_to_score
from ragloom.stores.ann import AnnSettings, sidecar_path
from ragloom.stores.ann_matrix import ApproximateMatrix
from ragloom.stores.bm25 import BM25Index
from ragloom.stores.document_records import check_document_entries
from ragloom.stores.exact import METRICS, DenseMatrix, Metric
from ragloom.stores.memory import dense_values
from ragloom.stores.sqlite_changes import changes_since, high_water, prune
from ragloom.stores.sqlite_connection import SqliteDatabase
from ragloom.stores.sqlite_filters import compile_filters, compile_indexed_filters
from ragloom.stores.sqlite_keyword import (
    AUTO_KEYWORD_INDEX_AFTER,
    KEYWORD_INDEX_MODES,
    Fts5Ranker,
    KeywordCopy,
    KeywordIndexMode,
    keyword_matches,
)
from ragloom.stores.sqlite_keyword import Fts5Search as _Fts5Search
from ragloom.stores.sqlite_rows import (
    DenseRow,
    chunk_from_row,
    chunk_ids_by_pk,
    delete_chunks,
    dense_rows,
    document_from_row,
    fetch_chunks,
    filtered_ids_sql,
    metadata_key_kinds,
    replace_document_rows,
    stats_from_row,
    write_chunks,
)
from ragloom.stores.sqlite_schema import (
    BY_DOCUMENTS,
    BY_IDS,
    CHUNK_COLUMNS,
    DOCUMENT_COLUMNS,
    IN_JSON,
    RECOUNT,
    SCHEMA_VERSION,
    STATS_SQL,
    VECTOR_DTYPE,
    collection_ddl,
    drop_collection_ddl,
    ids_json,
)
from ragloom.types import Document, Embedding, TextChunk, Vector, VectorEntry, VectorMatch

_STORE = "SqliteVectorStore"
# The filtered-id lists a store keeps: a few filters, none of more than 200k ids (1.6 MB
# of references each at most).
_ALLOWED_CACHE_SIZE = 16
_ALLOWED_CACHE_MAX_IDS = 200_000


class SqliteVectorStore:
    """Vectors, text index, metadata and documents of a knowledge base in one SQLite file.

    Several collections share a file; each store object serves one. ``metric=None``
    means the existing collection's metric, or cosine for a new one; naming a metric
    that differs from an existing collection's raises :class:`ConfigurationError`.
    ``path=":memory:"`` keeps everything in memory (for tests).

    Safe to share between threads (one lock serialises access to the connection).
    The file is opened on first use or by :meth:`open`; :meth:`close` closes it and a
    later call reopens it. ``database`` (a :class:`SqliteDatabase` of the same file)
    makes this store a view sharing that connection and lock with the other views;
    :meth:`close` then frees only this collection's in-memory indexes.

    After :meth:`drop` (or :meth:`drop_collection`) a write raises
    :class:`~ragloom.errors.CollectionDroppedError`: the collection is never created
    again behind the caller's back (a new store object may create it on purpose).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        collection: str = "default",
        metric: Metric | None = None,
        *,
        keyword_index: KeywordIndexMode = "auto",
        ann: Literal["auto", "off"] = "auto",
        ann_settings: AnnSettings | None = None,
        database: SqliteDatabase | None = None,
    ) -> None:
        if ann not in ("auto", "off"):
            raise ConfigurationError(f"unknown ann {ann!r}; use 'auto' or 'off'")
        #: ``auto``: an HNSW sidecar serves vector queries once the collection holds
        #: ``ann_settings.threshold`` vectors (when hnswlib is installed); ``off``: exact.
        self.ann = ann
        self.ann_settings = ann_settings or AnnSettings()
        if metric is not None and metric not in METRICS:
            raise ConfigurationError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
        if keyword_index not in KEYWORD_INDEX_MODES:
            raise ConfigurationError(
                f"unknown keyword_index {keyword_index!r}; use one of "
                f"{', '.join(KEYWORD_INDEX_MODES)}")
        if not isinstance(collection, str) or not collection:
            raise ConfigurationError("a collection name must be a non-empty string")
        self.path = str(path)
        self.name = collection
        self._metric_arg: Metric | None = metric
        self.keyword_index: KeywordIndexMode = keyword_index
        self._shared = database is not None
        self._database = database if database is not None else SqliteDatabase(self.path)
        self._lock = self._database.lock
        self._dropped = False
        self._memory = KeywordCopy()  # the in-memory keyword index and its counters
        self._fts = Fts5Ranker()  # FTS5 ranking, with its per-generation count caches
        self._conn: sqlite3.Connection | None = None
        self._logged = False  # whether the file has the change log (set on connect)
        # Chunk ids a filter keeps, per (collection, generation, filter); see _allowed.
        self._allowed_cache: OrderedDict[tuple[int, int, str], list[str]] = OrderedDict()
        self._reset_state()
        self._keys_cache: tuple[tuple[int, int], dict[str, set[str]]] | None = None
        #: Extensions that store rows of their own with a document (the knowledge graph):
        #: each is called as ``hook(connection, collection_id, document)`` inside the
        #: transaction of :meth:`replace_document`, after the document's rows are written.
        self.write_hooks: list[Callable[[sqlite3.Connection, int, Document], None]] = []

    # ------------------------------------------------------------- connection
    def _reset_state(self) -> None:
        self._cid: int | None = None
        self._generation: int | None = None
        self._embedder: str | None = None
        self._dimension: int | None = None
        # Loaded on the first vector query, not on open: ingesting or checking documents
        # then costs no memory for the collection's vectors.
        self._matrix: DenseMatrix | None = None
        self._metric_db: Metric = self._metric_arg or "cosine"
        self._memory.index = None
        self._allowed_cache.clear()
        # The change-log position the matrix is at (see ragloom.stores.sqlite_changes).
        self._matrix_seq = 0

    def open(self) -> SqliteVectorStore:
        """Open (and create if needed) the file and load this collection's vectors."""
        with self._lock, self._read() as conn:
            if self._cid is not None:
                self._vectors(conn)
        return self

    def close(self) -> None:
        with self._lock:
            if isinstance(self._matrix, ApproximateMatrix):
                # Saved with the generation it matches, so the next process loads it.
                self._matrix.save()
            if self._conn is not None:
                if not self._shared:
                    self._database.close()
                self._conn = None
            self._reset_state()

    @property
    def database(self) -> SqliteDatabase:
        """The file's shared connection (hand it to other views of the same file)."""
        return self._database

    def __enter__(self) -> SqliteVectorStore:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _connect(self) -> sqlite3.Connection:
        # Asked each time: another view may have closed and reopened the shared file.
        self._conn, self._logged = self._database.connect()
        return self._conn

    # ---------------------------------------------------------- transactions
    def _sync(self, conn: sqlite3.Connection) -> None:
        """Bring the cached collection state and matrix up to the database's."""
        row = conn.execute(
            "SELECT id, generation, embedder, dimension, metric FROM collections WHERE name = ?",
            (self.name,),
        ).fetchone()
        if row is None:
            self._reset_state()
            return
        cid, generation, embedder, dimension, metric = row
        if self._metric_arg is not None and metric != self._metric_arg:
            raise ConfigurationError(
                f"collection {self.name!r} in {self.path!r} uses the {metric} metric, not "
                f"{self._metric_arg}; open it with metric={metric!r} or metric=None"
            )
        self._embedder, self._dimension, self._metric_db = embedder, dimension, metric
        if (cid, generation) != (self._cid, self._generation):
            if cid != self._cid:
                self._matrix = None
                self._memory.index = None
                self._allowed_cache.clear()
            else:
                # Another connection wrote: apply its changes, not a reload.
                self._catch_up(conn, cid)
            self._cid, self._generation = cid, generation

    def _catch_up(self, conn: sqlite3.Connection, cid: int) -> None:
        """Bring the loaded caches past other connections' changes (the change log)."""
        if self._matrix is not None:
            changes = changes_since(conn, cid, self._matrix_seq) if self._logged else None
            if changes is None:
                self._matrix = None  # the log does not reach back: reload on next use
            else:
                self._matrix.remove(changes.removed)
                self._matrix.upsert((chunk_id, np.frombuffer(blob, dtype=VECTOR_DTYPE))
                                    for _, chunk_id, _, blob in changes.current)
                self._matrix_seq = changes.seq
        if self._memory.catch_up(conn, cid, self._logged):
            self._build_keyword_index_later()

    def _vectors(self, conn: sqlite3.Connection) -> DenseMatrix:
        """The collection's vectors in memory, loading them on first use."""
        if self._matrix is None:
            self._matrix_seq = high_water(conn) if self._logged else 0
            self._matrix = self._load_matrix(conn, self._cid or 0, self._metric_db,
                                             self._dimension)
        if isinstance(self._matrix, ApproximateMatrix):
            self._matrix.set_stamp(f"{self._cid}:{self._generation}")
        return self._matrix

    def _load_matrix(
        self, conn: sqlite3.Connection, cid: int, metric: Metric, dimension: int | None
    ) -> DenseMatrix:
        matrix = (DenseMatrix(metric, dimension) if self.ann == "off" else ApproximateMatrix(
            metric, dimension, settings=self.ann_settings,
            path=sidecar_path(self.path, self.name), stamp=f"{cid}:{self._generation}"))
        rows = conn.execute("SELECT id, vector FROM chunks WHERE collection_id = ?", (cid,))
        matrix.upsert(
            (chunk_id, np.frombuffer(blob, dtype=VECTOR_DTYPE)) for chunk_id, blob in rows)
        return matrix

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot (one read transaction) with the state synced to it."""
        conn = self._connect()
        try:
            conn.execute("BEGIN")
            try:
                self._sync(conn)
                yield conn
            finally:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"reading the SQLite store {self.path!r} failed: {exc}") from exc

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; on any error it rolls back and the cache is restored."""
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write to the SQLite store {self.path!r}: {exc}") from exc
        saved: tuple[Any, ...] = ()
        try:
            self._sync(conn)
            saved = (self._cid, self._generation, self._embedder, self._dimension, self._matrix)
            yield conn
            seq = None
            if self._logged:
                prune(conn)
                seq = high_water(conn)
            conn.execute("COMMIT")
            if seq is not None:
                # The caches were caught up when this write began and the write's own
                # changes are applied to them by the caller, after this.
                self._matrix_seq = self._memory.seq = seq
        except BaseException as exc:
            # The transaction may already be gone; either way the database is unchanged.
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            if saved:
                (self._cid, self._generation, self._embedder, self._dimension,
                 self._matrix) = saved
            if isinstance(exc, sqlite3.Error):
                raise StoreError(
                    f"writing to the SQLite store {self.path!r} failed: {exc}") from exc
            raise

    def _ensure_collection(self, conn: sqlite3.Connection) -> int:
        """The collection's id, creating it (inside the open write transaction) if needed."""
        if self._cid is not None:
            return self._cid
        if self._dropped or (self._shared and self.name in self._database.dropped):
            raise CollectionDroppedError(
                f"collection {self.name!r} was deleted; it is not created again by a "
                "write (open a new store object to create it on purpose)")
        metric: Metric = self._metric_arg or "cosine"
        cursor = conn.execute(
            "INSERT INTO collections (name, metric, generation, created) VALUES (?, ?, 0, ?)",
            (self.name, metric, time.time()),
        )
        cid = int(cursor.lastrowid or 0)
        for statement in collection_ddl(cid):
            conn.execute(statement)
        self._cid, self._generation, self._matrix = cid, 0, None
        return cid

    def _bump(self, conn: sqlite3.Connection, cid: int) -> int:
        conn.execute("UPDATE collections SET generation = generation + 1 WHERE id = ?", (cid,))
        return (self._generation or 0) + 1

    # ------------------------------------------------------------- writing
    def _check_dimensions(self, conn: sqlite3.Connection, cid: int,
                          vectors: Sequence[DenseRow]) -> None:
        """Record the collection's dimension from its first vectors; refuse others."""
        for dimension in sorted({int(vector.shape[0]) for _, vector in vectors}):
            if self._dimension is None:
                conn.execute("UPDATE collections SET dimension = ? WHERE id = ?",
                             (dimension, cid))
                self._dimension = dimension
            elif dimension != self._dimension:
                raise DimensionMismatchError(
                    f"vector has {dimension} dimensions; collection {self.name!r} holds "
                    f"{self._dimension}. Use the embedder the collection was built with."
                )

    def add(self, entries: Sequence[VectorEntry]) -> None:
        """Insert or replace entries (upsert by chunk id), in one transaction."""
        if not entries:
            return
        vectors = dense_rows(entries, _STORE)
        with self._lock:
            with self._write() as conn:
                cid = self._ensure_collection(conn)
                self._check_dimensions(conn, cid, vectors)
                touched = write_chunks(conn, cid, entries, vectors)
                conn.execute(RECOUNT, (cid, ids_json(touched)))
                generation = self._bump(conn, cid)
            if self._matrix is not None:
                self._matrix.upsert(vectors)
            self._memory.update((), entries)
            self._generation = generation

    def delete(self, ids: Sequence[str]) -> int:
        """Remove chunks (row, vector and FTS entry together); returns how many."""
        if not ids:
            return 0
        with self._lock:
            with self._write() as conn:
                if self._cid is None:
                    return 0
                cid = self._cid
                removed, documents = delete_chunks(conn, BY_IDS, (ids_json(ids), cid))
                conn.execute(RECOUNT, (cid, ids_json(documents)))
                generation = self._bump(conn, cid)
            if self._matrix is not None:
                self._matrix.remove(removed)
            self._memory.update(removed, ())
            self._generation = generation
            return len(removed)

    def replace_document(
        self, document: Document, entries: Sequence[VectorEntry], *, settings: str = ""
    ) -> None:
        """Store a document and its chunks in one transaction, replacing any earlier
        document with the same source (or id) and all of its chunks."""
        self.replace_documents([(document, entries)], settings=settings)

    def replace_documents(
        self, items: Sequence[tuple[Document, Sequence[VectorEntry]]], *, settings: str = ""
    ) -> None:
        """:meth:`replace_document` for several documents, one after another, in one
        transaction (all or none are stored): what a batch of ingested documents costs."""
        writes = []
        for document, entries in items:
            check_document_entries(document, entries)
            writes.append((document, entries, dense_rows(entries, _STORE)))
        if not writes:
            return
        now = time.time()
        with self._lock:
            applied = []
            with self._write() as conn:
                cid = self._ensure_collection(conn)
                for document, entries, vectors in writes:
                    self._check_dimensions(conn, cid, vectors)
                    removed = replace_document_rows(conn, cid, document, entries, vectors,
                                                    settings=settings, now=now)
                    for hook in self.write_hooks:
                        hook(conn, cid, document)
                    applied.append((removed, entries, vectors))
                generation = self._bump(conn, cid)
            # In order: a later document of the batch may have replaced an earlier one.
            for removed, entries, vectors in applied:
                if self._matrix is not None:
                    self._matrix.remove(removed)
                    self._matrix.upsert(vectors)
                self._memory.update(removed, entries)
            self._generation = generation

    def delete_where(self, filters: MetadataFilters | None) -> int:
        """Remove every chunk whose metadata matches ``filters`` (``removeAll(filter)``;
        ``None`` empties the collection) in one transaction; documents left without
        chunks lose their records too, so ingesting them again is not skipped.
        Returns how many chunks were removed."""
        where, params = compile_filters(filters, "c.metadata")
        with self._lock:
            with self._write() as conn:
                if self._cid is None:
                    return 0
                cid = self._cid
                removed, documents = delete_chunks(
                    conn, f"chunks AS c WHERE c.collection_id = ? AND {where}", (cid, *params))
                if filters is None:
                    conn.execute("DELETE FROM documents WHERE collection_id = ?", (cid,))
                else:
                    conn.execute(RECOUNT, (cid, ids_json(documents)))
                    conn.execute("DELETE FROM documents WHERE collection_id = ? AND "
                                 f"chunk_count = 0 AND id {IN_JSON}", (cid, ids_json(documents)))
                generation = self._bump(conn, cid)
            if self._matrix is not None:
                self._matrix.remove(removed)
            self._memory.update(removed, ())
            self._generation = generation
            return len(removed)

    def document_chunks(self, document_id: str) -> list[TextChunk]:
        """The stored chunks of one document, in order (for retrieval expansion)."""
        with self._lock, self._read() as conn:
            if self._cid is None:
                return []
            rows = conn.execute(f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE collection_id = ? "
                                "AND document_id = ? ORDER BY idx", (self._cid, document_id))
            return [chunk_from_row(row) for row in rows]

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        """Remove documents with their chunks, vectors and FTS rows; returns how many
        documents were removed (chunks without a document record go too)."""
        if not document_ids:
            return 0
        with self._lock:
            with self._write() as conn:
                if self._cid is None:
                    return 0
                cid = self._cid
                removed, _ = delete_chunks(conn, BY_DOCUMENTS,
                                                 (cid, ids_json(document_ids)))
                count = conn.execute(
                    f"DELETE FROM documents WHERE collection_id = ? AND id {IN_JSON}",
                    (cid, ids_json(document_ids))).rowcount
                generation = self._bump(conn, cid)
            if self._matrix is not None:
                self._matrix.remove(removed)
            self._memory.update(removed, ())
            self._generation = generation
            return int(count)

    def bind_embedder(self, embedder: str, dimension: int) -> CollectionInfo:
        """Record the embedder on first use; refuse a different one afterwards."""
        with self._lock:
            with self._read():
                info = self._checked_info(embedder, dimension)
            if info is not None:
                return info
            with self._write() as conn:
                info = self._checked_info(embedder, dimension)
                if info is not None:
                    return info
                cid = self._ensure_collection(conn)
                conn.execute("UPDATE collections SET embedder = ?, dimension = ? WHERE id = ?",
                             (embedder, dimension, cid))
                generation = self._bump(conn, cid)
            self._embedder, self._dimension = embedder, dimension
            self._generation = generation
            return CollectionInfo(name=self.name, embedder=embedder, dimension=dimension)

    def _checked_info(self, embedder: str, dimension: int) -> CollectionInfo | None:
        """The bound info if it equals the request, None if unbound, else an error."""
        if self._embedder is None:
            if self._dimension is not None and self._dimension != dimension:
                raise EmbedderMismatchError(
                    f"knowledge base {self.name!r} holds {self._dimension}-dimensional vectors; "
                    f"{embedder} makes {dimension}. Use a matching embedder or a new "
                    "knowledge base."
                )
            return None
        if (self._embedder, self._dimension) != (embedder, dimension):
            raise EmbedderMismatchError(
                f"knowledge base {self.name!r} was built with {self._embedder} "
                f"({self._dimension} dimensions), not {embedder} ({dimension}). Use "
                f"{self._embedder}, or ingest into a new knowledge base (or drop this one)."
            )
        return CollectionInfo(name=self.name, embedder=self._embedder, dimension=dimension)

    def drop_collection(self) -> bool:
        """Delete this collection, everything in it and its HNSW sidecar file; False
        if it did not exist. Later writes through this object raise
        :class:`~ragloom.errors.CollectionDroppedError`."""
        with self._lock:
            self._dropped = True
            if self._shared:
                self._database.dropped.add(self.name)
            with self._write() as conn:
                existed = self._cid is not None
                if self._cid is not None:
                    for statement in drop_collection_ddl(self._cid):
                        conn.execute(statement)
                    conn.execute("DELETE FROM collections WHERE id = ?", (self._cid,))
            self._reset_state()
            sidecar = sidecar_path(self.path, self.name)
            if sidecar is not None:
                for leftover in (sidecar, *sidecar.parent.glob(f"{sidecar.name}.*")):
                    with suppress(OSError):
                        leftover.unlink()
            return existed

    def drop(self) -> bool:
        """:meth:`drop_collection` (the :class:`~ragloom.protocols.CollectionHandle` name)."""
        return self.drop_collection()

    # ------------------------------------------------------------- reading
    @contextmanager
    def reading(self) -> Iterator[tuple[sqlite3.Connection, int | None]]:
        """One read transaction for extensions (the knowledge graph): the connection
        and this collection's id (None if it does not exist yet), under the lock."""
        with self._lock, self._read() as conn:
            yield conn, self._cid

    @contextmanager
    def writing(self) -> Iterator[tuple[sqlite3.Connection, int]]:
        """One write transaction for extensions: the connection and this collection's
        id (the collection is created if needed), under the lock."""
        with self._lock, self._write() as conn:
            yield conn, self._ensure_collection(conn)

    def _fetch(self, conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, TextChunk]:
        return fetch_chunks(conn, self._cid or 0, ids)

    def query(
        self, embedding: Embedding, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[VectorMatch]:
        """The ``top_k`` nearest chunks (exact search), optionally filtered by metadata."""
        vector = dense_values(embedding, _STORE)
        with self._lock, self._read() as conn:
            hits = self._nearest(conn, vector, top_k, filters)
            chunks = self._fetch(conn, [hit[0] for hit in hits])
        return [VectorMatch(chunk=chunks[cid], score=score, raw_score=raw)
                for cid, score, raw in hits if cid in chunks]

    def ranked_ids(
        self, embedding: Embedding, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[tuple[str, float, float]]:
        """:meth:`query` without reading the chunks: (chunk id, score, raw score), best
        first. Hybrid search fuses two such lists and reads only the chunks it returns
        (reading a chunk back costs more than ranking it)."""
        vector = dense_values(embedding, _STORE)
        with self._lock, self._read() as conn:
            return self._nearest(conn, vector, top_k, filters)

    def _nearest(
        self, conn: sqlite3.Connection, vector: npt.NDArray[np.float32], top_k: int,
        filters: MetadataFilters | None,
    ) -> list[tuple[str, float, float]]:
        if self._cid is None or top_k <= 0:
            return []
        return self._vectors(conn).search(vector, top_k, self._allowed(conn, filters))

    def _allowed(self, conn: sqlite3.Connection,
                 filters: MetadataFilters | None) -> list[str] | None:
        """The ids of the chunks passing ``filters`` (None: no filter)."""
        if filters is None:
            return None
        if self._cid is None:  # no collection yet: nothing passes
            return []
        # A hybrid query asks twice (vector and keyword side) and a server repeats a
        # tenant's filter; any write bumps the generation, so a kept answer is current.
        key = (self._cid or 0, self._generation or 0, repr(filters))
        cached = self._allowed_cache.get(key)
        if cached is not None:
            self._allowed_cache.move_to_end(key)
            return cached
        sql, params = filtered_ids_sql(conn, self._cid, filters)
        allowed = [row[0] for row in conn.execute(sql, params)]
        if len(allowed) <= _ALLOWED_CACHE_MAX_IDS:
            self._allowed_cache[key] = allowed
            while len(self._allowed_cache) > _ALLOWED_CACHE_SIZE:
                self._allowed_cache.popitem(last=False)
        return allowed

    def keyword_query(
        self, text: str, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[VectorMatch]:
        """Chunks ranked by SQLite FTS5's bm25() (k1=1.2, b=0.75) for the words of ``text``.

        Any text is accepted: only its word tokens are searched (OR-ed), so quotes and
        FTS operators are harmless; text without words gives no matches. Ties break by
        chunk id. ``raw_score`` is the (positive) BM25 value. The in-memory keyword
        index, once built (see ``keyword_index``), gives the same matches and scores.
        """
        if not query_terms(text) or top_k <= 0:
            return []
        self._keyword_index_first()
        with self._lock, self._read() as conn:
            hits = self._keyword_hits(conn, text, top_k, filters)
            chunks = self._fetch(conn, [chunk_id for chunk_id, _ in hits])
        return keyword_matches([(chunks[chunk_id], value) for chunk_id, value in hits
                                if chunk_id in chunks])

    def keyword_ranked_ids(
        self, text: str, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[tuple[str, float, float]]:
        """:meth:`keyword_query` without reading the chunks: (chunk id, score, BM25),
        best first (see :meth:`ranked_ids`)."""
        if not query_terms(text) or top_k <= 0:
            return []
        self._keyword_index_first()
        with self._lock, self._read() as conn:
            return self._keyword_ranked(conn, text, top_k, filters)

    def _keyword_ranked(
        self, conn: sqlite3.Connection, text: str, top_k: int,
        filters: MetadataFilters | None,
    ) -> list[tuple[str, float, float]]:
        hits = self._keyword_hits(conn, text, top_k, filters)
        raw = np.array([value for _, value in hits], dtype=np.float64)
        return [(chunk_id, float(score), value)
                for (chunk_id, value), score in zip(hits, bm25_to_score(raw), strict=True)]

    @contextmanager
    def ranking_view(self, filters: MetadataFilters | None = None) -> Iterator[_RankingView]:
        """Both rankings of one snapshot (:class:`~ragloom.protocols.ViewRankable`):
        the store's lock and a read transaction are held while the view is open, so
        the vector side can rank on another thread without them (only writes, which
        need the lock, change the vectors)."""
        self._keyword_index_first()
        with self._lock, self._read() as conn:
            yield _RankingView(self, conn, filters)

    def _keyword_index_first(self) -> None:
        if self._wants_keyword_index():
            self._build_keyword_index(wait=False)

    def _keyword_hits(
        self, conn: sqlite3.Connection, text: str, top_k: int,
        filters: MetadataFilters | None,
    ) -> list[tuple[str, float]]:
        """(chunk id, BM25) best first, ties by id: the in-memory index when built,
        else FTS5 (under ``_lock``, synced)."""
        if self._cid is None:
            return []
        if self._memory.index is not None:
            return self._memory.index.search(text, top_k, self._allowed(conn, filters))
        where, params = (compile_indexed_filters(filters, conn, "c.pk")
                         if filters is not None else ("", []))
        search = _Fts5Search(conn, f"fts_{int(self._cid)}", where, params)
        rows = self._fts.ranked(search, query_terms(text), top_k,
                                (self._cid or 0, self._generation or 0))
        ids = chunk_ids_by_pk(conn, [rowid for rowid, _ in rows])
        return sorted(((ids[rowid], value) for rowid, value in rows if rowid in ids),
                      key=lambda item: (-item[1], item[0]))[:top_k]

    # ------------------------------------------------------ in-memory keyword index
    @property
    def keyword_index_loaded(self) -> bool:
        """Whether keyword queries currently run on the in-memory index (as of the last
        look at the database: another connection's write drops it on the next call)."""
        with self._lock:
            return self._memory.index is not None

    # Views kept from when these were attributes of the store; tests inspect them.
    @property
    def _keyword(self) -> BM25Index | None:
        return self._memory.index

    @property
    def _keyword_builds(self) -> int:
        return self._memory.builds

    def _wants_keyword_index(self) -> bool:
        """Count a keyword query and say whether it should run on the in-memory index."""
        with self._lock:
            return self._memory.wants(self.keyword_index)

    def warm_keyword_index(self) -> bool:
        """Build the in-memory keyword index now (unless current); keyword queries use
        it from then on (``keyword_index="auto"`` or ``"memory"``). False with
        ``"fts"``, if the collection does not exist yet, or if a write came in during
        the build (then FTS5 answers and a later call or query builds again)."""
        if self.keyword_index == "fts":
            return False
        return self._build_keyword_index(wait=True)

    def _build_keyword_index(self, *, wait: bool) -> bool:
        """Build the in-memory index from one snapshot of the chunk texts.

        Reading the texts holds ``_lock``; tokenising them (the slow part) does not, so
        other threads keep querying (on FTS5) meanwhile. Writes that land during the
        build (by this object or another) are in the change log past the snapshot's
        position and are applied when the index is installed; without a change log the
        build is installed only if nothing was written meanwhile. One build at a time;
        with ``wait=False`` a query does not queue behind another's build.
        """
        memory = self._memory
        if not memory.build_lock.acquire(blocking=wait):
            return False
        try:
            with self._lock, self._read() as conn:
                if memory.index is not None:
                    return True
                if self._cid is None:
                    return False
                stamp = (self._cid, self._generation)
                seq = high_water(conn) if self._logged else 0
                rows = conn.execute("SELECT id, text FROM chunks WHERE collection_id = ?",
                                    (self._cid,)).fetchall()
            index = BM25Index()
            index.add(rows)
            del rows
            with self._lock, self._read() as conn:
                if self._cid != stamp[0] or (
                        not self._logged and self._generation != stamp[1]):
                    return False
                memory.index, memory.seq = index, seq
                if memory.catch_up(conn, self._cid, self._logged):
                    return False
                memory.builds += 1
                return True
        finally:
            memory.build_lock.release()

    def _build_keyword_index_later(self) -> None:
        """Rebuild the in-memory index in a background thread (FTS5 answers meanwhile)."""
        def build() -> None:
            with suppress(RagError, sqlite3.Error):
                if self._conn is not None:  # not after close()
                    self._build_keyword_index(wait=False)

        threading.Thread(target=build, name="ragloom-keyword-index", daemon=True).start()

    def count(self) -> int:
        with self._lock, self._read() as conn:
            if self._matrix is not None:
                return len(self._matrix)
            if self._cid is None:
                return 0
            row = conn.execute("SELECT COUNT(*) FROM chunks WHERE collection_id = ?",
                               (self._cid,)).fetchone()
            return int(row[0])

    def export_entries(self, batch_size: int = 1000) -> Iterator[list[VectorEntry]]:
        """Every chunk with its vector, in batches, in insertion order (``ragloom migrate``)."""
        after = -1
        while True:
            with self._lock, self._read() as conn:
                if self._cid is None:
                    return
                rows = conn.execute(
                    f"SELECT pk, vector, {CHUNK_COLUMNS} FROM chunks WHERE collection_id = ? "
                    "AND pk > ? ORDER BY pk LIMIT ?", (self._cid, after, batch_size)).fetchall()
            if not rows:
                return
            after = rows[-1][0]
            yield [VectorEntry(chunk=chunk_from_row(row[2:]), embedding=Vector(
                np.frombuffer(row[1], dtype=VECTOR_DTYPE).astype(np.float32))) for row in rows]

    def get_embeddings(self, ids: Sequence[str]) -> dict[str, Embedding]:
        """The stored vectors of these chunk ids; unknown ids are absent."""
        with self._lock, self._read() as conn:
            if self._cid is None or not ids:
                return {}
            rows = conn.execute(f"SELECT c.id, c.vector FROM {BY_IDS}",
                                (ids_json(ids), self._cid)).fetchall()
        return {cid: Vector(np.frombuffer(blob, dtype=VECTOR_DTYPE).astype(np.float32))
                for cid, blob in rows}

    def get_chunks(self, ids: Sequence[str]) -> list[TextChunk]:
        """The stored chunks with these ids, in the order asked; unknown ids are skipped."""
        with self._lock, self._read() as conn:
            if self._cid is None:
                return []
            found = self._fetch(conn, ids)
        return [found[cid] for cid in ids if cid in found]

    def chunks(self, filters: MetadataFilters | None = None) -> list[TextChunk]:
        """Every chunk of the collection (those matching ``filters``), in insertion order."""
        where, params = compile_filters(filters, "c.metadata")
        with self._lock, self._read() as conn:
            if self._cid is None:
                return []
            rows = conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks AS c WHERE collection_id = ? AND {where} "
                "ORDER BY pk", (self._cid, *params)).fetchall()
        return [chunk_from_row(row) for row in rows]

    def collection_info(self) -> CollectionInfo | None:
        with self._lock, self._read():
            if self._embedder is None or self._dimension is None:
                return None
            return CollectionInfo(name=self.name, embedder=self._embedder,
                                  dimension=self._dimension)

    def find_document(self, source: str) -> StoredDocument | None:
        with self._lock, self._read() as conn:
            if self._cid is None:
                return None
            row = conn.execute(
                f"SELECT {DOCUMENT_COLUMNS} FROM documents "
                "WHERE collection_id = ? AND source = ?", (self._cid, source)).fetchone()
        return None if row is None else document_from_row(row)

    def list_documents(self, limit: int | None = None,
                       after: str | None = None) -> list[StoredDocument]:
        """Every document of the collection (the first ``limit`` whose source sorts
        after ``after``), ordered by source."""
        with self._lock, self._read() as conn:
            if self._cid is None:
                return []
            rows = conn.execute(
                f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE collection_id = ? "
                "AND (? IS NULL OR source > ?) ORDER BY source LIMIT ?",
                (self._cid, after, after, -1 if limit is None else limit)).fetchall()
        return [document_from_row(row) for row in rows]

    def list_collections(self) -> list[CollectionStats]:
        """Every collection in the file, by name."""
        with self._lock, self._read() as conn:
            rows = conn.execute(STATS_SQL + " ORDER BY c.name").fetchall()
        return [stats_from_row(row) for row in rows]

    def stats(self) -> CollectionStats:
        """This collection's settings and size (zeros if it does not exist yet)."""
        with self._lock, self._read() as conn:
            row = conn.execute(STATS_SQL + " WHERE c.name = ?", (self.name,)).fetchone()
        if row is None:
            return CollectionStats(name=self.name, embedder=None, dimension=None,
                                   metric=self._metric_arg or "cosine", document_count=0,
                                   chunk_count=0)
        return stats_from_row(row)

    def metadata_keys(self) -> dict[str, set[str]]:
        """Each chunk metadata key (top level and one level down, dotted) mapped to the
        filter kinds seen under it: "bool", "number", "string". A key seen only with
        null, list or object values maps to an empty set."""
        with self._lock, self._read() as conn:
            if self._cid is None or self._generation is None:
                return {}
            stamp = (self._cid, self._generation)
            if self._keys_cache is not None and self._keys_cache[0] == stamp:
                return {key: set(kinds) for key, kinds in self._keys_cache[1].items()}
            keys = metadata_key_kinds(conn, self._cid)
            self._keys_cache = (stamp, keys)
            return {key: set(kinds) for key, kinds in keys.items()}


__all__ = [
    "AUTO_KEYWORD_INDEX_AFTER", "SCHEMA_VERSION", "CollectionStats", "KeywordIndexMode",
    "SqliteVectorStore", "filtered_ids_sql",
]


class _RankingView:
    """:meth:`SqliteVectorStore.ranking_view`'s view: what needs the connection (the
    vectors, the filter's chunk ids) is read when it opens, on the opening thread."""

    def __init__(self, store: SqliteVectorStore, conn: sqlite3.Connection,
                 filters: MetadataFilters | None) -> None:
        self._store, self._conn, self._filters = store, conn, filters
        self._vectors: DenseMatrix | None = None
        self._allowed: list[str] | None = None
        if store._cid is not None:
            self._vectors = store._vectors(conn)
            self._allowed = store._allowed(conn, filters)

    def ranked_ids(self, embedding: Embedding, top_k: int) -> list[tuple[str, float, float]]:
        vector = dense_values(embedding, _STORE)
        if self._vectors is None or top_k <= 0:
            return []
        return self._vectors.search(vector, top_k, self._allowed)

    def keyword_ranked_ids(self, text: str, top_k: int) -> list[tuple[str, float, float]]:
        if not query_terms(text) or top_k <= 0:
            return []
        return self._store._keyword_ranked(self._conn, text, top_k, self._filters)

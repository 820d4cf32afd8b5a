"""PgVectorStore: knowledge bases in PostgreSQL with the pgvector extension.

Layout (tables shared by every collection, created on first use; see
:mod:`ragloom.stores.pgvector_sql`): ``ragloom_collections`` (name, embedder,
dimension, metric, chunk and term totals), ``ragloom_documents``, ``ragloom_chunks``
(text, metadata as jsonb, the vector as pgvector ``vector``, the chunk's term count)
and ``ragloom_postings`` (term, chunk, term frequency): the text index BM25 is
computed from.

Every write is one transaction that first locks the collection's row, so writers to
one collection take turns and the BM25 totals stay exact; readers never wait. A
document, its chunks, their vectors and their postings appear and disappear
together; :meth:`PgVectorStore.replace_documents` writes a batch of documents in one
transaction with the statements of one (:mod:`ragloom.stores.pgvector_write`).

Vector search is exact by default (a scan of the collection's rows, ordered by
pgvector's distance operator); ``index="hnsw"`` builds an HNSW index (a partial
expression index per collection, since collections differ in dimension) that
unfiltered queries use; filtered queries stay exact so a selective filter never
loses matches. Keyword search is BM25 in SQL with the formula and the analysis of the
other stores (:mod:`ragloom.stores.bm25`, :mod:`ragloom.retrieval.tokenize`): same
matches, same ranking, same raw scores to rounding. It is scored from the postings'
index alone (each posting carries its chunk's length) and reads chunks only for the
results.

Connections come from a ``psycopg_pool`` pool opened on first use; the store is safe
to share between threads.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from ragloom.errors import DimensionMismatchError, MissingDependencyError, StoreError
from ragloom.filters import MetadataFilters
from ragloom.lexical.tokenize import query_terms
from ragloom.protocols import CollectionInfo, CollectionStats, StoredDocument
from ragloom.stores.document_records import check_document_entries
from ragloom.stores.exact import Metric
from ragloom.stores.memory import dense_values
from ragloom.stores.pgvector_pool import PgDatabase
from ragloom.stores.pgvector_sql import (
    CHUNK_COLUMNS,
    DOCUMENT_COLUMNS,
    SCHEMA,
    SCHEMA_VERSION,
    STATS_SQL,
    UPGRADE_FROM_1,
    VECTOR_STORAGE_CHECK,
    VECTOR_STORAGE_SET,
    bm25_sql,
    compile_filters,
)
from ragloom.stores.pgvector_write import (
    DocumentWrite,
    bump,
    clean,
    delete_chunks,
    independent,
    insert_chunks,
    recount,
    replace_documents,
    vector_text,
)
from ragloom.stores.server_store import IndexKind, ServerStore, scores_of
from ragloom.stores.sqlite_keyword import keyword_matches
from ragloom.types import Document, Embedding, TextChunk, Vector, VectorEntry, VectorMatch

_STORE = "PgVectorStore"
#: pgvector's distance operators and how a distance becomes the raw score.
_OPERATORS: dict[str, str] = {"cosine": "<=>", "euclidean": "<->", "dot": "<#>"}
_OPCLASSES: dict[str, str] = {"cosine": "vector_cosine_ops", "euclidean": "vector_l2_ops",
                              "dot": "vector_ip_ops"}


def _psycopg() -> Any:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        raise MissingDependencyError("psycopg", "pgvector", "the PostgreSQL store") from exc
    return psycopg, psycopg_pool


def parse_vector(text: str) -> npt.NDArray[np.float32]:
    return np.array([float(v) for v in text.strip("[]").split(",") if v], dtype=np.float32)


class PgVectorStore(ServerStore):
    """One knowledge base (``collection``) in a PostgreSQL database with pgvector.

    ``dsn`` is a libpq connection string or ``postgresql://`` URL. ``metric=None``
    means the existing collection's metric, or cosine for a new one. ``index``:
    ``"exact"`` (default) or ``"hnsw"`` (built with ``m``/``ef_construction`` when the
    collection's dimension is known; ``ef_search`` per query). Nothing connects until
    first use or :meth:`open`.
    """

    def __init__(
        self,
        dsn: str,
        collection: str = "default",
        metric: Metric | None = None,
        *,
        index: IndexKind = "exact",
        m: int = 16,
        ef_construction: int = 64,
        ef_search: int = 100,
        pool_size: int = 4,
        database: PgDatabase | None = None,
    ) -> None:
        super().__init__(collection, metric, index, (m, ef_construction, ef_search))
        self.dsn = dsn
        self._pool_size = pool_size
        self._pool: Any = None
        #: A pool shared with other views of the same database (see pgvector_pool).
        self._database = database

    # ---------------------------------------------------------------- connection
    def _disconnect(self) -> None:
        if self._pool is not None and self._database is None:
            self._pool.close()
        self._pool = None

    def _connect(self) -> Any:
        with self._lock:
            if self._pool is None:
                self._pool = (self._open_pool(self._pool_size) if self._database is None
                              else self._database.pool(self._open_pool))
            return self._pool

    def _open_pool(self, size: int) -> Any:
        """A new pool of at most ``size`` connections, the schema made current."""
        psycopg, psycopg_pool = _psycopg()
        # Autocommit: a lone read is one round trip (no BEGIN, no ROLLBACK when the
        # connection goes back to the pool); writes open transactions explicitly.
        pool = psycopg_pool.ConnectionPool(
            self.dsn, min_size=1, max_size=size, open=False,
            kwargs={"autocommit": True})
        try:
            pool.open(wait=True, timeout=30.0)
            with pool.connection() as conn:
                self._ensure_schema(conn)
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            pool.close()
            raise StoreError(f"cannot use the PostgreSQL store at {self._where()}: {exc}. "
                             "Check the URL, that the server runs and that the pgvector "
                             "extension is installed.") from exc
        return pool

    def _where(self) -> str:
        """The DSN without its password, for messages."""
        from ragloom.stores.factory import redact

        return redact(self.dsn)

    @staticmethod
    def _ensure_schema(conn: Any) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(7238901)")
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            for statement in SCHEMA:
                conn.execute(statement)
            if conn.execute(VECTOR_STORAGE_CHECK).fetchone()[0] != "m":
                conn.execute(VECTOR_STORAGE_SET)
            row = conn.execute("SELECT value FROM ragloom_meta WHERE key = 'schema'").fetchone()
            version = None if row is None else int(row[0])
            if version is not None and version > SCHEMA_VERSION:
                raise StoreError(
                    f"this database was written by a newer ragloom (schema {version}; this "
                    f"one reads {SCHEMA_VERSION}); upgrade ragloom to use it")
            if version == 1:
                for statement in UPGRADE_FROM_1:
                    conn.execute(statement)
            if version != SCHEMA_VERSION:
                conn.execute("INSERT INTO ragloom_meta VALUES ('schema', %s) ON CONFLICT (key) "
                             "DO UPDATE SET value = excluded.value", (str(SCHEMA_VERSION),))

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        psycopg, _ = _psycopg()
        pool = self._connect()
        try:
            with pool.connection() as conn:
                yield conn
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL store {self._where()} failed: {exc}") from exc

    # ---------------------------------------------------------------- collection
    def _collection(self, conn: Any, *, create: bool, lock: bool = False) -> tuple[Any, ...] | None:
        """(id, embedder, dimension, metric) of this collection, optionally created and
        locked for the rest of the transaction."""
        sql = ("SELECT id, embedder, dimension, metric FROM ragloom_collections "
               "WHERE name = %s" + (" FOR UPDATE" if lock else ""))
        row = conn.execute(sql, (self.name,)).fetchone()
        if row is None and create:
            self._refuse_dropped()
            conn.execute(
                "INSERT INTO ragloom_collections (name, metric, index_kind) VALUES (%s, %s, %s) "
                "ON CONFLICT (name) DO NOTHING",
                (self.name, self._metric_arg or "cosine", self.index_kind))
            row = conn.execute(sql, (self.name,)).fetchone()
        if row is not None:
            self._check_metric(row[3])
        return tuple(row) if row is not None else None

    @contextmanager
    def _writing(self, *, create: bool = True, pipeline: bool = False
                 ) -> Iterator[tuple[Any, tuple[Any, ...] | None]]:
        """A transaction holding the collection's row lock; the generation moves on
        when it commits with a collection. With ``pipeline``, statements whose results
        are not read are sent without waiting (psycopg's pipeline mode): a document
        replacement is three round trips, not ten."""
        with self._conn() as conn, conn.pipeline() if pipeline else nullcontext(), \
                conn.transaction():
            collection = self._collection(conn, create=create, lock=True)
            yield conn, collection
            if collection is not None:
                bump(conn, collection[0])

    def _check_dimensions(self, conn: Any, collection: tuple[Any, ...],
                          vectors: Sequence[npt.NDArray[np.float32]]) -> None:
        cid, _, known, metric = collection
        for dimension in sorted({int(vector.shape[0]) for vector in vectors}):
            if known is None:
                conn.execute("UPDATE ragloom_collections SET dimension = %s WHERE id = %s",
                             (dimension, cid))
                self._ensure_index(conn, cid, dimension, metric)
                known = dimension
            elif known != dimension:
                raise DimensionMismatchError(
                    f"vector has {dimension} dimensions; collection {self.name!r} holds "
                    f"{known}. Use the embedder the collection was built with.")

    def _ensure_index(self, conn: Any, cid: int, dimension: int, metric: str) -> None:
        if self.index_kind != "hnsw":
            return
        m, ef_construction, _ = self.hnsw
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS ragloom_hnsw_{int(cid)} ON ragloom_chunks USING hnsw "
            f"((embedding::vector({int(dimension)})) {_OPCLASSES[metric]}) "
            f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)}) "
            f"WHERE collection_id = {int(cid)}")

    # ---------------------------------------------------------------- writing
    @staticmethod
    def _dense(entries: Sequence[VectorEntry]) -> list[npt.NDArray[np.float32]]:
        return [np.asarray(dense_values(entry.embedding, _STORE), dtype=np.float32)
                for entry in entries]

    def add(self, entries: Sequence[VectorEntry]) -> None:
        """Insert or replace entries (upsert by chunk id), in one transaction."""
        if not entries:
            return
        vectors = self._dense(entries)
        with self._writing() as (conn, collection):
            assert collection is not None
            self._check_dimensions(conn, collection, vectors)
            lost, written = insert_chunks(conn, collection[0], entries, vectors)
            recount(conn, collection[0], lost | written)

    def delete(self, ids: Sequence[str]) -> int:
        """Remove chunks (row, vector and postings together); returns how many."""
        if not ids:
            return 0
        with self._writing(create=False) as (conn, collection):
            if collection is None:
                return 0
            removed, documents = delete_chunks(conn, collection[0], "c.id = ANY(%s)",
                                               [list(ids)])
            recount(conn, collection[0], documents)
            return removed

    def delete_where(self, filters: MetadataFilters | None) -> int:
        """Remove every chunk whose metadata matches ``filters`` (``None`` empties the
        knowledge base) in one transaction; documents left without chunks lose their
        records too. Returns how many chunks were removed."""
        where, params = compile_filters(filters)
        with self._writing(create=False) as (conn, collection):
            if collection is None:
                return 0
            cid = collection[0]
            removed, documents = delete_chunks(conn, cid, where, params)
            if filters is None:
                conn.execute("DELETE FROM ragloom_documents WHERE collection_id = %s", (cid,))
            else:
                recount(conn, cid, documents)
                conn.execute("DELETE FROM ragloom_documents WHERE collection_id = %s AND "
                             "chunk_count = 0 AND id = ANY(%s)", (cid, sorted(documents)))
            return removed

    def replace_document(
        self, document: Document, entries: Sequence[VectorEntry], *, settings: str = ""
    ) -> None:
        """Store a document and its chunks in one transaction, replacing any earlier
        document with the same source (or id) and all of its chunks."""
        self.replace_documents([(document, entries)], settings=settings)

    def replace_documents(
        self, items: Sequence[tuple[Document, Sequence[VectorEntry]]], *, settings: str = ""
    ) -> None:
        """:meth:`replace_document` for several documents in one transaction (all or
        none are stored), with the statements of one: what a batch of ingested
        documents costs."""
        writes = []
        for document, entries in items:
            check_document_entries(document, entries)
            writes.append(DocumentWrite(document, entries, self._dense(entries)))
        if not writes:
            return
        with self._writing(pipeline=True) as (conn, collection):
            assert collection is not None
            self._check_dimensions(conn, collection, [v for w in writes for v in w.vectors])
            batches = [writes] if independent(writes) else [[w] for w in writes]
            for batch in batches:
                replace_documents(conn, collection[0], batch, settings)

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        if not document_ids:
            return 0
        with self._writing(create=False) as (conn, collection):
            if collection is None:
                return 0
            cid = collection[0]
            delete_chunks(conn, cid, "c.document_id = ANY(%s)", [list(document_ids)])
            count = conn.execute("DELETE FROM ragloom_documents WHERE collection_id = %s AND "
                                 "id = ANY(%s)", (cid, list(document_ids))).rowcount
            return int(count)

    def bind_embedder(self, embedder: str, dimension: int) -> CollectionInfo:
        """Record the embedder on first use; refuse a different one afterwards."""
        with self._conn() as conn, conn.transaction():
            collection = self._collection(conn, create=True, lock=True)
            assert collection is not None
            cid, bound, known, metric = collection
            info = self._check_binding(bound, known, embedder, dimension)
            if info is not None:
                return info
            conn.execute("UPDATE ragloom_collections SET embedder = %s, dimension = %s "
                         "WHERE id = %s", (embedder, dimension, cid))
            if known is None:
                self._ensure_index(conn, cid, dimension, metric)
            bump(conn, cid)
        return CollectionInfo(name=self.name, embedder=embedder, dimension=dimension)

    def drop_collection(self) -> bool:
        """Delete this collection and everything in it; False if it did not exist.
        Later writes through this object raise CollectionDroppedError."""
        self._dropped = True
        with self._conn() as conn, conn.transaction():
            collection = self._collection(conn, create=False, lock=True)
            if collection is None:
                return False
            cid = int(collection[0])
            conn.execute(f"DROP INDEX IF EXISTS ragloom_hnsw_{cid}")
            conn.execute("DELETE FROM ragloom_postings WHERE collection_id = %s", (cid,))
            conn.execute("DELETE FROM ragloom_collections WHERE id = %s", (cid,))
            return True

    # ---------------------------------------------------------------- reading
    @staticmethod
    def _chunk(row: Sequence[Any]) -> TextChunk:
        chunk_id, document_id, index, start, end, page, text, metadata = row[:8]
        return TextChunk(id=chunk_id, document_id=document_id, index=index, start=start,
                         end=end, page=page, text=text, metadata=metadata)

    def query(
        self, embedding: Embedding, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[VectorMatch]:
        """The ``top_k`` nearest chunks, optionally filtered by metadata."""
        vector = dense_values(embedding, _STORE)
        where, params = compile_filters(filters)
        with self._conn() as conn, conn.transaction():
            collection = self._collection(conn, create=False)
            if collection is None or top_k <= 0 or collection[2] is None:
                return []
            cid, _, dimension, metric = collection
            if vector.shape[0] != dimension:
                raise DimensionMismatchError(
                    f"query has {vector.shape[0]} dimensions; this collection holds {dimension}")
            operator = _OPERATORS[metric]
            column = "c.embedding"
            if self.index_kind == "hnsw" and filters is None:
                column = f"c.embedding::vector({int(dimension)})"
                conn.execute(f"SET LOCAL hnsw.ef_search = {max(int(self.hnsw[2]), top_k)}")
            rows = conn.execute(
                f"SELECT {column} {operator} %s::vector AS distance, {CHUNK_COLUMNS} "
                f"FROM ragloom_chunks c WHERE c.collection_id = %s AND {where} "
                f"ORDER BY distance, c.id LIMIT %s",
                [vector_text(vector), cid, *params, top_k]).fetchall()
        distance = np.array([row[0] for row in rows], dtype=np.float64)
        # pgvector gives cosine distance and the negated inner product.
        raw = 1.0 - distance if metric == "cosine" else -distance if metric == "dot" else distance
        scores = scores_of(metric, raw)
        return [VectorMatch(chunk=self._chunk(row[1:]), score=float(score), raw_score=float(value))
                for row, value, score in zip(rows, raw, scores, strict=True)]

    def keyword_query(
        self, text: str, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[VectorMatch]:
        """Chunks ranked by BM25 (ragloom.stores.bm25's formula and constants, Lucene's
        idf) for the words of ``text``; ties break by chunk id; ``raw_score`` is the
        BM25 value."""
        counts = {term: repeats for term, _, repeats in query_terms(text)}
        if not counts or top_k <= 0:
            return []
        where, params = compile_filters(filters)
        with self._conn() as conn:
            collection = self._collection(conn, create=False)
            if collection is None:
                return []
            cid = collection[0]
            terms = list(counts)
            rows = conn.execute(bm25_sql(where), [terms, list(counts.values()), cid, cid, terms,
                                                  *params, top_k - 1, top_k]).fetchall()
        return keyword_matches([(self._chunk(row[1:]), float(row[0])) for row in rows])

    def count(self) -> int:
        with self._conn() as conn:
            row = conn.execute("SELECT chunk_total FROM ragloom_collections WHERE name = %s",
                               (self.name,)).fetchone()
        return int(row[0]) if row else 0

    def _select_chunks(self, where: str, params: Sequence[object], order: str = "c.pk"
                       ) -> list[tuple[Any, ...]]:
        with self._conn() as conn:
            return [tuple(row) for row in conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM ragloom_chunks c JOIN ragloom_collections k "
                f"ON k.id = c.collection_id WHERE k.name = %s AND {where} ORDER BY {order}",
                [self.name, *params]).fetchall()]

    def chunks(self, filters: MetadataFilters | None = None) -> list[TextChunk]:
        """Every chunk of the collection (those matching ``filters``), in insertion order."""
        where, params = compile_filters(filters)
        return [self._chunk(row) for row in self._select_chunks(where, params)]

    def get_embeddings(self, ids: Sequence[str]) -> dict[str, Embedding]:
        """The stored vectors of these chunk ids; unknown ids are absent."""
        if not ids:
            return {}
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT c.id, c.embedding::text FROM ragloom_chunks c JOIN ragloom_collections k "
                "ON k.id = c.collection_id WHERE k.name = %s AND c.id = ANY(%s)",
                [self.name, list(ids)]).fetchall()
        return {row[0]: Vector(parse_vector(row[1])) for row in rows}

    def get_chunks(self, ids: Sequence[str]) -> list[TextChunk]:
        """The stored chunks with these ids, in the order asked; unknown ids are skipped."""
        found = {row[0]: self._chunk(row) for row in self._select_chunks("c.id = ANY(%s)",
                                                                         [list(ids)])}
        return [found[cid] for cid in ids if cid in found]

    def export_entries(self, batch_size: int = 1000) -> Iterator[list[VectorEntry]]:
        """Every chunk with its vector, in batches, a document's chunks together."""
        after: tuple[str, int] = ("", -1)
        while True:
            with self._conn() as conn:
                rows = conn.execute(
                    f"SELECT c.document_id, c.pk, c.embedding::text, {CHUNK_COLUMNS} "
                    "FROM ragloom_chunks c JOIN ragloom_collections k ON k.id = c.collection_id "
                    "WHERE k.name = %s AND (c.document_id, c.pk) > (%s, %s) "
                    "ORDER BY c.document_id, c.pk LIMIT %s",
                    (self.name, after[0], after[1], batch_size)).fetchall()
            if not rows:
                return
            after = (rows[-1][0], rows[-1][1])
            yield [VectorEntry(chunk=self._chunk(row[3:]),
                               embedding=Vector(parse_vector(row[2]))) for row in rows]

    def collection_info(self) -> CollectionInfo | None:
        with self._conn() as conn:
            collection = self._collection(conn, create=False)
        if collection is None or collection[1] is None or collection[2] is None:
            return None
        return CollectionInfo(name=self.name, embedder=collection[1], dimension=collection[2])

    @staticmethod
    def _document(row: Sequence[Any]) -> StoredDocument:
        doc_id, source, content_hash, chunk_count, settings, metadata = row
        return StoredDocument(id=doc_id, source=source, content_hash=content_hash,
                              chunk_count=chunk_count, settings=settings, metadata=metadata)

    def _select_documents(self, where: str, params: Sequence[object]) -> list[StoredDocument]:
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {DOCUMENT_COLUMNS} FROM ragloom_documents WHERE collection_id = "
                f"(SELECT id FROM ragloom_collections WHERE name = %s) AND {where} "
                "ORDER BY source COLLATE \"C\"", [self.name, *params]).fetchall()
        return [self._document(row) for row in rows]

    def find_document(self, source: str) -> StoredDocument | None:
        found = self._select_documents("source = %s", [clean(source)])
        return found[0] if found else None

    def list_documents(self) -> list[StoredDocument]:
        """Every document of the collection, ordered by source."""
        return self._select_documents("TRUE", [])

    def list_collections(self) -> list[CollectionStats]:
        """Every collection in the database, by name."""
        with self._conn() as conn:
            rows = conn.execute(STATS_SQL + " ORDER BY c.name").fetchall()
        return [self._stats(row) for row in rows]

    def stats(self) -> CollectionStats:
        with self._conn() as conn:
            row = conn.execute(STATS_SQL + " WHERE c.name = %s", (self.name,)).fetchone()
        return self._empty_stats() if row is None else self._stats(row)

    @staticmethod
    def _stats(row: Sequence[Any]) -> CollectionStats:
        name, embedder, dimension, metric, documents, chunks = row
        return CollectionStats(name=name, embedder=embedder, dimension=dimension, metric=metric,
                               document_count=int(documents), chunk_count=int(chunks))

    _KIND: ClassVar[dict[str, str]] = {"boolean": "bool", "number": "number", "string": "string"}

    def metadata_keys(self) -> dict[str, set[str]]:
        """Each chunk metadata key (top level and one level down, dotted) mapped to the
        filter kinds seen under it."""
        with self._conn() as conn:
            rows = conn.execute(
                """SELECT DISTINCT j.key, jsonb_typeof(j.value) FROM ragloom_chunks c
                   CROSS JOIN LATERAL jsonb_each(c.metadata) j
                   WHERE c.collection_id = (SELECT id FROM ragloom_collections WHERE name = %s)
                   UNION
                   SELECT DISTINCT j.key || '.' || k.key, jsonb_typeof(k.value)
                   FROM ragloom_chunks c CROSS JOIN LATERAL jsonb_each(c.metadata) j
                   CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(j.value) = 'object'
                                                 THEN j.value ELSE '{}'::jsonb END) k
                   WHERE c.collection_id = (SELECT id FROM ragloom_collections WHERE name = %s)""",
                (self.name, self.name)).fetchall()
        keys: dict[str, set[str]] = {}
        for key, json_type in rows:
            kinds = keys.setdefault(str(key), set())
            if json_type in self._KIND:
                kinds.add(self._KIND[json_type])
        return keys


__all__ = ["PgVectorStore", "parse_vector", "vector_text"]

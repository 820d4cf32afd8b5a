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
together.

Vector search is exact by default (a scan of the collection's rows, ordered by
pgvector's distance operator); ``index="hnsw"`` builds an HNSW index (a partial
expression index per collection, since collections differ in dimension) that
unfiltered queries use; filtered queries stay exact so a selective filter never
loses matches. Keyword search is BM25 in SQL with the formula and the analysis of the
other stores (:mod:`ragloom.stores.bm25`, :mod:`ragloom.retrieval.tokenize`): same
matches, same ranking, same raw scores to rounding.

Connections come from a ``psycopg_pool`` pool opened on first use; the store is safe
to share between threads.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

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
from ragloom.retrieval.tokenize import query_terms, tokenize
from ragloom.stores.exact import METRICS, Metric
from ragloom.stores.memory import dense_values
from ragloom.stores.pgvector_sql import (
    BM25_SQL,
    CHUNK_COLUMNS,
    DOCUMENT_COLUMNS,
    INSERT_CHUNKS,
    SCHEMA,
    SCHEMA_VERSION,
    STATS_SQL,
    VECTOR_STORAGE_CHECK,
    VECTOR_STORAGE_SET,
    compile_filters,
    plain,
    to_jsonb_text,
)
from ragloom.stores.sqlite import CollectionStats
from ragloom.stores.sqlite_keyword import keyword_matches
from ragloom.types import Document, Embedding, TextChunk, Vector, VectorEntry, VectorMatch

_STORE = "PgVectorStore"
IndexKind = Literal["exact", "hnsw"]
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


def vector_text(values: npt.NDArray[np.float32]) -> str:
    """pgvector's text form of a vector; float32 repr round-trips exactly."""
    return "[" + ",".join(repr(float(v)) for v in values.astype(np.float32).tolist()) + "]"


def parse_vector(text: str) -> npt.NDArray[np.float32]:
    return np.array([float(v) for v in text.strip("[]").split(",") if v], dtype=np.float32)


def _clean(text: str) -> str:
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


class PgVectorStore:
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
    ) -> None:
        if metric is not None and metric not in METRICS:
            raise ConfigurationError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
        if index not in ("exact", "hnsw"):
            raise ConfigurationError(f"unknown index {index!r}; use 'exact' or 'hnsw'")
        if not isinstance(collection, str) or not collection:
            raise ConfigurationError("a collection name must be a non-empty string")
        self.dsn = dsn
        self.name = collection
        self.index_kind: IndexKind = index
        self.hnsw = (int(m), int(ef_construction), int(ef_search))
        self._metric_arg = metric
        self._pool_size = pool_size
        self._pool: Any = None
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- connection
    def open(self) -> PgVectorStore:
        self._connection_pool()
        return self

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def __enter__(self) -> PgVectorStore:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _connection_pool(self) -> Any:
        with self._lock:
            if self._pool is not None:
                return self._pool
            psycopg, psycopg_pool = _psycopg()
            pool = psycopg_pool.ConnectionPool(
                self.dsn, min_size=1, max_size=self._pool_size, open=False,
                kwargs={"autocommit": False})
            try:
                pool.open(wait=True, timeout=30.0)
                with pool.connection() as conn:
                    self._ensure_schema(conn)
            except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
                pool.close()
                raise StoreError(f"cannot use the PostgreSQL store at {self._where()}: {exc}. "
                                 "Check the URL, that the server runs and that the pgvector "
                                 "extension is installed.") from exc
            self._pool = pool
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
            if row is None:
                conn.execute("INSERT INTO ragloom_meta VALUES ('schema', %s)",
                             (str(SCHEMA_VERSION),))
            elif int(row[0]) > SCHEMA_VERSION:
                raise StoreError(
                    f"this database was written by a newer ragloom (schema {row[0]}; this one "
                    f"reads {SCHEMA_VERSION}); upgrade ragloom to use it")

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        psycopg, _ = _psycopg()
        pool = self._connection_pool()
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
            conn.execute(
                "INSERT INTO ragloom_collections (name, metric, index_kind) VALUES (%s, %s, %s) "
                "ON CONFLICT (name) DO NOTHING",
                (self.name, self._metric_arg or "cosine", self.index_kind))
            row = conn.execute(sql, (self.name,)).fetchone()
        if row is not None and self._metric_arg is not None and row[3] != self._metric_arg:
            raise ConfigurationError(
                f"collection {self.name!r} uses the {row[3]} metric, not {self._metric_arg}; "
                f"open it with metric={row[3]!r} or metric=None")
        return tuple(row) if row is not None else None

    def _bump(self, conn: Any, cid: int) -> None:
        conn.execute("UPDATE ragloom_collections SET generation = generation + 1 WHERE id = %s",
                     (cid,))

    def _check_dimension(self, conn: Any, collection: tuple[Any, ...], dimension: int) -> None:
        cid, _, known, metric = collection
        if known is None:
            conn.execute("UPDATE ragloom_collections SET dimension = %s WHERE id = %s",
                         (dimension, cid))
            self._ensure_index(conn, cid, dimension, metric)
        elif known != dimension:
            raise DimensionMismatchError(
                f"vector has {dimension} dimensions; collection {self.name!r} holds {known}. "
                "Use the embedder the collection was built with.")

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

    def _delete_where(self, conn: Any, cid: int, where: str, params: Sequence[object]
                      ) -> tuple[list[str], set[str]]:
        """Delete the collection's chunks matching ``where`` (SQL chosen here, alias c);
        keep the totals right; returns the ids and their documents' ids."""
        rows = conn.execute(
            f"DELETE FROM ragloom_chunks c WHERE c.collection_id = %s AND {where} "
            "RETURNING c.id, c.document_id, c.term_count", [cid, *params]).fetchall()
        if rows:
            conn.execute(
                "UPDATE ragloom_collections SET chunk_total = chunk_total - %s, "
                "length_total = length_total - %s WHERE id = %s",
                (len(rows), sum(row[2] for row in rows), cid))
        return [row[0] for row in rows], {row[1] for row in rows}

    def _insert(self, conn: Any, collection: tuple[Any, ...], entries: Sequence[VectorEntry],
                vectors: Sequence[npt.NDArray[np.float32]]) -> set[str]:
        """Upsert chunks with their postings; returns the documents whose counts change."""
        cid = collection[0]
        for dimension in sorted({int(vector.shape[0]) for vector in vectors}):
            self._check_dimension(conn, collection, dimension)
            collection = (cid, collection[1], dimension, collection[3])
        # The last entry with an id wins, as repeated upserts would.
        latest = {entry.id: (entry, vector) for entry, vector in zip(entries, vectors,
                                                                     strict=True)}
        _, touched = self._delete_where(conn, cid, "c.id = ANY(%s)", [list(latest)])
        terms = {cid_: Counter(tokenize(entry.chunk.text)) for cid_, (entry, _) in latest.items()}
        columns: list[list[Any]] = [[] for _ in range(10)]
        for chunk_id, (entry, vector) in latest.items():
            chunk = entry.chunk
            row = (chunk_id, chunk.document_id, chunk.index, chunk.start, chunk.end, chunk.page,
                   _clean(chunk.text), to_jsonb_text(plain(dict(chunk.metadata))),
                   vector_text(vector), sum(terms[chunk_id].values()))
            for column, value in zip(columns, row, strict=True):
                column.append(value)
        inserted = conn.execute(INSERT_CHUNKS, (cid, *columns)).fetchall()
        with conn.cursor().copy(
                "COPY ragloom_postings (collection_id, term, chunk_pk, tf) FROM STDIN") as copy:
            for pk, chunk_id in inserted:
                for term, tf in terms[chunk_id].items():
                    copy.write_row((cid, term, pk, tf))
        conn.execute(
            "UPDATE ragloom_collections SET chunk_total = chunk_total + %s, "
            "length_total = length_total + %s WHERE id = %s",
            (len(latest), sum(sum(counts.values()) for counts in terms.values()), cid))
        return touched | {entry.chunk.document_id for entry, _ in latest.values()}

    @staticmethod
    def _recount(conn: Any, cid: int, documents: set[str]) -> None:
        if documents:
            conn.execute(
                "UPDATE ragloom_documents d SET chunk_count = (SELECT COUNT(*) FROM "
                "ragloom_chunks c WHERE c.collection_id = d.collection_id AND "
                "c.document_id = d.id) WHERE d.collection_id = %s AND d.id = ANY(%s)",
                (cid, sorted(documents)))

    def add(self, entries: Sequence[VectorEntry]) -> None:
        """Insert or replace entries (upsert by chunk id), in one transaction."""
        if not entries:
            return
        vectors = self._dense(entries)
        with self._conn() as conn, conn.transaction():
            collection = self._collection(conn, create=True, lock=True)
            assert collection is not None
            touched = self._insert(conn, collection, entries, vectors)
            self._recount(conn, collection[0], touched)
            self._bump(conn, collection[0])

    def delete(self, ids: Sequence[str]) -> int:
        """Remove chunks (row, vector and postings together); returns how many."""
        if not ids:
            return 0
        with self._conn() as conn, conn.transaction():
            collection = self._collection(conn, create=False, lock=True)
            if collection is None:
                return 0
            removed, documents = self._delete_where(conn, collection[0], "c.id = ANY(%s)",
                                                    [list(ids)])
            self._recount(conn, collection[0], documents)
            self._bump(conn, collection[0])
            return len(removed)

    def delete_where(self, filters: MetadataFilters | None) -> int:
        """Remove every chunk whose metadata matches ``filters`` (``None`` empties the
        knowledge base) in one transaction; documents left without chunks lose their
        records too. Returns how many chunks were removed."""
        where, params = compile_filters(filters)
        with self._conn() as conn, conn.transaction():
            collection = self._collection(conn, create=False, lock=True)
            if collection is None:
                return 0
            cid = collection[0]
            removed, documents = self._delete_where(conn, cid, where, params)
            if filters is None:
                conn.execute("DELETE FROM ragloom_documents WHERE collection_id = %s", (cid,))
            else:
                self._recount(conn, cid, documents)
                conn.execute("DELETE FROM ragloom_documents WHERE collection_id = %s AND "
                             "chunk_count = 0 AND id = ANY(%s)", (cid, sorted(documents)))
            self._bump(conn, cid)
            return len(removed)

    def replace_document(
        self, document: Document, entries: Sequence[VectorEntry], *, settings: str = ""
    ) -> None:
        """Store a document and its chunks in one transaction, replacing any earlier
        document with the same source (or id) and all of its chunks."""
        strays = sorted({e.chunk.document_id for e in entries} - {document.id})
        if strays:
            raise InvalidInputError(
                f"chunks passed with document {document.id} ({document.source}) belong to "
                f"other documents: {', '.join(strays[:3])}; build them from this document")
        vectors = self._dense(entries)
        with self._conn() as conn, conn.transaction():
            collection = self._collection(conn, create=True, lock=True)
            assert collection is not None
            cid = collection[0]
            old = conn.execute(
                "SELECT id, created FROM ragloom_documents WHERE collection_id = %s "
                "AND (source = %s OR id = %s)", (cid, document.source, document.id)).fetchall()
            doomed = sorted({row[0] for row in old} | {document.id})
            self._delete_where(conn, cid, "c.document_id = ANY(%s)", [doomed])
            conn.execute("DELETE FROM ragloom_documents WHERE collection_id = %s AND "
                         "id = ANY(%s)", (cid, doomed))
            touched = self._insert(conn, collection, entries, vectors) if entries else set()
            created = min((row[1] for row in old), default=None)
            conn.execute(
                "INSERT INTO ragloom_documents (collection_id, id, source, content_hash, "
                "settings, metadata, chunk_count, created, updated) VALUES "
                "(%s, %s, %s, %s, %s, %s::jsonb, 0, COALESCE(%s, now()), now())",
                (cid, document.id, _clean(document.source),
                 str(document.metadata.get("content_hash", "")), settings,
                 to_jsonb_text(plain(dict(document.metadata))), created))
            self._recount(conn, cid, touched | {document.id})
            self._bump(conn, cid)

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        if not document_ids:
            return 0
        with self._conn() as conn, conn.transaction():
            collection = self._collection(conn, create=False, lock=True)
            if collection is None:
                return 0
            cid = collection[0]
            self._delete_where(conn, cid, "c.document_id = ANY(%s)", [list(document_ids)])
            count = conn.execute("DELETE FROM ragloom_documents WHERE collection_id = %s AND "
                                 "id = ANY(%s)", (cid, list(document_ids))).rowcount
            self._bump(conn, cid)
            return int(count)

    def bind_embedder(self, embedder: str, dimension: int) -> CollectionInfo:
        """Record the embedder on first use; refuse a different one afterwards."""
        with self._conn() as conn, conn.transaction():
            collection = self._collection(conn, create=True, lock=True)
            assert collection is not None
            cid, bound, known, metric = collection
            if bound is None:
                if known is not None and known != dimension:
                    raise EmbedderMismatchError(
                        f"knowledge base {self.name!r} holds {known}-dimensional vectors; "
                        f"{embedder} makes {dimension}. Use a matching embedder or a new "
                        "knowledge base.")
                conn.execute("UPDATE ragloom_collections SET embedder = %s, dimension = %s "
                             "WHERE id = %s", (embedder, dimension, cid))
                if known is None:
                    self._ensure_index(conn, cid, dimension, metric)
                self._bump(conn, cid)
            elif (bound, known) != (embedder, dimension):
                raise EmbedderMismatchError(
                    f"knowledge base {self.name!r} was built with {bound} ({known} dimensions), "
                    f"not {embedder} ({dimension}). Use {bound}, or ingest into a new "
                    "knowledge base (or drop this one).")
        return CollectionInfo(name=self.name, embedder=embedder, dimension=dimension)

    def drop_collection(self) -> bool:
        """Delete this collection and everything in it; False if it did not exist."""
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
        distances = np.array([row[0] for row in rows], dtype=np.float64)
        raw, scores = self._scores(metric, distances)
        return [VectorMatch(chunk=self._chunk(row[1:]), score=float(score), raw_score=float(value))
                for row, value, score in zip(rows, raw, scores, strict=True)]

    @staticmethod
    def _scores(metric: str, distance: npt.NDArray[np.float64]
                ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        if metric == "cosine":
            similarity = 1.0 - distance
            return similarity, cosine_to_score(similarity)
        if metric == "dot":
            product = -distance
            return product, dot_to_score(product)
        return distance, euclidean_to_score(distance)

    def keyword_query(
        self, text: str, *, top_k: int = 10, filters: MetadataFilters | None = None
    ) -> list[VectorMatch]:
        """Chunks ranked by BM25 (ragloom.stores.bm25's formula: Lucene's idf, k1=1.2,
        b=0.75) for the words of ``text``;
        ties break by chunk id; ``raw_score`` is the BM25 value."""
        counts = {term: repeats for term, _, repeats in query_terms(text)}
        if not counts or top_k <= 0:
            return []
        where, params = compile_filters(filters)
        with self._conn() as conn, conn.transaction():
            collection = self._collection(conn, create=False)
            if collection is None:
                return []
            cid = collection[0]
            sql = BM25_SQL.format(where=where, columns=CHUNK_COLUMNS)
            rows = conn.execute(sql, [list(counts), list(counts.values()), cid, cid, cid,
                                      *params, top_k]).fetchall()
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

    def chunks(self) -> list[TextChunk]:
        """Every chunk of the collection, in insertion order."""
        return [self._chunk(row) for row in self._select_chunks("TRUE", [])]

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
        found = self._select_documents("source = %s", [_clean(source)])
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
        if row is None:
            return CollectionStats(name=self.name, embedder=None, dimension=None,
                                   metric=self._metric_arg or "cosine", document_count=0,
                                   chunk_count=0)
        return self._stats(row)

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

"""The SQLite store's rows: reading them into objects, and the rows a write changes.

The functions that query take an open connection and a collection id and run inside
the transaction :class:`~ragloom.stores.sqlite.SqliteVectorStore` holds; the store
keeps its caches (vectors, keyword index, collection state) in step with what the
writes did.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ragloom.filters import MetadataFilters
from ragloom.protocols import CollectionStats, StoredDocument
from ragloom.stores.memory import dense_values
from ragloom.stores.sqlite_filters import compile_indexed_filters
from ragloom.stores.sqlite_schema import (
    BY_DOCUMENTS,
    BY_IDS,
    CHUNK_COLUMNS,
    IN_JSON,
    RECOUNT,
    UPSERT_CHUNK,
    VECTOR_DTYPE,
    ids_json,
    to_json,
)
from ragloom.types import Document, TextChunk, VectorEntry

#: A chunk id with its vector, as the store's matrix takes them.
DenseRow = tuple[str, npt.NDArray[np.float32]]

_FETCH_COLUMNS = ", ".join("c." + column for column in CHUNK_COLUMNS.split(", "))
# json_each's type names, as the filter kinds metadata_key_kinds reports.
_KIND = {"true": "bool", "false": "bool", "integer": "number", "real": "number",
         "text": "string"}


# ------------------------------------------------------------------ reading
def chunk_from_row(row: Sequence[Any]) -> TextChunk:
    """A chunk from the first eight columns of ``SELECT {CHUNK_COLUMNS}``."""
    chunk_id, document_id, index, start, end, page, text, metadata = row[:8]
    return TextChunk(id=chunk_id, document_id=document_id, index=index, start=start,
                     end=end, page=page, text=text, metadata=json.loads(metadata))


def document_from_row(row: Sequence[Any]) -> StoredDocument:
    """A document record from ``SELECT {DOCUMENT_COLUMNS}``."""
    doc_id, source, content_hash, chunk_count, settings, metadata = row
    return StoredDocument(id=doc_id, source=source, content_hash=content_hash,
                          chunk_count=chunk_count, settings=settings,
                          metadata=json.loads(metadata))


def stats_from_row(row: Sequence[Any]) -> CollectionStats:
    """A collection's size and settings from a row of ``STATS_SQL``."""
    name, embedder, dimension, metric, documents, chunks = row
    return CollectionStats(name=name, embedder=embedder, dimension=dimension, metric=metric,
                           document_count=documents, chunk_count=chunks)


def fetch_chunks(conn: sqlite3.Connection, cid: int, ids: Sequence[str]) -> dict[str, TextChunk]:
    """The chunks of collection ``cid`` with these ids, by id (unknown ids are absent)."""
    rows = conn.execute(f"SELECT {_FETCH_COLUMNS} FROM {BY_IDS}", (ids_json(ids), cid))
    return {row[0]: chunk_from_row(row) for row in rows}


def chunk_ids_by_pk(conn: sqlite3.Connection, pks: Sequence[int]) -> dict[int, str]:
    """Chunk ids by their integer primary key (the FTS rowid)."""
    rows = conn.execute("SELECT c.pk, c.id FROM json_each(?) AS j CROSS JOIN chunks AS c "
                        "ON c.pk = j.value", (json.dumps(list(pks)),))
    return {row[0]: row[1] for row in rows}


def filtered_ids_sql(
    conn: sqlite3.Connection, cid: int, filters: MetadataFilters
) -> tuple[str, list[object]]:
    """The SELECT of the ids of collection ``cid``'s chunks that pass ``filters``, and its
    parameters: the SQL filtered queries run (the benchmark and plan test use it too)."""
    where, params = compile_indexed_filters(filters, conn)
    # "+collection_id": the metadata index's chunk list drives the lookup (by primary
    # key), not a walk over every chunk of the collection.
    return f"SELECT id FROM chunks WHERE +collection_id = ? AND {where}", [cid, *params]


def metadata_key_kinds(conn: sqlite3.Connection, cid: int) -> dict[str, set[str]]:
    """Each chunk metadata key of collection ``cid`` (top level and one level down,
    dotted) mapped to the filter kinds seen under it: "bool", "number", "string". A
    key seen only with null, list or object values maps to an empty set."""
    rows = conn.execute(
        """SELECT DISTINCT j.key, j.type FROM chunks c, json_each(c.metadata) j
           WHERE c.collection_id = ?
           UNION
           SELECT DISTINCT j.key || '.' || k.key, k.type
           FROM chunks c, json_each(c.metadata) j, json_each(j.value) k
           WHERE c.collection_id = ? AND j.type = 'object'""",
        (cid, cid)).fetchall()
    keys: dict[str, set[str]] = {}
    for key, json_type in rows:
        kinds = keys.setdefault(str(key), set())
        if json_type in _KIND:
            kinds.add(_KIND[json_type])
    return keys


# ------------------------------------------------------------------ writing
def dense_rows(entries: Sequence[VectorEntry], store: str) -> list[DenseRow]:
    """The entries' vectors as float32 arrays; ``store`` names the store in the error
    a sparse vector gets."""
    return [(entry.id, np.asarray(dense_values(entry.embedding, store), dtype=np.float32))
            for entry in entries]


def write_chunks(
    conn: sqlite3.Connection, cid: int, entries: Sequence[VectorEntry],
    vectors: Sequence[DenseRow],
) -> set[str]:
    """Insert or replace the chunks (by id); returns every document id whose chunk
    count may change: the entries' own, and those of the chunks they replace."""
    touched = {entry.chunk.document_id for entry in entries}
    previous = conn.execute(f"SELECT DISTINCT c.document_id FROM {BY_IDS}",
                            (ids_json(entry.id for entry in entries), cid))
    touched.update(row[0] for row in previous)
    conn.executemany(UPSERT_CHUNK, (
        (cid, entry.id, entry.chunk.document_id, entry.chunk.index, entry.chunk.start,
         entry.chunk.end, entry.chunk.page, entry.chunk.text,
         to_json(dict(entry.chunk.metadata)), vector.astype(VECTOR_DTYPE).tobytes())
        for entry, (_, vector) in zip(entries, vectors, strict=True)))
    return touched


def delete_chunks(
    conn: sqlite3.Connection, source: str, params: Sequence[object]
) -> tuple[list[str], set[str]]:
    """Delete the chunks that ``FROM {source}`` (SQL chosen by the caller, table alias
    ``c``) yields; returns their ids and their documents' ids."""
    rows = conn.execute(f"SELECT c.pk, c.id, c.document_id FROM {source}", params).fetchall()
    conn.executemany("DELETE FROM chunks WHERE pk = ?", ((row[0],) for row in rows))
    return [row[1] for row in rows], {row[2] for row in rows}


def replace_document_rows(
    conn: sqlite3.Connection, cid: int, document: Document, entries: Sequence[VectorEntry],
    vectors: Sequence[DenseRow], *, settings: str, now: float,
) -> list[str]:
    """Write a document and its chunks in place of any earlier document with the same
    source or id (its record and every chunk); returns the ids of the chunks removed.

    The earlier document's creation time is kept; chunk counts are recounted for every
    document the write touched."""
    old = conn.execute(
        "SELECT id, created FROM documents WHERE collection_id = ? AND (source = ? OR id = ?)",
        (cid, document.source, document.id)).fetchall()
    doomed = {row[0] for row in old} | {document.id}
    created = min((row[1] for row in old), default=now)
    removed, _ = delete_chunks(conn, BY_DOCUMENTS, (cid, ids_json(doomed)))
    conn.execute(f"DELETE FROM documents WHERE collection_id = ? AND id {IN_JSON}",
                 (cid, ids_json(doomed)))
    touched = write_chunks(conn, cid, entries, vectors)
    conn.execute(
        "INSERT INTO documents (collection_id, id, source, content_hash, settings, "
        "metadata, chunk_count, created, updated) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)",
        (cid, document.id, document.source, str(document.metadata.get("content_hash", "")),
         settings, to_json(dict(document.metadata)), created, now))
    conn.execute(RECOUNT, (cid, ids_json(touched | {document.id})))
    return removed


__all__ = [
    "DenseRow", "chunk_from_row", "chunk_ids_by_pk", "delete_chunks", "dense_rows",
    "document_from_row", "fetch_chunks", "filtered_ids_sql", "metadata_key_kinds",
    "replace_document_rows", "stats_from_row", "write_chunks",
]

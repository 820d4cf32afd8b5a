"""PgVectorStore's writes: chunks, postings and document records, in few statements.

Every function runs inside the caller's transaction, which holds the collection's
row lock (``SELECT ... FOR UPDATE``), so the chunk and term totals BM25 reads stay
exact. A batch of documents costs the same handful of statements as one document:
chunks and their postings go in one ``INSERT`` (a data-modifying ``WITH``), deleted
chunks fix the totals in the ``DELETE`` that removes them, and document records go
in with one ``unnest``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from ragloom.lexical.tokenize import tokenize
from ragloom.stores.pgvector_sql import plain, to_jsonb_text
from ragloom.types import Document, VectorEntry

Vectors = Sequence[npt.NDArray[np.float32]]

_INSERT = """
    WITH new AS (
        INSERT INTO ragloom_chunks (collection_id, id, document_id, idx, start_char, end_char,
                                    page, text, metadata, embedding, term_count)
        SELECT %s, * FROM unnest(%s::text[], %s::text[], %s::int[], %s::int[], %s::int[],
                                 %s::int[], %s::text[], %s::jsonb[], %s::vector[], %s::int[])
        RETURNING pk, id, term_count),
    posted AS (
        INSERT INTO ragloom_postings (collection_id, term, chunk_pk, tf, dl)
        SELECT %s, t.term, new.pk, t.tf, new.term_count
        FROM unnest(%s::text[], %s::text[], %s::int[]) AS t(chunk_id, term, tf)
        JOIN new ON new.id = t.chunk_id)
    UPDATE ragloom_collections SET chunk_total = chunk_total + %s,
                                   length_total = length_total + %s WHERE id = %s"""

_DELETE = """
    WITH gone AS (
        DELETE FROM ragloom_chunks c WHERE c.collection_id = %s AND ({where})
        RETURNING c.document_id, c.term_count),
    totals AS (
        UPDATE ragloom_collections
        SET chunk_total = chunk_total - (SELECT COUNT(*) FROM gone),
            length_total = length_total - (SELECT COALESCE(SUM(term_count), 0) FROM gone)
        WHERE id = %s)
    SELECT (SELECT COUNT(*) FROM gone), ARRAY(SELECT DISTINCT document_id FROM gone)"""

# The chunks of the replaced documents, and chunks elsewhere with the new chunks' ids
# (their documents' counts drop), then the replaced documents' records.
_REPLACE = """
    WITH gone AS (
        DELETE FROM ragloom_chunks c WHERE c.collection_id = %(cid)s
            AND (c.document_id = ANY(%(doomed)s) OR c.id = ANY(%(ids)s))
        RETURNING c.document_id, c.term_count),
    totals AS (
        UPDATE ragloom_collections
        SET chunk_total = chunk_total - (SELECT COUNT(*) FROM gone),
            length_total = length_total - (SELECT COALESCE(SUM(term_count), 0) FROM gone)
        WHERE id = %(cid)s),
    moved AS (
        UPDATE ragloom_documents d SET chunk_count = d.chunk_count - g.n
        FROM (SELECT document_id, COUNT(*) AS n FROM gone GROUP BY document_id) g
        WHERE d.collection_id = %(cid)s AND d.id = g.document_id
          AND NOT d.id = ANY(%(doomed)s))
    DELETE FROM ragloom_documents WHERE collection_id = %(cid)s AND id = ANY(%(doomed)s)"""

_INSERT_DOCUMENTS = """
    INSERT INTO ragloom_documents (collection_id, id, source, content_hash, settings,
                                   metadata, chunk_count, created, updated)
    SELECT %s, d.id, d.source, d.content_hash, %s, d.metadata, d.chunk_count,
           COALESCE(d.created, now()), now()
    FROM unnest(%s::text[], %s::text[], %s::text[], %s::jsonb[], %s::int[],
                %s::timestamptz[]) AS d(id, source, content_hash, metadata, chunk_count, created)"""


def vector_text(values: npt.NDArray[np.float32]) -> str:
    """pgvector's text form of a vector; float32 repr round-trips exactly."""
    return "[" + ",".join(map(repr, values.astype(np.float32).tolist())) + "]"


def clean(text: str) -> str:
    """PostgreSQL text holds no NUL."""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def delete_chunks(conn: Any, cid: int, where: str, params: Sequence[object]
                  ) -> tuple[int, set[str]]:
    """Delete the collection's chunks matching ``where`` (SQL over ``c`` chosen here,
    never user text), postings with them; returns how many and their documents."""
    row = conn.execute(_DELETE.format(where=where), [cid, *params, cid]).fetchone()
    return int(row[0]), set(row[1])


def insert_chunks(conn: Any, cid: int, entries: Sequence[VectorEntry], vectors: Vectors
                  ) -> tuple[set[str], set[str]]:
    """Upsert chunks with their postings (the last entry with an id wins, as repeated
    upserts would); returns (documents that lost a chunk, documents written)."""
    latest = {entry.id: (entry, vector) for entry, vector in zip(entries, vectors, strict=True)}
    _, lost = delete_chunks(conn, cid, "c.id = ANY(%s)", [list(latest)])
    _insert_new(conn, cid, latest)
    return lost, {entry.chunk.document_id for entry, _ in latest.values()}


def _insert_new(conn: Any, cid: int, latest: Mapping[str, tuple[VectorEntry, Any]]) -> None:
    """Insert chunks whose ids the collection does not hold, with their postings."""
    columns: list[list[Any]] = [[] for _ in range(10)]
    postings: list[list[Any]] = [[], [], []]
    length_total = 0
    for chunk_id, (entry, vector) in latest.items():
        chunk = entry.chunk
        counts = Counter(tokenize(chunk.text))
        length = sum(counts.values())
        length_total += length
        row = (chunk_id, chunk.document_id, chunk.index, chunk.start, chunk.end, chunk.page,
               clean(chunk.text), to_jsonb_text(plain(dict(chunk.metadata))),
               vector_text(vector), length)
        for column, value in zip(columns, row, strict=True):
            column.append(value)
        for term, tf in counts.items():
            postings[0].append(chunk_id)
            postings[1].append(term)
            postings[2].append(tf)
    conn.execute(_INSERT, (cid, *columns, cid, *postings, len(latest), length_total, cid))


def recount(conn: Any, cid: int, documents: set[str]) -> None:
    """Set the chunk counts of these documents' records (those that exist)."""
    if documents:
        conn.execute(
            "UPDATE ragloom_documents d SET chunk_count = (SELECT COUNT(*) FROM "
            "ragloom_chunks c WHERE c.collection_id = d.collection_id AND "
            "c.document_id = d.id) WHERE d.collection_id = %s AND d.id = ANY(%s)",
            (cid, sorted(documents)))


def bump(conn: Any, cid: int) -> None:
    """A new generation: readers holding caches of the collection see it changed."""
    conn.execute("UPDATE ragloom_collections SET generation = generation + 1 WHERE id = %s",
                 (cid,))


@dataclass(frozen=True)
class DocumentWrite:
    """One document to store with its chunks and their vectors."""

    document: Document
    entries: Sequence[VectorEntry]
    vectors: Vectors


def independent(writes: Sequence[DocumentWrite]) -> bool:
    """Whether a batch can be written at once with the effect of writing its documents
    one after another: no source, document id or chunk id appears twice."""
    sources = [w.document.source for w in writes]
    ids = [w.document.id for w in writes]
    chunk_ids = [entry.id for w in writes for entry in w.entries]
    return (len(set(sources)) == len(sources) and len(set(ids)) == len(ids)
            and len(set(chunk_ids)) == len(chunk_ids))


def replace_documents(conn: Any, cid: int, writes: Sequence[DocumentWrite], settings: str
                      ) -> None:
    """Replace each document (and any earlier one with its source or id, with all
    their chunks) by its new version; ``writes`` must be :func:`independent`."""
    sources = [clean(w.document.source) for w in writes]
    ids = [w.document.id for w in writes]
    old = conn.execute(
        "SELECT id, source, created FROM ragloom_documents WHERE collection_id = %s "
        "AND (source = ANY(%s) OR id = ANY(%s))", (cid, sources, ids)).fetchall()
    created = _earliest(old, sources, ids)
    doomed = sorted({row[0] for row in old} | set(ids))
    latest = {entry.id: (entry, vector) for w in writes
              for entry, vector in zip(w.entries, w.vectors, strict=True)}
    # No result is read from here on: in pipeline mode the rest goes in one round trip.
    conn.execute(_REPLACE, {"cid": cid, "doomed": doomed, "ids": list(latest)})
    if latest:
        _insert_new(conn, cid, latest)
    conn.execute(_INSERT_DOCUMENTS, (
        cid, settings, ids, sources,
        [str(w.document.metadata.get("content_hash", "")) for w in writes],
        [to_jsonb_text(plain(dict(w.document.metadata))) for w in writes],
        [len({entry.id for entry in w.entries}) for w in writes],
        [created.get(i) for i in range(len(writes))]))


def _earliest(old: Sequence[Any], sources: Sequence[str], ids: Sequence[str]
              ) -> Mapping[int, datetime]:
    """Per position in the batch, the creation time of the earliest record it replaces."""
    position = {source: i for i, source in enumerate(sources)}
    position_of_id = {doc_id: i for i, doc_id in enumerate(ids)}
    earliest: dict[int, datetime] = {}
    for doc_id, source, created in old:
        for i in {position.get(source), position_of_id.get(doc_id)} - {None}:
            assert i is not None
            if i not in earliest or created < earliest[i]:
                earliest[i] = created
    return earliest


__all__ = ["DocumentWrite", "bump", "clean", "delete_chunks", "independent", "insert_chunks",
           "recount", "replace_documents", "vector_text"]

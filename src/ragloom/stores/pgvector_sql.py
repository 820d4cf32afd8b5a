"""PgVectorStore's SQL: the schema, metadata as jsonb, and filters as parameterised SQL.

Every statement's variable parts are ``%s`` placeholders (psycopg binds them); the
only text interpolated into SQL is the fixed table prefix, integer collection ids
and dimensions, never user input.

Filters mean what :func:`ragloom.filters.evaluate` means. The kind of a stored value
comes from ``jsonb_typeof`` ("boolean", "number", "string"; "null", "array",
"object" and a missing path never match). Equality is jsonb equality (numbers
compare as exact ``numeric``, a boolean equals only a boolean); ``> < >= <=``
compare numbers as ``numeric`` and strings with ``COLLATE "C"`` (UTF-8 byte order,
which is code-point order). Numbers are written to jsonb so that ``numeric``
comparisons agree with Python's exact int/float comparisons: a float is written
as its shortest repr, except a float of magnitude 2**53 or more (always an integer)
which is written as its exact integer value (so ``2**53 + 1`` stays above
``float(2**53)``; such a float reads back as an equal int). Non-finite floats
become null (JSON has no NaN), numpy scalars their Python value, NUL characters
U+FFFD (PostgreSQL text holds no NUL).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from ragloom.errors import FilterError
from ragloom.filters import KEY_PATTERN, MetadataFilter, MetadataFilters, kind_of

_EXACT_FLOAT = 2.0**53


def plain(value: Any) -> Any:
    """Metadata as the store keeps it: JSON data (see the module docstring)."""
    if isinstance(value, bool) or value is None:
        return value
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        return plain(item())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (int, str)):
        return value.replace("\x00", "\ufffd") if isinstance(value, str) else value
    if isinstance(value, dict):
        return {str(plain(key)): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return str(value)


def _wide_floats(value: Any) -> Any:
    # Written as integers so that numeric comparisons are exact; they read back as
    # ints, equal (==) to the floats they were.
    if isinstance(value, float) and abs(value) >= _EXACT_FLOAT:
        return int(value)
    if isinstance(value, dict):
        return {key: _wide_floats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_wide_floats(item) for item in value]
    return value


def to_jsonb_text(value: Any) -> str:
    """JSON text for a jsonb column (``value`` already :func:`plain`)."""
    return json.dumps(_wide_floats(value), ensure_ascii=False, allow_nan=False)


def json_scalar(value: object) -> str:
    return to_jsonb_text(plain(value))


def key_path(key: str) -> list[str]:
    if not KEY_PATTERN.match(key):
        raise FilterError(
            f"invalid filter key {key!r}: use letters, digits, '_' or '-', "
            "with '.' between nested keys"
        )
    return key.split(".")


class _Compiler:
    def __init__(self, column: str) -> None:
        self.column = column
        self.params: list[object] = []

    def node(self, node: MetadataFilters | MetadataFilter) -> str:
        if isinstance(node, MetadataFilter):
            return self.leaf(node)
        if not node.filters:
            return "TRUE" if node.condition == "and" else "FALSE"
        joiner = " AND " if node.condition == "and" else " OR "
        return "(" + joiner.join(self.node(item) for item in node.filters) + ")"

    def _at(self, path: list[str]) -> str:
        self.params.append(path)
        return f"({self.column} #> %s::text[])"

    def _equal_any(self, path: list[str], values: Sequence[object]) -> str:
        if not values:
            return "FALSE"
        at = self._at(path)
        self.params.append([json_scalar(value) for value in values])
        return f"({at} = ANY(%s::jsonb[]))"

    def leaf(self, leaf: MetadataFilter) -> str:
        path = key_path(leaf.key)
        op = leaf.operator
        value = leaf.value
        values: Sequence[object] = value if isinstance(value, tuple) else (value,)
        if op in ("==", "in"):
            return self._equal_any(path, values)
        if op in ("!=", "nin"):
            # The kind check comes first, so a missing/null/list/object never matches
            # and NOT never sees NULL.
            scalar = f"jsonb_typeof({self._at(path)}) IN ('boolean', 'number', 'string')"
            return f"({scalar} AND NOT {self._equal_any(path, values)})"
        kind = kind_of(value)
        at = self._at(path)
        if kind == "number":
            self.params.append(path)
            self.params.append(json_scalar(value))
            # CASE, not AND: PostgreSQL may evaluate AND's operands in any order.
            return (f"(CASE WHEN jsonb_typeof({at}) = 'number' THEN "
                    f"({self.column} #> %s::text[])::numeric {op} (%s::jsonb)::numeric "
                    "ELSE FALSE END)")
        if kind == "string":
            self.params.append(path)
            self.params.append(plain(value))
            return (f"(CASE WHEN jsonb_typeof({at}) = 'string' THEN "
                    f"({self.column} #>> %s::text[]) COLLATE \"C\" {op} %s::text COLLATE \"C\" "
                    "ELSE FALSE END)")
        raise FilterError(f"operator {op!r} on {leaf.key!r} compares numbers or strings")


def compile_filters(
    filters: MetadataFilters | MetadataFilter | None, column: str = "c.metadata"
) -> tuple[str, list[object]]:
    """A WHERE-clause expression over the jsonb ``column`` (SQL chosen by the caller)
    and its parameters."""
    if filters is None:
        return "TRUE", []
    compiler = _Compiler(column)
    return compiler.node(filters), compiler.params


# ------------------------------------------------------------------------------ schema

#: Bumped when the tables change; kept in ragloom_meta.
SCHEMA_VERSION = 1

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS ragloom_meta (
        key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS ragloom_collections (
        id SERIAL PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        embedder TEXT,
        dimension INTEGER,
        metric TEXT NOT NULL,
        index_kind TEXT NOT NULL DEFAULT 'exact',
        generation BIGINT NOT NULL DEFAULT 0,
        chunk_total BIGINT NOT NULL DEFAULT 0,
        length_total BIGINT NOT NULL DEFAULT 0,
        created TIMESTAMPTZ NOT NULL DEFAULT now())""",
    """CREATE TABLE IF NOT EXISTS ragloom_documents (
        collection_id INTEGER NOT NULL REFERENCES ragloom_collections(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        source TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        settings TEXT NOT NULL,
        metadata JSONB NOT NULL,
        chunk_count INTEGER NOT NULL,
        created TIMESTAMPTZ NOT NULL,
        updated TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (collection_id, id),
        UNIQUE (collection_id, source))""",
    """CREATE TABLE IF NOT EXISTS ragloom_chunks (
        pk BIGSERIAL PRIMARY KEY,
        collection_id INTEGER NOT NULL REFERENCES ragloom_collections(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        start_char INTEGER NOT NULL,
        end_char INTEGER NOT NULL,
        page INTEGER,
        text TEXT NOT NULL,
        metadata JSONB NOT NULL,
        embedding vector NOT NULL,
        term_count INTEGER NOT NULL,
        UNIQUE (collection_id, id))""",
    "CREATE INDEX IF NOT EXISTS ragloom_chunks_by_document "
    "ON ragloom_chunks (collection_id, document_id)",
    # The text index: one row per (term, chunk) with the term's count in the chunk.
    # BM25 needs tf, document frequency and lengths, which PostgreSQL's tsvector
    # ranking (ts_rank) does not use; ranking here is BM25 computed in SQL.
    """CREATE TABLE IF NOT EXISTS ragloom_postings (
        collection_id INTEGER NOT NULL,
        term TEXT NOT NULL,
        chunk_pk BIGINT NOT NULL REFERENCES ragloom_chunks(pk) ON DELETE CASCADE,
        tf INTEGER NOT NULL,
        PRIMARY KEY (collection_id, term, chunk_pk))""",
    "CREATE INDEX IF NOT EXISTS ragloom_postings_by_chunk ON ragloom_postings (chunk_pk)",
)

# Vectors stay in the row (text and metadata go out of line first): exact search reads
# every vector, and detoasting them made it ~5x slower (measured, 384 dimensions).
VECTOR_STORAGE_CHECK = ("SELECT attstorage FROM pg_attribute WHERE attrelid = "
                        "'ragloom_chunks'::regclass AND attname = 'embedding'")
VECTOR_STORAGE_SET = "ALTER TABLE ragloom_chunks ALTER COLUMN embedding SET STORAGE MAIN"

CHUNK_COLUMNS = "c.id, c.document_id, c.idx, c.start_char, c.end_char, c.page, c.text, c.metadata"
DOCUMENT_COLUMNS = "id, source, content_hash, chunk_count, settings, metadata"
STATS_SQL = """
    SELECT c.name, c.embedder, c.dimension, c.metric,
           (SELECT COUNT(*) FROM ragloom_documents d WHERE d.collection_id = c.id),
           c.chunk_total
    FROM ragloom_collections c"""

INSERT_CHUNKS = """
    INSERT INTO ragloom_chunks (collection_id, id, document_id, idx, start_char, end_char,
                                page, text, metadata, embedding, term_count)
    SELECT %s, * FROM unnest(%s::text[], %s::text[], %s::int[], %s::int[], %s::int[],
                             %s::int[], %s::text[], %s::jsonb[], %s::vector[], %s::int[])
    RETURNING pk, id"""

# BM25 as ragloom.stores.bm25 computes it (Lucene's idf), over the postings of the query
# terms. Parameters: cid, terms[], repeats[], cid, cid, then the filter's, then top_k.
BM25_SQL = """
    WITH q AS (SELECT * FROM unnest(%s::text[], %s::int[]) AS q(term, repeats)),
    stats AS (SELECT chunk_total::float8 AS n_total,
                     GREATEST(length_total::float8 / GREATEST(chunk_total, 1), 1e-9) AS avgdl
              FROM ragloom_collections WHERE id = %s),
    weights AS (
        SELECT q.term, q.repeats,
               ln(1.0 + (stats.n_total - df.n + 0.5) / (df.n + 0.5)) AS idf
        FROM q CROSS JOIN stats
        JOIN LATERAL (SELECT COUNT(*)::float8 AS n FROM ragloom_postings p
                      WHERE p.collection_id = %s AND p.term = q.term) AS df ON df.n > 0),
    scored AS (
        SELECT p.chunk_pk,
               SUM(w.repeats * w.idf * (p.tf * 2.2)
                   / (p.tf + 1.2 * (0.25 + 0.75 * c.term_count / stats.avgdl))) AS score
        FROM weights w
        JOIN ragloom_postings p ON p.collection_id = %s AND p.term = w.term
        JOIN ragloom_chunks c ON c.pk = p.chunk_pk
        CROSS JOIN stats
        WHERE {where}
        GROUP BY p.chunk_pk)
    SELECT s.score, {columns}
    FROM scored s JOIN ragloom_chunks c ON c.pk = s.chunk_pk
    ORDER BY s.score DESC, c.id
    LIMIT %s"""

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
from ragloom.filters import KEY_PATTERN, MetadataFilter, MetadataFilters
from ragloom.stores.bm25 import K1, B
from ragloom.stores.filter_compiler import FilterCompiler

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


class _Compiler(FilterCompiler):
    def __init__(self, column: str) -> None:
        super().__init__()
        self.column = column

    def _at(self, path: list[str]) -> str:
        self.params.append(path)
        return f"({self.column} #> %s::text[])"

    def equal_any(self, key: str, values: Sequence[object]) -> str:
        path = key_path(key)
        if not values:
            return "FALSE"
        at = self._at(path)
        self.params.append([json_scalar(value) for value in values])
        return f"({at} = ANY(%s::jsonb[]))"

    def scalar(self, key: str) -> str:
        return f"jsonb_typeof({self._at(key_path(key))}) IN ('boolean', 'number', 'string')"

    def compare(self, key: str, op: str, value: object, kind: str) -> str:
        path = key_path(key)
        at = self._at(path)
        self.params.append(path)
        if kind == "number":
            self.params.append(json_scalar(value))
            # CASE, not AND: PostgreSQL may evaluate AND's operands in any order.
            return (f"(CASE WHEN jsonb_typeof({at}) = 'number' THEN "
                    f"({self.column} #> %s::text[])::numeric {op} (%s::jsonb)::numeric "
                    "ELSE FALSE END)")
        self.params.append(plain(value))
        return (f"(CASE WHEN jsonb_typeof({at}) = 'string' THEN "
                f"({self.column} #>> %s::text[]) COLLATE \"C\" {op} %s::text COLLATE \"C\" "
                "ELSE FALSE END)")


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

#: Bumped when the tables change; kept in ragloom_meta. 2: postings carry their
#: chunk's length (``dl``), so BM25 never reads the chunks to score.
SCHEMA_VERSION = 2

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
    # The text index: one row per (term, chunk) with the term's count in the chunk and
    # the chunk's length. BM25 needs tf, document frequency and lengths, which
    # PostgreSQL's tsvector ranking (ts_rank) does not use; ranking here is BM25
    # computed in SQL, from the primary key's index alone (tf and dl are included).
    """CREATE TABLE IF NOT EXISTS ragloom_postings (
        collection_id INTEGER NOT NULL,
        term TEXT NOT NULL,
        chunk_pk BIGINT NOT NULL REFERENCES ragloom_chunks(pk) ON DELETE CASCADE,
        tf INTEGER NOT NULL,
        dl INTEGER NOT NULL,
        PRIMARY KEY (collection_id, term, chunk_pk) INCLUDE (tf, dl))""",
    "CREATE INDEX IF NOT EXISTS ragloom_postings_by_chunk ON ragloom_postings (chunk_pk)",
)

#: From schema 1: postings get their chunk's length (the old primary key stays; it
#: serves the same lookups, reading tf and dl from the table).
UPGRADE_FROM_1 = (
    "ALTER TABLE ragloom_postings ADD COLUMN IF NOT EXISTS dl INTEGER",
    "UPDATE ragloom_postings p SET dl = c.term_count FROM ragloom_chunks c "
    "WHERE c.pk = p.chunk_pk AND p.dl IS NULL",
    "ALTER TABLE ragloom_postings ALTER COLUMN dl SET NOT NULL",
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

# BM25 as ragloom.stores.bm25 computes it (Lucene's idf, K1 and B from there), over the
# postings of the query terms alone: each posting carries its chunk's length, so scoring
# reads one index range per term and never the chunks; the chunks are read for the
# candidates at the cut (the top_k-th score and its ties, which the id orders) and, with
# a filter, for the chunks scored. Parameters: terms[], repeats[], cid, cid, terms[], then
# the filter's, then top_k - 1, top_k.
_BM25 = """
    WITH q AS (SELECT * FROM unnest(%s::text[], %s::int[]) AS q(term, repeats)),
    stats AS (SELECT chunk_total::float8 AS n_total,
                     GREATEST(length_total::float8 / GREATEST(chunk_total, 1), 1e-9) AS avgdl
              FROM ragloom_collections WHERE id = %s),
    hits AS MATERIALIZED (
        SELECT p.term, p.chunk_pk, p.tf, p.dl FROM ragloom_postings p
        WHERE p.collection_id = %s AND p.term = ANY(%s::text[])),
    weights AS (
        SELECT q.term, q.repeats, ln(1.0 + (stats.n_total - df.n + 0.5) / (df.n + 0.5)) AS idf
        FROM q CROSS JOIN stats
        JOIN (SELECT term, COUNT(*)::float8 AS n FROM hits GROUP BY term) df ON df.term = q.term),
    summed AS (
        SELECT h.chunk_pk,
               SUM(w.repeats * w.idf * (h.tf * {k1_plus_1!r}::float8)
                   / (h.tf + {k1!r}::float8 * ({one_minus_b!r}::float8
                                               + {b!r}::float8 * h.dl / stats.avgdl))) AS score
        FROM hits h JOIN weights w ON w.term = h.term CROSS JOIN stats
        GROUP BY h.chunk_pk),
    scored AS MATERIALIZED ({scored}),
    cut AS (SELECT score FROM scored ORDER BY score DESC OFFSET %s LIMIT 1)
    SELECT s.score, {columns}
    FROM scored s JOIN ragloom_chunks c ON c.pk = s.chunk_pk
    WHERE s.score >= COALESCE((SELECT score FROM cut), '-Infinity'::float8)
    ORDER BY s.score DESC, c.id
    LIMIT %s"""


def bm25_sql(where: str) -> str:
    """The keyword query, filtered by ``where`` (SQL over ``c``, from :func:`compile_filters`)."""
    scored = ("SELECT chunk_pk, score FROM summed" if where == "TRUE" else
              "SELECT s.chunk_pk, s.score FROM summed s JOIN ragloom_chunks c "
              f"ON c.pk = s.chunk_pk WHERE {where}")
    return _BM25.format(k1_plus_1=K1 + 1.0, k1=K1, one_minus_b=1.0 - B, b=B, scored=scored,
                        columns=CHUNK_COLUMNS)

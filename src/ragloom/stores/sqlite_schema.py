"""The SQLite store's on-disk format: tables, per-collection text index DDL, the SQL
snippets the store composes its statements from, and how values are encoded in columns.

``PRAGMA user_version`` holds :data:`SCHEMA_VERSION`. Every name interpolated into SQL
here is a fixed identifier or built from an integer collection id, never user text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

SCHEMA_VERSION = 2
#: The statement the metadata-index triggers and rebuilds share (completed by a
#: condition on ``c``, the chunk row).
_SCALAR_TYPES = "('true', 'false', 'integer', 'real', 'text')"
INSERT_META = f"""INSERT INTO chunk_meta (pk, path, type, atom)
        SELECT new.pk, j.fullkey, j.type, j.atom FROM json_tree(new.metadata) AS j
        WHERE j.type IN {_SCALAR_TYPES};"""
#: Refills the metadata index from every chunk (an upgrade from schema 1, or a file
#: last written by another SQLite version, whose json_tree may spell paths differently).
REBUILD_META = ("DELETE FROM chunk_meta", f"""INSERT INTO chunk_meta (pk, path, type, atom)
        SELECT c.pk, j.fullkey, j.type, j.atom FROM chunks AS c, json_tree(c.metadata) AS j
        WHERE j.type IN {_SCALAR_TYPES}""")
#: ``store_meta`` key naming the SQLite version whose json_tree filled ``chunk_meta``.
META_INDEX_VERSION_KEY = "chunk_meta.sqlite_version"
#: Vectors are stored as little-endian float32 BLOBs.
VECTOR_DTYPE = np.dtype("<f4")

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS collections (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,
        embedder TEXT,
        dimension INTEGER,
        metric TEXT NOT NULL,
        generation INTEGER NOT NULL DEFAULT 0,
        created REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS documents (
        collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        source TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        settings TEXT NOT NULL,
        metadata TEXT NOT NULL,
        chunk_count INTEGER NOT NULL,
        created REAL NOT NULL,
        updated REAL NOT NULL,
        PRIMARY KEY (collection_id, id),
        UNIQUE (collection_id, source))""",
    """CREATE TABLE IF NOT EXISTS chunks (
        pk INTEGER PRIMARY KEY,
        collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        start_char INTEGER NOT NULL,
        end_char INTEGER NOT NULL,
        page INTEGER,
        text TEXT NOT NULL,
        metadata TEXT NOT NULL,
        vector BLOB NOT NULL,
        UNIQUE (collection_id, id))""",
    "CREATE INDEX IF NOT EXISTS chunks_by_document ON chunks (collection_id, document_id)",
    # The metadata index (schema 2): one row per scalar value anywhere in a chunk's
    # metadata, kept by triggers, so a filter is an index lookup, not a json_extract of
    # every chunk (see sqlite_filters.compile_indexed_filters). ``atom`` has no type
    # affinity: numbers and text keep their SQLite classes.
    """CREATE TABLE IF NOT EXISTS chunk_meta (
        pk INTEGER NOT NULL,
        path TEXT NOT NULL,
        type TEXT NOT NULL,
        atom)""",
    "CREATE INDEX IF NOT EXISTS chunk_meta_by_value ON chunk_meta (path, atom)",
    "CREATE INDEX IF NOT EXISTS chunk_meta_by_chunk ON chunk_meta (pk)",
    f"""CREATE TRIGGER IF NOT EXISTS chunk_meta_ai AFTER INSERT ON chunks BEGIN
        {INSERT_META} END""",
    """CREATE TRIGGER IF NOT EXISTS chunk_meta_ad AFTER DELETE ON chunks BEGIN
        DELETE FROM chunk_meta WHERE pk = old.pk; END""",
    f"""CREATE TRIGGER IF NOT EXISTS chunk_meta_au AFTER UPDATE OF metadata ON chunks BEGIN
        DELETE FROM chunk_meta WHERE pk = old.pk;
        {INSERT_META} END""",
    """CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
)

CHUNK_COLUMNS = "id, document_id, idx, start_char, end_char, page, text, metadata"
UPSERT_CHUNK = """
    INSERT INTO chunks (collection_id, id, document_id, idx, start_char, end_char, page,
                        text, metadata, vector)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (collection_id, id) DO UPDATE SET
        document_id = excluded.document_id, idx = excluded.idx,
        start_char = excluded.start_char, end_char = excluded.end_char,
        page = excluded.page, text = excluded.text, metadata = excluded.metadata,
        vector = excluded.vector"""
IN_JSON = "IN (SELECT value FROM json_each(?))"
# Chunks by a JSON list of ids. CROSS JOIN fixes the order (list first, then the unique
# index), which the planner would otherwise not pick and scan the collection instead.
BY_IDS = "json_each(?) AS j CROSS JOIN chunks AS c ON c.collection_id = ? AND c.id = j.value"
BY_DOCUMENTS = f"chunks AS c WHERE c.collection_id = ? AND c.document_id {IN_JSON}"
RECOUNT = f"""
    UPDATE documents SET chunk_count = (
        SELECT COUNT(*) FROM chunks c
        WHERE c.collection_id = documents.collection_id AND c.document_id = documents.id)
    WHERE collection_id = ? AND id {IN_JSON}"""
DOCUMENT_COLUMNS = "id, source, content_hash, chunk_count, settings, metadata"
STATS_SQL = """
    SELECT c.name, c.embedder, c.dimension, c.metric,
           (SELECT COUNT(*) FROM documents d WHERE d.collection_id = c.id),
           (SELECT COUNT(*) FROM chunks k WHERE k.collection_id = c.id)
    FROM collections c"""


def collection_ddl(cid: int) -> list[str]:
    """DDL for one collection's text index; ``cid`` is an integer id, never user text."""
    fts = f"fts_{int(cid)}"
    view = f"chunk_text_{int(cid)}"
    return [
        f"CREATE VIEW IF NOT EXISTS {view} AS "
        f"SELECT pk, text FROM chunks WHERE collection_id = {int(cid)}",
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5(text, content='{view}', "
        "content_rowid='pk', tokenize='porter unicode61 remove_diacritics 2')",
        f"CREATE TRIGGER IF NOT EXISTS {fts}_ai AFTER INSERT ON chunks "
        f"WHEN new.collection_id = {int(cid)} BEGIN "
        f"INSERT INTO {fts} (rowid, text) VALUES (new.pk, new.text); END",
        f"CREATE TRIGGER IF NOT EXISTS {fts}_ad AFTER DELETE ON chunks "
        f"WHEN old.collection_id = {int(cid)} BEGIN "
        f"INSERT INTO {fts} ({fts}, rowid, text) VALUES ('delete', old.pk, old.text); END",
        f"CREATE TRIGGER IF NOT EXISTS {fts}_au AFTER UPDATE OF text ON chunks "
        f"WHEN new.collection_id = {int(cid)} BEGIN "
        f"INSERT INTO {fts} ({fts}, rowid, text) VALUES ('delete', old.pk, old.text); "
        f"INSERT INTO {fts} (rowid, text) VALUES (new.pk, new.text); END",
    ]


def drop_collection_ddl(cid: int) -> list[str]:
    fts = f"fts_{int(cid)}"
    return [f"DROP TRIGGER IF EXISTS {fts}_{suffix}" for suffix in ("ai", "ad", "au")] + [
        f"DROP TABLE IF EXISTS {fts}", f"DROP VIEW IF EXISTS chunk_text_{int(cid)}"]


def _finite(value: Any) -> Any:
    """Non-finite floats become null: JSON (and SQLite's JSON functions) has no NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def _plain(value: Any) -> Any:
    """numpy scalars as their Python values (so np.int64(5) stays a number), else str."""
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def to_json(data: Any) -> str:
    try:
        return json.dumps(data, ensure_ascii=False, allow_nan=False, default=_plain)
    except ValueError:
        return json.dumps(_finite(data), ensure_ascii=False, allow_nan=False, default=_plain)


def ids_json(ids: Iterable[str]) -> str:
    return json.dumps(list(ids))

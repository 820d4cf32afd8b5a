"""The embedding cache the CLI keeps beside the database, and how it stays bounded.

``ragloom ingest`` wraps the embedder in :class:`ragloom.resilience.CachedEmbedder`
over a :class:`ragloom.resilience.SQLiteEmbeddingCache` in
``<database folder>/embedding-cache.db``, keyed by (model, SHA-256 of the text).
It spares re-embedding chunks whose text did not change: the unchanged passages of
an edited file, and the chunks a killed run embedded but never committed.

Bounded: after a run, when the cache holds more than ``2 x chunks + 10,000``
entries (chunks = every chunk of every knowledge base in the database),
:func:`prune_embedding_cache` keeps only the entries whose text some knowledge base
still holds. Deleting the file is always safe: it only costs re-embedding.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from ragloom.errors import StoreError
from ragloom.types import text_hash

CACHE_FILE_NAME = "embedding-cache.db"
SLACK = 10_000


def cache_path_for(db_path: str | Path) -> Path:
    """``embedding-cache.db`` beside the database file."""
    return Path(db_path).parent / CACHE_FILE_NAME


def cache_entries(path: str | Path) -> int:
    """How many vectors the cache file holds (0 when there is none)."""
    if not Path(path).exists():
        return 0
    try:
        with sqlite3.connect(path) as conn:
            row = conn.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()
    except sqlite3.Error:
        return 0
    return int(row[0])


def needs_pruning(entries: int, chunks: int) -> bool:
    return entries > 2 * chunks + SLACK


def prune_embedding_cache(path: str | Path, keep_texts: Iterable[str]) -> int:
    """Delete the document-side entries whose text is not in ``keep_texts`` (and all
    query-side ones); returns how many entries went."""
    if not Path(path).exists():
        return 0
    try:
        conn = sqlite3.connect(path)
        try:
            conn.execute("CREATE TEMP TABLE keep (key TEXT PRIMARY KEY) WITHOUT ROWID")
            conn.executemany("INSERT OR IGNORE INTO keep (key) VALUES (?)",
                             ((f"doc:{text_hash(t)}",) for t in keep_texts))
            with conn:
                removed = conn.execute(
                    "DELETE FROM embedding_cache WHERE key NOT IN (SELECT key FROM keep)"
                ).rowcount
            conn.execute("VACUUM")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot prune the embedding cache {path}: {exc}; "
                         "deleting the file is safe") from exc
    return int(removed)

"""The SQLite store's metadata index (``chunk_meta``): filters become index lookups,
kept by triggers, filled on upgrade from schema 1, refilled for another SQLite."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from ragloom.filters import evaluate, parse_filters
from ragloom.stores.sqlite import SqliteVectorStore, filtered_ids_sql
from ragloom.stores.sqlite_filters import compile_filters, tree_path
from ragloom.stores.sqlite_schema import META_INDEX_VERSION_KEY
from ragloom.types import TextChunk, TextDocument, Vector, VectorEntry

RECORDS = [
    {"year": 2020, "lang": "en", "flag": True, "nested": {"b-c": 1.5}},
    {"year": 2021, "lang": "de", "flag": False, "tags": ["x", "y"]},
    {"year": "2022", "lang": None, "nested": {"b-c": "text"}},
    {"year": 1.5e3, "x": "ünï", "flag": 1},
    {"lang": "en", "year": 2**70},
]
FILTERS = [
    {"key": "year", "op": ">=", "value": 2021},
    {"key": "year", "op": "==", "value": "2022"},
    {"key": "lang", "op": "!=", "value": "en"},
    {"key": "lang", "op": "nin", "value": ["de", "fr"]},
    {"key": "flag", "op": "==", "value": True},
    {"key": "flag", "op": "==", "value": 1},
    {"key": "nested.b-c", "op": "<", "value": 2},
    {"key": "tags", "op": "==", "value": "x"},
    {"key": "x", "op": "in", "value": ["ünï"]},
    {"or": [{"key": "year", "op": "<", "value": 2000},
            {"and": [{"key": "lang", "op": "==", "value": "de"},
                     {"key": "flag", "op": "!=", "value": True}]}]},
]


def _entries() -> list[VectorEntry]:
    rng = np.random.default_rng(0)
    out = []
    for n, meta in enumerate(RECORDS):
        doc = TextDocument.create(f"text {n}", source=f"d{n}.txt", metadata=meta)
        chunk = TextChunk.create(doc, f"text {n}", index=0, start=0, end=6)
        out.append(VectorEntry(chunk=chunk, embedding=Vector(rng.standard_normal(4).tolist())))
    return out


def _matching(store: SqliteVectorStore, raw: dict) -> set[str]:  # type: ignore[type-arg]
    matches = store.query(Vector([1.0, 0.0, 0.0, 0.0]), top_k=100, filters=parse_filters(raw))
    return {m.chunk.metadata["source"] for m in matches}


@pytest.fixture()
def store(tmp_path: Path) -> SqliteVectorStore:
    store = SqliteVectorStore(tmp_path / "kb.db", ann="off")
    store.bind_embedder("fake:4", 4)
    store.add(_entries())
    return store


@pytest.mark.parametrize("raw", FILTERS)
def test_indexed_filters_mean_what_the_reference_means(
    store: SqliteVectorStore, raw: dict  # type: ignore[type-arg]
) -> None:
    expected = {e.chunk.metadata["source"] for e in _entries()
                if evaluate(parse_filters(raw), e.chunk.metadata)}
    assert _matching(store, raw) == expected


def test_the_plan_uses_the_index(store: SqliteVectorStore) -> None:
    filters = parse_filters({"lang": "de"})
    with store.reading() as (conn, cid):
        assert cid is not None
        sql, params = filtered_ids_sql(conn, cid, filters)  # what store.query runs
        plan = " ".join(str(row) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))
    assert "chunk_meta_by_value" in plan
    # The index's chunk list drives the lookup: chunks are read by primary key, not
    # walked through the collection's index.
    assert "USING INTEGER PRIMARY KEY" in plan
    slow, _ = compile_filters(filters)
    assert "json_extract" in slow and "json_extract" not in sql


def test_tree_path_spells_keys_as_sqlite_does() -> None:
    conn = sqlite3.connect(":memory:")
    assert tree_path(conn, "a") == "$.a"
    assert tree_path(conn, "nested.b-c") == '$.nested."b-c"'


def test_updates_and_deletes_reach_the_index(store: SqliteVectorStore, tmp_path: Path) -> None:
    entries = _entries()
    store.delete([entries[1].id])
    assert _matching(store, {"lang": "de"}) == set()
    conn = sqlite3.connect(tmp_path / "kb.db")
    (rows,) = conn.execute("SELECT COUNT(*) FROM chunk_meta WHERE pk NOT IN "
                           "(SELECT pk FROM chunks)").fetchone()
    assert rows == 0


def test_schema_1_files_are_upgraded_and_filled(store: SqliteVectorStore, tmp_path: Path) -> None:
    store.close()
    db = tmp_path / "kb.db"
    with sqlite3.connect(db) as conn:  # make it look like a file from schema 1
        conn.execute("DROP TABLE store_meta")
        conn.execute("DELETE FROM chunk_meta")
        conn.execute("PRAGMA user_version = 1")
    reopened = SqliteVectorStore(db, ann="off")
    assert _matching(reopened, {"lang": "de"}) == {"d1.txt"}
    reopened.close()


def test_a_file_filled_by_another_sqlite_is_refilled(
    store: SqliteVectorStore, tmp_path: Path
) -> None:
    store.close()
    db = tmp_path / "kb.db"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE chunk_meta SET path = 'other spelling'")
        conn.execute("UPDATE store_meta SET value = '3.0.0' WHERE key = ?",
                     (META_INDEX_VERSION_KEY,))
    reopened = SqliteVectorStore(db, ann="off")
    assert _matching(reopened, {"lang": "de"}) == {"d1.txt"}
    reopened.close()

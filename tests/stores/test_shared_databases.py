"""Collections of one place share one connection (SQLite) or one pool (PostgreSQL):
their stores are views of a SqliteDatabase / PgDatabase, and a dropped collection is
not created again by a write through any view of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragloom.errors import CollectionDroppedError
from ragloom.protocols import CollectionHandle
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.stores.sqlite_connection import SqliteDatabase
from ragloom.testing.store_conformance import document_entries
from tests.stores.conftest import unique_name


def _fill(store: Any, source: str) -> None:
    doc, entries = document_entries(source, ["one", "two"], np.random.default_rng(1))
    store.bind_embedder("fake:test", 8)
    store.replace_document(doc, entries)


def test_sqlite_views_share_one_connection(tmp_path: Path) -> None:
    database = SqliteDatabase(tmp_path / "shared.db")
    views = [SqliteVectorStore(database.path, collection=f"c{n}", database=database)
             for n in range(30)]
    for n, view in enumerate(views):
        _fill(view, f"doc{n}.txt")
    assert all(isinstance(view, CollectionHandle) for view in views)
    assert len({id(view._connect()) for view in views}) == 1
    views[0].close()  # a view's close keeps the file open for the others
    assert database.is_open and views[1].count() == 2
    assert views[0].count() == 2  # and the closed view reopens on use
    assert views[3].drop() is True
    # Another view of the same collection (the worker's, say) does not recreate it.
    again = SqliteVectorStore(database.path, collection="c3", database=database)
    with pytest.raises(CollectionDroppedError):
        _fill(again, "late.txt")
    assert "c3" not in {c.name for c in views[1].list_collections()}
    database.close()
    assert not database.is_open
    assert views[2].stats().chunk_count == 2  # reopened


def test_dropping_removes_the_hnsw_sidecar(tmp_path: Path) -> None:
    from ragloom.stores.ann import sidecar_path

    store = SqliteVectorStore(tmp_path / "s.db", collection="kb")
    _fill(store, "a.txt")
    sidecar = sidecar_path(store.path, "kb")
    assert sidecar is not None
    sidecar.write_bytes(b"index")
    Path(f"{sidecar}.labels.json").write_text("[]")
    assert store.drop()
    assert not list(tmp_path.glob("s.db.kb.hnsw*"))


def test_pgvector_views_share_one_pool(pg_url: str) -> None:
    from ragloom.stores.pgvector import PgVectorStore
    from ragloom.stores.pgvector_pool import PgDatabase

    database = PgDatabase(pg_url, pool_size=3)
    views = [PgVectorStore(pg_url, collection=unique_name("shared"), database=database)
             for _ in range(6)]
    try:
        for n, view in enumerate(views):
            _fill(view, f"doc{n}.txt")
        assert len({id(view._connect()) for view in views}) == 1
        views[0].close()
        assert database.is_open and views[1].count() == 2 and views[0].count() == 2
        assert views[2].drop() is True
        with pytest.raises(CollectionDroppedError):
            _fill(views[2], "late.txt")
    finally:
        for view in views:
            view.drop()
        database.close()
    assert not database.is_open

"""PgVectorStore and MilvusStore beyond the shared suite: batches of documents written
at once mean what writing them one by one means; keyword ties at the cut; the
PostgreSQL schema upgrade."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ragloom.errors import DimensionMismatchError, InvalidInputError
from ragloom.stores.bm25 import BM25Index
from ragloom.testing.store_conformance import entry, make_chunk
from ragloom.testing.store_conformance import versioned_document as _document


@pytest.fixture(params=["pgvector", "milvus"])
def make_server_store(request: pytest.FixtureRequest) -> Callable[..., Any]:
    fixture = "make_pg_store" if request.param == "pgvector" else "make_milvus_store"
    return request.getfixturevalue(fixture)  # type: ignore[no-any-return]


def _state(store: Any) -> tuple[Any, ...]:
    documents = [(d.id, d.source, d.content_hash, d.chunk_count, d.settings)
                 for d in store.list_documents()]
    chunks = sorted((c.id, c.document_id, c.text) for c in store.chunks())
    return documents, chunks, store.count()


def test_a_batch_means_its_documents_one_by_one(make_server_store: Any) -> None:
    one, batch = make_server_store(), make_server_store()
    first = [_document("a", ["alpha", "beta"], 1), _document("b", ["gamma"], 2),
             _document("c", ["delta", "alpha", "zeta"], 3)]
    # Then: a changes (new id, same source), b stays, d is new; c is untouched.
    second = [_document("a", ["alpha", "beta", "epsilon"], 4), _document("b", ["gamma"], 2),
              _document("d", ["theta"], 5)]
    for items in (first, second):
        for document, entries in items:
            one.replace_document(document, entries, settings="s")
        batch.replace_documents(items, settings="s")
    assert _state(batch) == _state(one)
    assert [d.source for d in batch.list_documents()] == ["a", "b", "c", "d"]
    assert batch.find_document("a").chunk_count == 3  # type: ignore[union-attr]
    assert {m.chunk.document_id for m in batch.keyword_query("alpha", top_k=10)} == {
        "id-a-3", "id-c-3"}


def test_a_batch_with_a_source_twice_keeps_the_last(make_server_store: Any) -> None:
    store = make_server_store()
    store.replace_documents([_document("a", ["one"], 1), _document("a", ["two", "three"], 2)])
    assert [(d.id, d.chunk_count) for d in store.list_documents()] == [("id-a-2", 2)]
    assert sorted(c.text for c in store.chunks()) == ["three", "two"]


def test_a_refused_batch_writes_nothing(make_server_store: Any) -> None:
    store = make_server_store()
    good = _document("a", ["alpha"], 1)
    stray_doc, stray_entries = _document("b", ["beta"], 2)
    stray_entries = [entry(make_chunk("x", "beta", {}, document_id="elsewhere"),
                           np.ones(8))]
    with pytest.raises(InvalidInputError):
        store.replace_documents([good, (stray_doc, stray_entries)])
    wide = _document("c", ["gamma"], 3, dimension=4)
    store.replace_document(*_document("z", ["zeta"], 9))
    with pytest.raises(DimensionMismatchError):
        store.replace_documents([good, wide])
    assert [d.source for d in store.list_documents()] == ["z"]


def test_keyword_ties_at_the_cut_are_ordered_by_id(make_pg_store: Any) -> None:
    store = make_pg_store()
    texts = [(f"t{i:02d}", "same words here") for i in reversed(range(12))]
    texts += [("best", "words words words"), ("other", "unrelated text")]
    store.add([entry(make_chunk(cid, text, {}), np.ones(8)) for cid, text in texts])
    reference = BM25Index()
    reference.add(texts)
    got = store.keyword_query("words", top_k=5)
    assert [m.chunk.id for m in got] == [cid for cid, _ in reference.search("words", 5)]
    assert [m.chunk.id for m in got] == ["best", "t00", "t01", "t02", "t03"]


def test_a_schema_1_database_is_upgraded(make_pg_store: Any, pg_url: str) -> None:
    import psycopg

    from ragloom.stores.pgvector import PgVectorStore

    name = "upgrade_db"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    url = pg_url.replace("/postgres?", f"/{name}?")
    texts = [("a", "alpha beta"), ("b", "beta gamma gamma"), ("c", "delta")]
    with PgVectorStore(url, "kb") as store:
        store.add([entry(make_chunk(cid, text, {}), np.ones(8)) for cid, text in texts])
    with psycopg.connect(url, autocommit=True) as conn:  # back to schema 1's table
        conn.execute("ALTER TABLE ragloom_postings DROP COLUMN dl CASCADE")
        conn.execute("ALTER TABLE ragloom_postings ADD PRIMARY KEY (collection_id, term, "
                     "chunk_pk)")
        conn.execute("UPDATE ragloom_meta SET value = '1' WHERE key = 'schema'")
    reference = BM25Index()
    reference.add(texts)
    with PgVectorStore(url, "kb") as store:
        got = store.keyword_query("beta gamma", top_k=3)
        assert [m.chunk.id for m in got] == [cid for cid, _ in reference.search("beta gamma", 3)]
        store.add([entry(make_chunk("d", "gamma", {}), np.ones(8))])
        assert store.keyword_query("gamma", top_k=1)[0].chunk.id == "d"
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT value FROM ragloom_meta WHERE key = 'schema'"
                            ).fetchone()[0] == "2"

"""SqliteVectorStore's in-memory keyword index: same answers as FTS5, built when the
mode says so, kept in step with this object's writes and, through the change log, with
other writers' (another object, another process) without reloading."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragloom.stores.sqlite as sqlite_module
import ragloom.stores.sqlite_changes as sqlite_changes_module
import ragloom.stores.sqlite_keyword as sqlite_keyword_module
from ragloom.errors import ConfigurationError, StoreError
from ragloom.filters import MetadataFilters, parse_filters
from ragloom.stores.bm25 import BM25Index
from ragloom.stores.sqlite import AUTO_KEYWORD_INDEX_AFTER, SqliteVectorStore
from ragloom.testing.threads import run_in_threads
from ragloom.types import Vector, VectorEntry, VectorMatch
from tests.stores.conftest import document_entries, entry, make_chunk
from tests.stores.test_sqlite import _corpus, _expected

EVEN = parse_filters({"key": "even", "op": "==", "value": True})
SOME = parse_filters({"or": [{"key": "i", "op": "<", "value": 30},
                             {"key": "i", "op": "in", "value": [41, 77, 120, 300]}]})
NOTHING = parse_filters({"key": "i", "op": ">", "value": 10**9})


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "kb.db"


def corpus_entries(documents: list[list[str]]) -> list[VectorEntry]:
    return [entry(make_chunk(f"d{i:03d}", " ".join(words), {"even": i % 2 == 0, "i": i}),
                  [1.0, float(i)]) for i, words in enumerate(documents)]


def assert_same(got: list[VectorMatch], want: list[VectorMatch]) -> None:
    """Same chunks in the same order, same raw BM25 (to rounding), same scores."""
    assert [m.chunk for m in got] == [m.chunk for m in want]
    np.testing.assert_allclose([m.raw_score for m in got], [m.raw_score for m in want],
                               rtol=1e-12, atol=0)
    np.testing.assert_allclose([m.score for m in got], [m.score for m in want],
                               rtol=1e-12, atol=0)


def compare(
    memory: SqliteVectorStore, fts: SqliteVectorStore, queries: Iterable[str], top_k: int,
    filters: Iterable[MetadataFilters | None] = (None, EVEN, SOME),
) -> int:
    """Asserts both stores agree on every query and filter; returns the matches seen."""
    seen = 0
    filter_list = list(filters)
    for text in queries:
        for where in filter_list:
            want = fts.keyword_query(text, top_k=top_k, filters=where)
            got = memory.keyword_query(text, top_k=top_k, filters=where)
            assert_same(got, want)
            seen += len(got)
    assert memory.keyword_index_loaded and not fts.keyword_index_loaded
    return seen


@pytest.mark.parametrize(("seed", "size", "query_words", "top_k"),
                         [(21, 150, 3, 10), (22, 400, 6, 5), (23, 60, 2, 100), (24, 300, 4, 1)])
def test_memory_path_equals_fts_and_the_reference(
    db: Path, seed: int, size: int, query_words: int, top_k: int
) -> None:
    documents, queries = _corpus(seed, size, query_words)
    fts = SqliteVectorStore(db, keyword_index="fts")
    fts.add(corpus_entries(documents))
    memory = SqliteVectorStore(db, keyword_index="memory")
    texts = [" ".join(query) for query in queries]
    assert compare(memory, fts, texts, top_k) >= 2 * len(texts)
    # Both are FTS5's formula, written out independently in the other test module.
    for query in queries[:8]:
        for where, allowed in ((None, None), (EVEN, set(range(0, size, 2)))):
            ids, values = _expected(documents, query, top_k, allowed)
            got = memory.keyword_query(" ".join(query), top_k=top_k, filters=where)
            assert [m.chunk.id for m in got] == ids
            np.testing.assert_allclose([m.raw_score for m in got], values, rtol=1e-9)
    assert compare(memory, fts, texts[:3], top_k, [NOTHING]) == 0


def test_ties_repeats_unknown_words_and_long_queries(db: Path) -> None:
    texts = (["the walrus sings"] * 50 + ["the walrus the sings"] * 10
             + [f"the cat {' '.join(['dog'] * (i % 7))}" for i in range(140)])
    fts = SqliteVectorStore(db, keyword_index="fts")
    fts.add([entry(make_chunk(f"d{i:03d}", text, {"even": i % 2 == 0, "i": i}), [1, 0])
             for i, text in enumerate(texts)])
    memory = SqliteVectorStore(db, keyword_index="memory")
    documents, _ = _corpus(5)
    vocabulary = sorted({word for words in documents for word in words})
    # More distinct words than the FTS path keeps (MAX_QUERY_TOKENS): the same are kept.
    long_query = " ".join(vocabulary[:150] + ["walrus"] + [f"zz{n}" for n in range(150)])
    queries = ["the walrus", "walrus the the", "The WALRUS, the cat & dogs!", "sings dog",
               "unknownword", "the", "cat cat cat walrus", long_query]
    for top_k in (1, 5, 55, 150, 250):
        compare(memory, fts, queries, top_k)
    assert memory.keyword_query("zzz qqq") == [] and memory.keyword_query("", top_k=5) == []


def test_auto_switches_on_the_third_query(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert AUTO_KEYWORD_INDEX_AFTER == 3
    documents, queries = _corpus(31, 200)
    store = SqliteVectorStore(db)
    assert store.keyword_index == "auto"
    store.add(corpus_entries(documents))
    reference = SqliteVectorStore(db, keyword_index="fts")
    texts = [" ".join(query) for query in queries]
    for n in range(AUTO_KEYWORD_INDEX_AFTER - 1):
        assert_same(store.keyword_query(texts[n]), reference.keyword_query(texts[n]))
        assert not store.keyword_index_loaded
    # Queries without words or with top_k 0 never reach the index, nor count.
    assert store.keyword_query("!!!") == [] and store.keyword_query(texts[0], top_k=0) == []
    assert not store.keyword_index_loaded

    def no_fts(*args: object, **kwargs: object) -> None:
        raise AssertionError("FTS5 queried although the in-memory index was due")

    for name in ("rows", "scores", "count", "total"):
        monkeypatch.setattr(sqlite_module._Fts5Search, name, no_fts)
    for text in texts[2:]:
        got = store.keyword_query(text, filters=SOME)
        assert store.keyword_index_loaded
        monkeypatch.undo()
        assert_same(got, reference.keyword_query(text, filters=SOME))
        for name in ("rows", "scores", "count", "total"):
            monkeypatch.setattr(sqlite_module._Fts5Search, name, no_fts)
    assert store._keyword_builds == 1


def test_fts_mode_never_builds(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_index(*args: object, **kwargs: object) -> None:
        raise AssertionError("an in-memory index was built in fts mode")

    monkeypatch.setattr(sqlite_module, "BM25Index", no_index)
    documents, queries = _corpus(32, 80)
    store = SqliteVectorStore(db, keyword_index="fts")
    store.add(corpus_entries(documents))
    for query in queries:
        store.keyword_query(" ".join(query), filters=EVEN)
    assert store.warm_keyword_index() is False
    assert not store.keyword_index_loaded and store._keyword_builds == 0


def test_warm_builds_explicitly_and_refuses_bad_modes(db: Path) -> None:
    store = SqliteVectorStore(db)
    assert store.warm_keyword_index() is False  # no collection yet
    store.add([entry(make_chunk("a", "alpha beta"), [1, 0]),
               entry(make_chunk("b", "gamma"), [0, 1])])
    assert store.warm_keyword_index() is True and store.keyword_index_loaded
    assert store.warm_keyword_index() is True and store._keyword_builds == 1
    assert [m.chunk.id for m in store.keyword_query("gamma")] == ["b"]
    store.close()  # frees the copy; a later query reopens the file and uses FTS5 again
    assert not store.keyword_index_loaded
    assert [m.chunk.id for m in store.keyword_query("alpha")] == ["a"]
    with pytest.raises(ConfigurationError, match="keyword_index"):
        SqliteVectorStore(db, keyword_index="lucene")  # type: ignore[arg-type,unused-ignore]


def test_own_writes_update_the_index_in_place(db: Path) -> None:
    rng = np.random.default_rng(41)
    documents, queries = _corpus(41, 120)
    store = SqliteVectorStore(db, keyword_index="memory")
    fts = SqliteVectorStore(db, keyword_index="fts")
    texts = [" ".join(query) for query in queries[:10]]
    store.add(corpus_entries(documents[:60]))
    compare(store, fts, texts, 10)
    steps: list[Any] = [
        lambda: store.add(corpus_entries(documents)[60:]),
        lambda: store.delete([f"d{i:03d}" for i in range(0, 120, 3)] + ["missing"]),
        # An upsert that changes text, and a chunk id moving to other words.
        lambda: store.add([entry(make_chunk("d001", " ".join(documents[5]), {"i": 1}), [1, 0]),
                           entry(make_chunk("d002", "brandnew words", {"i": 2}), [0, 1])]),
    ]
    for n in range(4):
        doc, entries = document_entries(f"doc{n}.txt", [" ".join(documents[n]),
                                                        " ".join(documents[n + 50])], rng, 2)
        steps.append(lambda d=doc, e=entries: store.replace_document(d, e))
    doc, entries = document_entries("doc1.txt", [" ".join(documents[99])], rng, 2)
    steps.append(lambda: store.replace_document(doc, entries))  # replaces a document
    steps.append(lambda: store.delete_documents([doc.id, "no-such-document"]))
    for step in steps:
        step()
        assert store.keyword_index_loaded
        compare(store, fts, [*texts, "brandnew"], 10, (None, EVEN))
    assert store._keyword_builds == 1  # every change went in incrementally
    assert len(store._keyword or ()) == store.count()


def test_another_writers_changes_are_applied_not_reloaded(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    documents, queries = _corpus(51, 150)
    store = SqliteVectorStore(db, keyword_index="memory")
    other = SqliteVectorStore(db, keyword_index="fts")
    other.add(corpus_entries(documents[:100]))
    fts = SqliteVectorStore(db, keyword_index="fts")
    texts = [" ".join(query) for query in queries[:8]]
    compare(store, fts, texts, 10)
    store.query(Vector(np.array([1.0, 0.0], dtype=np.float32)), top_k=3)  # load vectors

    def no_reload(*args: object) -> None:
        raise AssertionError("the whole collection was reloaded after another's write")

    monkeypatch.setattr(SqliteVectorStore, "_load_matrix", staticmethod(no_reload))
    monkeypatch.setattr(sqlite_module, "BM25Index", no_reload)
    other.add([*corpus_entries(documents)[100:], entry(make_chunk("new", "okapi"), [1, 1])])
    # The next query applies the 51 changed chunks to both caches, nothing else.
    assert [m.chunk.id for m in store.keyword_query("okapi")] == ["new"]
    assert store.keyword_index_loaded and store._keyword_builds == 1
    assert store._memory.catch_ups == 1
    compare(store, fts, texts, 10)
    other.delete(["new", "d003"])
    other.add([entry(make_chunk("d004", "okapi okapi"), [3, 1])])  # text and vector change
    assert [m.chunk.id for m in store.keyword_query("okapi")] == ["d004"]
    compare(store, fts, texts, 10)
    probe = Vector(np.array([3.0, 1.0], dtype=np.float32))
    assert [m.chunk.id for m in store.query(probe, top_k=1)] == ["d004"]
    assert store.count() == fts.count() == 149
    assert len(store._keyword or ()) == 149 and store._keyword_builds == 1


def test_a_second_process_writes(db: Path) -> None:
    documents, queries = _corpus(52, 60)
    store = SqliteVectorStore(db, keyword_index="memory")
    store.add(corpus_entries(documents[:40]))
    assert store.warm_keyword_index()
    store.query(Vector(np.array([1.0, 0.0], dtype=np.float32)), top_k=1)
    script = textwrap.dedent(f"""
        import numpy as np
        from ragloom.stores.sqlite import SqliteVectorStore
        from ragloom.types import TextChunk, TextDocument, Vector, VectorEntry
        store = SqliteVectorStore({str(db)!r})
        doc = TextDocument.create("zebra crossing", source="other-process")
        chunk = TextChunk.create(doc, "zebra crossing", index=0, start=0, end=14)
        store.add([VectorEntry(chunk=chunk, embedding=Vector(np.array([0.0, 9.0], "f4")))])
        store.delete(["d000", "d001"])
        store.close()
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    found = store.keyword_query("zebra")
    assert [m.chunk.text for m in found] == ["zebra crossing"]
    assert store.keyword_index_loaded and store._keyword_builds == 1
    nearest = store.query(Vector(np.array([0.0, 1.0], dtype=np.float32)), top_k=1)
    assert nearest[0].chunk.text == "zebra crossing" and store.count() == 39
    compare(store, SqliteVectorStore(db, keyword_index="fts"),
            [" ".join(query) for query in queries[:5]], 10)


def test_large_changes_rebuild_in_the_background(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_keyword_module, "CATCH_UP_LIMIT", 5)
    documents, queries = _corpus(53, 80)
    store = SqliteVectorStore(db, keyword_index="memory")
    store.add(corpus_entries(documents[:40]))
    assert store.warm_keyword_index()
    SqliteVectorStore(db).add(corpus_entries(documents)[40:])
    fts = SqliteVectorStore(db, keyword_index="fts")
    texts = [" ".join(query) for query in queries[:6]]
    # Too many changes to apply on the query path: FTS5 answers, right, meanwhile.
    for text in texts:
        assert_same(store.keyword_query(text), fts.keyword_query(text))
    deadline = time.monotonic() + 30
    while not store.keyword_index_loaded and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.keyword_index_loaded and store._keyword_builds == 2
    compare(store, fts, texts, 10)


def test_a_pruned_change_log_falls_back_to_reloading(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_changes_module, "KEEP", 3)
    documents, queries = _corpus(54, 30)
    store = SqliteVectorStore(db, keyword_index="memory")
    store.add(corpus_entries(documents[:10]))
    assert store.warm_keyword_index()
    store.query(Vector(np.array([1.0, 0.0], dtype=np.float32)), top_k=1)
    other = SqliteVectorStore(db)
    for n in range(10, 30):  # one write each: the log keeps the last 3 rows only
        other.add(corpus_entries(documents)[n:n + 1])
    fts = SqliteVectorStore(db, keyword_index="fts")
    texts = [" ".join(query) for query in queries[:6]]
    for text in texts:
        assert_same(store.keyword_query(text), fts.keyword_query(text))
    assert store.count() == 30
    probe = Vector(np.array([1.0, 29.0], dtype=np.float32))
    assert store.query(probe, top_k=1)[0].chunk.id == "d029"


def test_a_rolled_back_write_leaves_the_index_right(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqliteVectorStore(db, keyword_index="memory")
    store.add([entry(make_chunk("a", "kept words"), [1, 0])])
    assert store.warm_keyword_index()

    def boom(*args: object) -> int:
        raise sqlite3.OperationalError("disk on fire")

    monkeypatch.setattr(store, "_bump", boom)
    with pytest.raises(StoreError, match="disk on fire"):
        store.add([entry(make_chunk("b", "lost words"), [0, 1])])
    with pytest.raises(StoreError, match="disk on fire"):
        store.delete(["a"])
    monkeypatch.undo()
    assert store.keyword_index_loaded
    assert store.keyword_query("lost") == []
    assert [m.chunk.id for m in store.keyword_query("kept words")] == ["a"]
    assert "b" not in (store._keyword or ()) and "a" in (store._keyword or ())


def test_a_write_during_the_build_is_not_lost(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SqliteVectorStore(db, keyword_index="memory")
    store.add([entry(make_chunk("a", "first text"), [1, 0])])

    class WritesWhileBuilding(BM25Index):
        writes = 1

        def add(self, items: Iterable[tuple[str, str]]) -> None:
            # Another thread's write through the same object, while texts are tokenised
            # (the first add only: later ones apply the change log, under the lock).
            if WritesWhileBuilding.writes:
                WritesWhileBuilding.writes -= 1
                worker = threading.Thread(
                    target=store.add, args=([entry(make_chunk("b", "second text"), [0, 1])],))
                worker.start()
                worker.join()
            super().add(items)

    monkeypatch.setattr(sqlite_module, "BM25Index", WritesWhileBuilding)
    # The snapshot misses "b": the change log brings it in when the index is installed.
    assert [m.chunk.id for m in store.keyword_query("text")] == ["a", "b"]
    assert store.keyword_index_loaded and len(store._keyword or ()) == 2
    monkeypatch.undo()
    assert [m.chunk.id for m in store.keyword_query("second")] == ["b"]
    assert store._keyword_builds == 1


def test_threads_query_write_and_build_at_once(db: Path) -> None:
    documents, queries = _corpus(61, 120)
    store = SqliteVectorStore(db)
    store.add(corpus_entries(documents[:40]))
    texts = [" ".join(query) for query in queries]
    all_entries = corpus_entries(documents)

    def work(worker: int) -> None:
        for n in range(20):
            store.keyword_query(texts[(worker + n) % len(texts)], filters=EVEN)
            if worker % 2 == 0:
                store.add(all_entries[40 + worker * 20 + n: 41 + worker * 20 + n])
            else:
                store.warm_keyword_index()

    run_in_threads(work, 4)
    assert store.count() == 80
    store.warm_keyword_index()
    compare(store, SqliteVectorStore(db, keyword_index="fts"), texts, 10)

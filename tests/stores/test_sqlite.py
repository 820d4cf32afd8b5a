"""SqliteVectorStore beyond the shared suite: persistence, the FTS index, BM25,
keyword input safety, several collections, transactions and crash safety."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloom.errors import ConfigurationError, DimensionMismatchError, StoreError
from ragloom.filters import parse_filters
from ragloom.protocols import DocumentIndex, KeywordSearchable, VectorStore
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.stores.sqlite import SCHEMA_VERSION, SqliteVectorStore
from ragloom.types import Vector
from tests.stores.conftest import document_entries, entry, make_chunk


def fts_rows(path: Path, collection: str = "default") -> int:
    """Rows in the collection's full-text index (its docsize table, one row per chunk)."""
    with sqlite3.connect(path) as conn:
        (cid,) = conn.execute("SELECT id FROM collections WHERE name = ?", (collection,)).fetchone()
        return int(conn.execute(f"SELECT COUNT(*) FROM fts_{cid}_docsize").fetchone()[0])


def fts_hits(path: Path, word: str) -> int:
    with sqlite3.connect(path) as conn:
        (cid,) = conn.execute("SELECT id FROM collections WHERE name = 'default'").fetchone()
        return len(conn.execute(f"SELECT rowid FROM fts_{cid} WHERE fts_{cid} MATCH ?",
                                (word,)).fetchall())


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "kb.db"


def test_implements_the_protocols(db: Path) -> None:
    store = SqliteVectorStore(db)
    assert isinstance(store, VectorStore)
    assert isinstance(store, KeywordSearchable)
    assert isinstance(store, DocumentIndex)
    assert not db.exists()  # the constructor does no I/O


def test_everything_survives_reopening(db: Path) -> None:
    rng = np.random.default_rng(3)
    with SqliteVectorStore(db, metric="dot") as store:
        store.bind_embedder("fake:hashing-8", 8)
        for n in range(5):
            doc, entries = document_entries(f"doc{n}.txt", [f"alpha {n}", f"beta gamma {n}"],
                                            rng, metadata={"n": n, "tag": {"k": "v"}})
            store.replace_document(doc, entries, settings="chunk=100")
        query = Vector(rng.standard_normal(8).astype(np.float32))
        before = [(m.chunk, m.score) for m in store.query(query, top_k=10)]
        documents = store.list_documents()
        keys = store.metadata_keys()
    reopened = SqliteVectorStore(db)  # metric=None: the collection's own
    assert reopened.count() == 10
    assert [(m.chunk, m.score) for m in reopened.query(query, top_k=10)] == before
    assert reopened.list_documents() == documents
    assert reopened.metadata_keys() == keys
    assert keys["n"] == {"number"} and keys["tag.k"] == {"string"} and keys["tag"] == set()
    assert reopened.collection_info() is not None
    assert reopened.stats().metric == "dot"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reopened.close()


def test_fts_rows_go_with_their_chunks(db: Path) -> None:
    rng = np.random.default_rng(4)
    store = SqliteVectorStore(db)
    doc_a, entries_a = document_entries("a", ["zebra one", "zebra two", "lion"], rng)
    doc_b, entries_b = document_entries("b", ["tiger"], rng)
    store.replace_document(doc_a, entries_a)
    store.replace_document(doc_b, entries_b)
    assert fts_rows(db) == 4
    assert store.delete([entries_a[2].id]) == 1
    assert fts_rows(db) == 3 and fts_hits(db, "lion") == 0
    assert store.find_document("a").chunk_count == 2  # type: ignore[union-attr]
    new_a, new_entries = document_entries("a", ["okapi"], rng)
    store.replace_document(new_a, new_entries)
    assert fts_rows(db) == 2 and fts_hits(db, "zebra") == 0 and fts_hits(db, "okapi") == 1
    store.add([entry(new_entries[0].chunk.__class__(**{**new_entries[0].chunk.__dict__,
                                                       "text": "walrus"}), np.ones(8))])
    assert fts_rows(db) == 2 and fts_hits(db, "okapi") == 0 and fts_hits(db, "walrus") == 1
    store.delete_documents([new_a.id, doc_b.id])
    assert fts_rows(db) == 0 and store.count() == 0


NASTY = ['"', '""', "'", "AND OR NOT NEAR( * ^ :", "NEAR(a b, 2)", "col:word", "a*", "-x",
         "(((", "\\", "caf\u00e9 na\u00efve", "\u65e5\u672c\u8a9e", "\U0001f600\U0001f680",
         "x" * 10_000, " ".join(["word"] * 2000), "", "   ", "_", "\x00", "\u0301"]


@pytest.mark.parametrize("text", NASTY, ids=range(len(NASTY)))
def test_keyword_input_never_breaks_the_query(db: Path, text: str) -> None:
    store = SqliteVectorStore(db)
    store.add([entry(make_chunk("a", "cafe word NEAR and not"), [1, 0]),
               entry(make_chunk("b", "x" * 50), [0, 1])])
    matches = store.keyword_query(text, top_k=5)
    assert all(0.0 <= m.score <= 1.0 for m in matches)
    if not text.strip() or text in ("_", "\x00", "\u0301"):
        assert matches == []


def test_keyword_finds_through_diacritics_and_stems(db: Path) -> None:
    store = SqliteVectorStore(db)
    store.add([entry(make_chunk("a", "Caf\u00e9s were running"), [1, 0]),
               entry(make_chunk("b", "nothing here"), [0, 1])])
    assert [m.chunk.id for m in store.keyword_query("cafe run")] == ["a"]
    assert store.keyword_query('"NOT" OR cafe*')[0].chunk.id == "a"


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=60))
def test_any_text_is_a_valid_keyword_query(text: str) -> None:
    with SqliteVectorStore(":memory:") as store:
        store.add([entry(make_chunk("a", "some words here"), [1, 0])])
        assert isinstance(store.keyword_query(text), list)


def _corpus(seed: int) -> tuple[list[list[str]], list[list[str]]]:
    """Random documents of consonant-vowel-consonant words: the Porter stemmer and
    both tokenizers leave them alone, so every system sees the same terms."""
    rng = np.random.default_rng(seed)
    vocabulary = [a + v + b for a in "bdfgkmnprtvz" for v in "aiou" for b in "bdgkmnprtv"]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1) ** 0.9
    weights /= weights.sum()
    documents = [list(rng.choice(vocabulary, size=int(rng.integers(3, 40)), p=weights))
                 for _ in range(150)]
    queries = [list(dict.fromkeys(rng.choice(vocabulary[:80], size=3))) for _ in range(25)]
    return documents, queries


def test_bm25_matches_bm25s_lucene(db: Path) -> None:
    import bm25s

    documents, queries = _corpus(11)
    store = SqliteVectorStore(db)
    memory = InMemoryVectorStore()
    entries = [entry(make_chunk(f"d{i:03d}", " ".join(words)), [1, 0])
               for i, words in enumerate(documents)]
    store.add(entries)
    memory.add(entries)
    reference = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    reference.index([list(words) for words in documents], show_progress=False)
    compared = 0
    for query in queries:
        # bm25s's Lucene variant leaves out BM25's constant (k1 + 1) factor.
        expected = np.asarray(reference.get_scores(query)) * 2.2
        ranked = sorted((i for i in range(len(documents)) if expected[i] > 0),
                        key=lambda i: (-expected[i], f"d{i:03d}"))[:10]
        got = store.keyword_query(" ".join(query), top_k=10)
        assert [m.chunk.id for m in got] == [f"d{i:03d}" for i in ranked]
        np.testing.assert_allclose([m.raw_score for m in got], expected[ranked], rtol=1e-6)
        from_memory = memory.keyword_query(" ".join(query), top_k=10)
        assert [m.chunk.id for m in from_memory] == [m.chunk.id for m in got]
        np.testing.assert_allclose([m.raw_score for m in from_memory],
                                   [m.raw_score for m in got], rtol=1e-6)
        compared += len(got)
    assert compared > 100


def test_keyword_query_with_filters_and_small_collections(db: Path) -> None:
    store = SqliteVectorStore(db)
    store.add([entry(make_chunk(f"c{i}", "policy lunch break", {"i": i}), [1, float(i)])
               for i in range(3)])
    matches = store.keyword_query("lunch policy", top_k=5)
    # A word in every chunk still scores clearly above zero (Lucene's idf).
    assert len(matches) == 3 and all(m.score > 0.01 for m in matches)
    assert [m.chunk.id for m in matches] == ["c0", "c1", "c2"]  # ties break by id
    filtered = store.keyword_query("lunch", filters=parse_filters({"key": "i", "op": ">",
                                                                   "value": 0}))
    assert [m.chunk.id for m in filtered] == ["c1", "c2"]


def test_collections_share_a_file_but_nothing_else(db: Path) -> None:
    one = SqliteVectorStore(db, collection="one")
    two = SqliteVectorStore(db, collection="two", metric="euclidean")
    one.bind_embedder("fake:a", 2)
    one.add([entry(make_chunk("x", "apple pie"), [1, 0])])
    two.add([entry(make_chunk("x", "banana split"), [0, 1]),
             entry(make_chunk("y", "apple"), [1, 1])])
    assert (one.count(), two.count()) == (1, 2)
    assert one.keyword_query("banana") == []
    assert [m.chunk.text for m in one.keyword_query("apple")] == ["apple pie"]
    stats = {c.name: c for c in one.list_collections()}
    assert (stats["one"].embedder, stats["one"].chunk_count) == ("fake:a", 1)
    assert (stats["two"].metric, stats["two"].chunk_count, stats["two"].embedder) == (
        "euclidean", 2, None)
    assert two.drop_collection() is True
    assert two.drop_collection() is False
    assert [c.name for c in one.list_collections()] == ["one"]
    assert one.count() == 1 and two.count() == 0
    with pytest.raises(ConfigurationError, match="cosine"):
        SqliteVectorStore(db, collection="one", metric="dot").count()


def test_other_connections_writes_are_seen(db: Path) -> None:
    reader = SqliteVectorStore(db)
    writer = SqliteVectorStore(db)
    writer.add([entry(make_chunk("a"), [1, 0])])
    assert reader.count() == 1
    writer.add([entry(make_chunk("b"), [0, 1])])
    best = reader.query(Vector(np.array([0, 1], np.float32)), top_k=1)
    assert [m.chunk.id for m in best] == ["b"]
    writer.delete(["a", "b"])
    assert reader.query(Vector(np.array([0, 1], np.float32))) == []


def test_failed_write_leaves_store_and_matrix_unchanged(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqliteVectorStore(db)
    store.add([entry(make_chunk("a", "kept"), [1, 0])])
    with pytest.raises(DimensionMismatchError):
        store.add([entry(make_chunk("b", "ok"), [0, 1]), entry(make_chunk("c", "bad"), [1, 0, 0])])

    def boom(*args: object) -> int:
        raise sqlite3.OperationalError("disk on fire")

    monkeypatch.setattr(store, "_bump", boom)
    with pytest.raises(StoreError, match="disk on fire"):
        store.add([entry(make_chunk("d", "lost"), [0, 1])])
    monkeypatch.undo()
    assert store.count() == 1 and fts_rows(db) == 1
    assert [m.chunk.id for m in store.query(Vector(np.array([0, 1], np.float32)), top_k=5)] == ["a"]
    assert store.keyword_query("lost ok bad") == []


def test_newer_schema_and_garbage_files_are_refused(tmp_path: Path) -> None:
    newer = tmp_path / "newer.db"
    with sqlite3.connect(newer) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer ragloom"):
        SqliteVectorStore(newer).count()
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError, match="not a usable"):
        SqliteVectorStore(garbage).open()


def test_get_chunks_metadata_and_non_finite_values(db: Path) -> None:
    store = SqliteVectorStore(db)
    store.add([entry(make_chunk("a", metadata={"score": float("nan"), "ok": 1}), [1, 0]),
               entry(make_chunk("b", metadata={"ok": True}), [0, 1])])
    assert [c.id for c in store.get_chunks(["b", "zz", "a"])] == ["b", "a"]
    assert store.get_chunks(["a"])[0].metadata == {"score": None, "ok": 1}
    assert store.metadata_keys() == {"score": set(), "ok": {"number", "bool"}}


def test_threads_share_one_store(db: Path) -> None:
    store = SqliteVectorStore(db)
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for n in range(30):
                store.add([entry(make_chunk(f"w{worker}-{n}", f"text {n}"), [1.0, float(n)])])
                store.query(Vector(np.array([1, 0], np.float32)), top_k=3)
                store.keyword_query("text")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert store.count() == 120 and fts_rows(db) == 120


INGEST_FOREVER = textwrap.dedent("""
    import sys
    import numpy as np
    from ragloom.stores.sqlite import SqliteVectorStore
    from ragloom.types import TextChunk, TextDocument, Vector, VectorEntry

    store = SqliteVectorStore(sys.argv[1])
    store.bind_embedder("fake:x", 16)
    rng = np.random.default_rng(0)
    n = 0
    while True:
        source = f"doc{n % 400}"  # past 400 documents, sources are re-ingested (replaced)
        text = " ".join(f"w{rng.integers(1000)}" for _ in range(200))
        doc = TextDocument.create(text + f" n{n}", source=source, metadata={"n": n})
        chunks = [TextChunk.create(doc, text[i:i + 100] + f" n{n}", index=i, start=i, end=i + 100)
                  for i in range(0, int(rng.integers(1, 12)) * 100, 100)]
        store.replace_document(doc, [VectorEntry(chunk=c, embedding=Vector(rng.random(16)))
                                     for c in chunks])
        if n % 7 == 6:
            store.delete_documents([store.find_document(f"doc{(n * 13) % 400}").id
                                    if store.find_document(f"doc{(n * 13) % 400}") else "none"])
        print(n, flush=True)
        n += 1
""")


@pytest.mark.parametrize("kill_after", [40, 450])
def test_kill_9_mid_ingest_leaves_a_consistent_database(db: Path, kill_after: int) -> None:
    process = subprocess.Popen([sys.executable, "-c", INGEST_FOREVER, str(db)],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    last = -1
    for line in process.stdout:
        last = int(line)
        if last >= kill_after:
            break
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert last >= kill_after

    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        (cid,) = conn.execute("SELECT id FROM collections").fetchone()
        conn.execute(f"INSERT INTO fts_{cid} (fts_{cid}) VALUES ('integrity-check')")
        chunk_rows = {row[0] for row in conn.execute("SELECT pk FROM chunks")}
        fts_ids = {row[0] for row in conn.execute(f"SELECT id FROM fts_{cid}_docsize")}
        assert chunk_rows == fts_ids and chunk_rows
        bad_counts = conn.execute(
            "SELECT d.id, d.chunk_count, (SELECT COUNT(*) FROM chunks c WHERE c.document_id = d.id)"
            " AS n FROM documents d WHERE d.chunk_count != n OR n = 0").fetchall()
        assert bad_counts == []
        orphans = conn.execute("SELECT COUNT(*) FROM chunks c WHERE NOT EXISTS "
                               "(SELECT 1 FROM documents d WHERE d.id = c.document_id)")
        assert orphans.fetchone()[0] == 0
        vectors = {row[0] for row in conn.execute("SELECT length(vector) FROM chunks")}
        assert vectors == {16 * 4}
        newest = conn.execute("SELECT MAX(json_extract(metadata, '$.n')) FROM documents")
        assert newest.fetchone()[0] >= last  # every reported commit survived

    store = SqliteVectorStore(db)
    assert store.count() == len(chunk_rows)
    assert store.keyword_query(f"n{last}")
    assert store.query(Vector(np.ones(16, np.float32)), top_k=3)

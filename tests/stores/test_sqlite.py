"""SqliteVectorStore beyond the shared suite: persistence, the FTS index, BM25,
keyword input safety, several collections, transactions and crash safety."""

from __future__ import annotations

import math
import signal
import sqlite3
import subprocess
import sys
import textwrap
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
from ragloom.testing.threads import run_in_threads
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


def _corpus(
    seed: int, size: int = 150, query_words: int = 3
) -> tuple[list[list[str]], list[list[str]]]:
    """Random documents of consonant-vowel-consonant words: the Porter stemmer and
    both tokenizers leave them alone, so every system sees the same terms. Zipf-like
    frequencies put the first words in most documents (FTS5's idf floor)."""
    rng = np.random.default_rng(seed)
    vocabulary = [a + v + b for a in "bdfgkmnprtvz" for v in "aiou" for b in "bdgkmnprtv"]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1) ** 0.9
    weights /= weights.sum()
    documents = [list(rng.choice(vocabulary, size=int(rng.integers(3, 40)), p=weights))
                 for _ in range(size)]
    # Some queries repeat a word: each occurrence counts, in FTS5 and in the reference.
    queries = [list(rng.choice(vocabulary[:80], size=query_words)) for _ in range(25)]
    return documents, queries


def fts5_bm25(documents: list[list[str]], query: list[str]) -> np.ndarray:
    """BM25 as the stores compute it, written from its documented formula: FTS5's
    bm25() with Lucene's idf = ln(1 + (N - n + 0.5) / (n + 0.5)); k1 = 1.2,
    b = 0.75; one term per query word occurrence; 0 for documents without a word."""
    total = len(documents)
    average = sum(len(words) for words in documents) / total
    scores = np.zeros(total)
    for word in query:
        found = sum(word in words for words in documents)
        idf = math.log(1.0 + (total - found + 0.5) / (found + 0.5))
        for i, words in enumerate(documents):
            tf = words.count(word)
            scores[i] += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(words) / average))
    return scores


def _expected(documents: list[list[str]], query: list[str], top_k: int,
              allowed: set[int] | None = None) -> tuple[list[str], list[float]]:
    scores = fts5_bm25(documents, query)
    ranked = sorted((i for i in range(len(documents))
                     if scores[i] > 0 and (allowed is None or i in allowed)),
                    key=lambda i: (-scores[i], f"d{i:03d}"))[:top_k]
    return [f"d{i:03d}" for i in ranked], [float(scores[i]) for i in ranked]


@pytest.mark.parametrize(("seed", "size", "query_words", "top_k"),
                         [(11, 150, 3, 10), (12, 400, 6, 5), (13, 60, 2, 100), (14, 300, 4, 1)])
def test_bm25_is_fts5s_formula_on_both_stores(
    db: Path, seed: int, size: int, query_words: int, top_k: int
) -> None:
    documents, queries = _corpus(seed, size, query_words)
    store = SqliteVectorStore(db)
    memory = InMemoryVectorStore()
    entries = [entry(make_chunk(f"d{i:03d}", " ".join(words), {"even": i % 2 == 0}), [1, 0])
               for i, words in enumerate(documents)]
    store.add(entries)
    memory.add(entries)
    even = parse_filters({"key": "even", "op": "==", "value": True})
    compared = 0
    for query in queries:
        text = " ".join(query)
        for filters, allowed in ((None, None), (even, set(range(0, size, 2)))):
            ids, values = _expected(documents, query, top_k, allowed)
            got = store.keyword_query(text, top_k=top_k, filters=filters)
            assert [m.chunk.id for m in got] == ids
            np.testing.assert_allclose([m.raw_score for m in got], values, rtol=1e-9)
            from_memory = memory.keyword_query(text, top_k=top_k, filters=filters)
            assert [m.chunk.id for m in from_memory] == ids
            np.testing.assert_allclose([m.raw_score for m in from_memory],
                                       [m.raw_score for m in got], rtol=1e-6, atol=1e-12)
            compared += len(got)
    assert compared >= 2 * len(queries)  # most queries found something


def test_bm25_ties_and_common_words_at_the_cut_off(db: Path) -> None:
    # 40 identical chunks tie on every query; "the" is in all 60 (idf floor) and only
    # breaks ties among chunks that hold the rarer word the same way.
    texts = ["the walrus sings"] * 40 + ["the the walrus sings"] * 2 + ["the cat"] * 18
    _ranks_like_the_reference(db, texts, [
        (["the", "walrus"], 5), (["walrus"], 20), (["the"], 3),
        (["the", "cat", "walrus"], 45), (["the", "the", "sings"], 41)])


def test_bm25_many_ties_among_selective_words(db: Path) -> None:
    # 60 chunks tie on "walrus" (selective) and all hold "the" (idf floor): more tied
    # rows than one fetch takes, some set apart only by "the".
    texts = (["the walrus sings"] * 50 + ["the walrus the sings"] * 10
             + [f"the cat {' '.join(['dog'] * (i % 7))}" for i in range(140)])
    _ranks_like_the_reference(db, texts, [
        (["the", "walrus"], 5), (["walrus", "the", "the"], 55),
        (["the", "walrus", "cat"], 150), (["the", "dog"], 30)])


def _ranks_like_the_reference(db: Path, texts: list[str],
                              cases: list[tuple[list[str], int]]) -> None:
    """The SQLite and in-memory stores give the reference BM25's ids and scores, ties
    included, for each (query words, top_k) in ``cases``."""
    store = SqliteVectorStore(db)
    memory = InMemoryVectorStore()
    entries = [entry(make_chunk(f"d{i:03d}", text), [1, 0]) for i, text in enumerate(texts)]
    store.add(entries)
    memory.add(entries)
    documents = [text.split() for text in texts]
    for query, top_k in cases:
        ids, values = _expected(documents, query, top_k)
        for backend in (store, memory):
            got = backend.keyword_query(" ".join(query), top_k=top_k)
            assert [m.chunk.id for m in got] == ids, (backend, query)
            np.testing.assert_allclose([m.raw_score for m in got], values, rtol=1e-9)


def test_repeated_query_words_count_once_per_occurrence(db: Path) -> None:
    store = SqliteVectorStore(db)
    store.add([entry(make_chunk(f"c{i}", text), [1, 0]) for i, text in
               enumerate(["run", "cat", "dog", "cat dog", "eel", "fish", "owl"])])
    once = store.keyword_query("run", top_k=1)[0].raw_score
    # Three words, one stem: FTS5 scores each quoted word as a phrase of its own.
    thrice = store.keyword_query("run Runs running", top_k=1)[0].raw_score
    assert thrice == pytest.approx(3 * once, rel=1e-12)


def test_keyword_query_with_filters_and_small_collections(db: Path) -> None:
    store = SqliteVectorStore(db)
    texts = ["policy lunch break", "policy lunch break lunch", "policy lunch break and more"]
    store.add([entry(make_chunk(f"c{i}", text, {"i": i}), [1, float(i)])
               for i, text in enumerate(texts)])
    matches = store.keyword_query("lunch policy", top_k=5)
    # Words in every chunk keep a positive idf (Lucene's): ranked by tf and length.
    assert [m.chunk.id for m in matches] == ["c1", "c0", "c2"]
    assert all(0.1 < m.raw_score < 1.0 for m in matches)
    filtered = store.keyword_query("lunch", filters=parse_filters({"key": "i", "op": ">",
                                                                   "value": 0}))
    assert [m.chunk.id for m in filtered] == ["c1", "c2"]
    store.add([entry(make_chunk(f"t{i}", "same words"), [1, 0]) for i in range(3)])
    assert [m.chunk.id for m in store.keyword_query("same")] == ["t0", "t1", "t2"]


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

    def work(worker: int) -> None:
        for n in range(30):
            store.add([entry(make_chunk(f"w{worker}-{n}", f"text {n}"), [1.0, float(n)])])
            store.query(Vector(np.array([1, 0], np.float32)), top_k=3)
            store.keyword_query("text")

    run_in_threads(work, 4)
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


def test_nul_characters_in_metadata_mean_the_same_on_every_store(tmp_path: Path) -> None:
    chunk = make_chunk("c1", "word", {"name": "a\x00b"})
    assert chunk.metadata["name"] == "a\ufffdb"
    with SqliteVectorStore(tmp_path / "nul.db") as store:
        store.add([entry(chunk, [1.0, 0.0])])
        query = Vector(np.array([1.0, 0.0], dtype=np.float32))
        for value, expected in (("a", 0), ("a\x00b", 1), ("a\ufffdb", 1)):
            hits = store.query(query, filters=parse_filters({"name": value}))
            assert len(hits) == expected, value


def test_ingesting_does_not_load_the_vector_matrix(tmp_path: Path) -> None:
    path = tmp_path / "lazy.db"
    with SqliteVectorStore(path) as store:
        store.add([entry(make_chunk(f"c{i}", "word"), [1.0, float(i)]) for i in range(5)])
        assert store.count() == 5
        assert store._matrix is None  # nothing searched yet: no vectors held in memory
        hits = store.query(Vector(np.array([1.0, 0.0], dtype=np.float32)), top_k=2)
        assert [h.chunk.id for h in hits] == ["c0", "c1"]
        store.add([entry(make_chunk("c9", "word"), [0.0, 1.0])])
        best = store.query(Vector(np.array([0.0, 1.0], dtype=np.float32)), top_k=1)
        assert best[0].chunk.id == "c9"

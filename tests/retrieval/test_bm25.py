"""The in-memory BM25 index against rank_bm25 and against itself rebuilt from scratch."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from ragloom.retrieval.stemmer import porter_stem
from ragloom.retrieval.tokenize import tokenize
from ragloom.stores.bm25 import BM25Index

VOCAB = ["cell", "cells", "gene", "genes", "protein", "running", "runs", "tumour",
         "virus", "brain", "mouse", "mice", "rna", "dna", "immune", "the", "of"]


class LuceneBM25(BM25Okapi):  # type: ignore[misc]
    """rank_bm25's Okapi scoring with Lucene's idf, ln(1 + (N - n + 0.5) / (n + 0.5)),
    which stays positive where rank_bm25's and FTS5's turn zero or negative."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, freq in nd.items():
            self.idf[word] = math.log(1.0 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


docs_strategy = st.lists(
    st.lists(st.sampled_from(VOCAB), min_size=1, max_size=12).map(" ".join),
    min_size=1, max_size=25,
)
query_strategy = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, query=query_strategy)
def test_scores_equal_rank_bm25_with_lucenes_idf(docs: list[str], query: str) -> None:
    index = BM25Index()
    index.add((str(i), text) for i, text in enumerate(docs))
    reference = LuceneBM25([tokenize(d) for d in docs], k1=1.2, b=0.75)
    # Repeated query words (and words with one stem) count once per occurrence.
    expected = reference.get_scores(tokenize(query))
    got = dict(index.search(query, top_k=len(docs)))
    for i, value in enumerate(expected):
        if value > 0:
            assert got[str(i)] == pytest.approx(value, rel=1e-9)
        else:
            assert str(i) not in got


def test_idf_stays_positive_in_small_collections() -> None:
    index = BM25Index()
    index.add([("a", "gene gene cells"), ("b", "gene"), ("c", "gene cells mouse"), ("d", "rna")])
    assert index.idf("gene") == pytest.approx(math.log(1 + 1.5 / 3.5))  # 3 of 4
    assert index.idf("cell") == pytest.approx(math.log(2.0))  # 2 of 4
    assert index.idf("mous") == pytest.approx(math.log(1 + 3.5 / 1.5))
    assert index.idf("unknown") == 0.0
    hits = index.search("gene", top_k=10)
    assert [i for i, _ in hits] == ["b", "a", "c"]
    assert all(value > 0.1 for _, value in hits)
    # Two texts, a word in one of them: it scores (FTS5's idf gave both 0).
    two = BM25Index()
    two.add([("prices", "the parking permit costs 40 euros a month"),
             ("hours", "the office opens at eight and closes at six")])
    assert two.search("how much does the parking permit cost", 5)[0][0] == "prices"
    assert two.search("parking", 5)[0][1] > 0.5


@settings(max_examples=40, deadline=None)
@given(docs=docs_strategy, removed=st.sets(st.integers(0, 24)), query=query_strategy)
def test_incremental_removes_equal_a_rebuild(
    docs: list[str], removed: set[int], query: str
) -> None:
    incremental = BM25Index()
    incremental.add((str(i), text) for i, text in enumerate(docs))
    incremental.remove(str(i) for i in removed)
    # Re-adding a kept id replaces it: the result must not double-count.
    if docs and 0 not in removed:
        incremental.add([("0", docs[0])])
    rebuilt = BM25Index()
    rebuilt.add((str(i), text) for i, text in enumerate(docs) if i not in removed)
    assert len(incremental) == len(rebuilt)
    got = incremental.search(query, top_k=30)
    want = rebuilt.search(query, top_k=30)
    assert [i for i, _ in got] == [i for i, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want])


def test_allowed_restricts_and_ties_break_by_id() -> None:
    index = BM25Index()
    index.add([("b", "gene therapy"), ("a", "gene therapy"), ("c", "gene cells"), ("d", "mouse")])
    hits = index.search("gene", top_k=10)
    assert [i for i, _ in hits][:2] == ["a", "b"]
    assert "d" not in dict(hits)
    assert [i for i, _ in index.search("gene", top_k=10, allowed=["c", "d", "zz"])] == ["c"]
    assert index.search("gene", top_k=1) == hits[:1]


def test_no_match_unknown_words_and_empty_text() -> None:
    index = BM25Index()
    assert index.search("anything", top_k=5) == []
    index.add([("x", "alpha beta")])
    assert index.search("gamma", top_k=5) == []
    assert index.search("", top_k=5) == []
    assert index.search("!!! ??? 🚀", top_k=5) == []
    assert index.search("alpha", top_k=0) == []


@pytest.mark.parametrize(("word", "stem"), [
    ("caresses", "caress"), ("ponies", "poni"), ("agreed", "agre"), ("hopping", "hop"),
    ("filing", "file"), ("happy", "happi"), ("relational", "relat"), ("generalizations", "gener"),
    ("oscillators", "oscil"), ("effective", "effect"), ("controll", "control"),
    ("running", "run"), ("sky", "sky"), ("a", "a"),
])
def test_porter_stemmer_reference_words(word: str, stem: str) -> None:
    assert porter_stem(word) == stem


def test_tokenizer_matches_fts5_unicode61_remove_diacritics() -> None:
    assert tokenize("Café NAÏVE foo_bar 3.14 Running 🚀 日本語") == [
        "cafe", "naiv", "foo", "bar", "3", "14", "run", "日本語"]


@settings(max_examples=30, deadline=None)
@given(docs=docs_strategy, removed=st.sets(st.integers(0, 24)), query=query_strategy,
       fold=st.sampled_from(["before", "after", "between"]))
def test_compaction_changes_nothing(
    docs: list[str], removed: set[int], query: str, fold: str
) -> None:
    index = BM25Index()
    half = len(docs) // 2
    index.add((str(i), text) for i, text in enumerate(docs[:half]))
    if fold == "before":
        index.compact()
    index.remove(str(i) for i in removed)
    if fold == "between":
        index.compact()
    index.add((str(i), text) for i, text in enumerate(docs) if i >= half and i not in removed)
    if fold == "after":
        index.compact()
    rebuilt = BM25Index()
    rebuilt.add((str(i), text) for i, text in enumerate(docs) if i not in removed)
    assert len(index) == len(rebuilt)
    assert index.search(query, top_k=30) == rebuilt.search(query, top_k=30)


def test_folds_during_a_big_add_keep_every_posting(monkeypatch: pytest.MonkeyPatch) -> None:
    import ragloom.stores.bm25 as bm25_module

    monkeypatch.setattr(bm25_module, "_MERGE_AT", 50)  # fold every few texts
    rng = np.random.default_rng(5)
    words = [f"w{n}" for n in range(300)]
    texts = [(f"t{i:05d}", " ".join(rng.choice(words, size=6))) for i in range(5000)]
    index = BM25Index()
    index.add(texts[:800])
    index.remove(f"t{i:05d}" for i in range(0, 800, 7))
    index.add(texts[800:])  # more than 4,096: folds while adding, new terms included
    index.add([("t00007", "brandnew w1"), ("late", "w299 zzz")])
    kept = [t for t in texts if t[0] not in {f"t{i:05d}" for i in range(0, 800, 7)}]
    rebuilt = BM25Index()
    rebuilt.add([*kept, ("t00007", "brandnew w1"), ("late", "w299 zzz")])
    for query in ("w1 w2 w3", "brandnew", "zzz w299", "w150 w150 w7"):
        assert index.search(query, 25) == rebuilt.search(query, 25)


def _zipf_corpus(seed: int, texts: int, vocabulary: int = 300) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, vocabulary + 1)
    weights /= weights.sum()
    words = rng.choice(vocabulary, size=(texts, 12), p=weights)
    return [(f"t{n:05d}", " ".join(f"w{w}" for w in row)) for n, row in enumerate(words)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pruned_search_equals_scoring_every_posting(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import ragloom.stores.bm25 as bm25

    corpus = _zipf_corpus(seed, 3000)
    index = BM25Index()
    index.add(corpus)
    # Dead postings and an uncompacted delta: pruning reads both kinds of block.
    index.remove([item for item, _ in corpus[::7]])
    index.add([(f"late{n}", text) for n, (_, text) in enumerate(corpus[:40])])
    rng = np.random.default_rng(seed + 100)
    queries = [" ".join(corpus[int(i)][1].split()[:int(k)])
               for i, k in zip(rng.integers(0, len(corpus), 60), rng.integers(2, 9, 60),
                               strict=True)]
    queries += ["w0 w0 w1 w250", "w299 w1 w2 w3 w4 w5", "w0 w1"]  # repeats, rare, common
    pruned_ran = 0
    original = BM25Index._pruned_search

    def counting(self: BM25Index, *args: object) -> object:
        nonlocal pruned_ran
        result = original(self, *args)  # type: ignore[arg-type]
        pruned_ran += result is not None
        return result

    for top_k in (1, 10, 100):
        monkeypatch.setattr(bm25, "_PRUNE_AT", 10**12)
        full = [index.search(query, top_k) for query in queries]
        monkeypatch.setattr(bm25, "_PRUNE_AT", 0)
        monkeypatch.setattr(BM25Index, "_pruned_search", counting)
        pruned = [index.search(query, top_k) for query in queries]
        monkeypatch.setattr(BM25Index, "_pruned_search", original)
        assert pruned == full  # ids, order and scores, bit for bit
    assert pruned_ran > len(queries)  # the pruned path answered most of them


def test_a_selective_filter_scores_only_its_texts_with_the_same_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import ragloom.stores.bm25 as bm25

    corpus = _zipf_corpus(7, 3000)
    index = BM25Index()
    index.add(corpus)
    index.remove([item for item, _ in corpus[::11]])
    allowed = [item for item, _ in corpus[::37]] + ["missing"]
    queries = [" ".join(text.split()[:6]) for _, text in corpus[5:400:13]] + ["w0 w0 w1 w299"]
    calls = 0
    original = BM25Index._scores_at

    def counting(self: BM25Index, *args: object) -> object:
        nonlocal calls
        calls += 1
        return original(self, *args)  # type: ignore[arg-type]

    for top_k in (1, 10, 50):
        monkeypatch.setattr(bm25, "_PRUNE_AT", 10**12)
        full = [index.search(query, top_k, allowed=allowed) for query in queries]
        monkeypatch.setattr(bm25, "_PRUNE_AT", 0)
        monkeypatch.setattr(BM25Index, "_scores_at", counting)
        narrowed = [index.search(query, top_k, allowed=allowed) for query in queries]
        monkeypatch.setattr(BM25Index, "_scores_at", original)
        assert narrowed == full
        assert all(item in set(allowed) for hits in narrowed for item, _ in hits)
    assert calls >= len(queries)  # the narrowed path answered

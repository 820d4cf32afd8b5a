# ruff: noqa: RUF001
"""The keyword tokenizer against SQLite FTS5 itself: the same tokens, folded and
stemmed alike, for real text in many languages and for arbitrary strings."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloom.retrieval.stemmer import porter_stem
from ragloom.retrieval.tokenize import query_terms, tokenize, words

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "data" / "beir" / "scifact"

TEXTS = [
    # English, with digits, hyphens, possessives and stems
    "In the 1990s, COVID-19's 2nd wave? No: the studies ran 3.14 km in 2,000 trials.",
    "Generalizations of relational databases; hopping, filing, caresses and ponies.",
    # German
    "Die Straße ist naß; Größe, Übermäßig, Fußgängerübergänge und Maßstäbe 2020er",
    # French
    "L'élève a mangé des crêpes à Noël ; où est la bibliothèque ? Ça coûte 15 €.",
    # Spanish
    "El niño está en la montaña, ¿verdad? ¡Sí! Años, señoras y pingüinos.",
    # Greek
    "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο. Ἀθῆναι, ΣΟΦΙΑ σοφίας",
    # ligatures and compatibility characters (unicode61 keeps them; NFKD would not)
    "ﬁnance ﬂow oﬃce ﬀ Ⅻ ½ ² ㎏ ｆｕｌｌｗｉｄｔｈ",
    # accents, combining marks, dotted and dotless i
    "naïve café résumé Ångström Zoë e\u0301te\u0301 İstanbul ıspanak Tiếng Việt",
    # CJK, kana, Hangul
    "日本語のテキストです。中文文本，한국어 문장 カタカナ",
    # emoji, symbols, underscores
    "I ❤️ emoji 🚀🎉👍🏽 tests_with_underscore @user #tag $5 100% a+b=c",
    # Cyrillic, Arabic, Hebrew, Devanagari (spacing marks split words in unicode61)
    "Привет, мир! Ёлка. مرحبا بالعالم שלום עולם हिन्दी भाषा",
    # stemmer corner cases on bytes
    "ies sses eed ated yyed x₂ing 日本s straße caféing 1990s 12ing",
]


@pytest.fixture(scope="module")
def fts5() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize="
                 "'porter unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    yield conn
    conn.close()


def fts5_terms(conn: sqlite3.Connection, text: str) -> list[str]:
    """The terms FTS5 indexes for ``text``, in order."""
    conn.execute("DELETE FROM t")
    conn.execute("INSERT INTO t (rowid, x) VALUES (1, ?)", (text,))
    return [term for _, term in sorted(
        (int(offset), str(term)) for term, offset in conn.execute("SELECT term, offset FROM v"))]


@pytest.mark.parametrize("text", TEXTS)
def test_real_text_in_many_languages(fts5: sqlite3.Connection, text: str) -> None:
    assert tokenize(text) == fts5_terms(fts5, text)


def test_the_differences_that_used_to_exist(fts5: sqlite3.Connection) -> None:
    # Words with digits are stemmed, ligatures kept, non-ASCII words stemmed by bytes.
    assert tokenize("1990s ﬁles straße") == ["1990", "ﬁle", "straß"] == fts5_terms(
        fts5, "1990s ﬁles straße")
    assert porter_stem("ies") == "ie" and porter_stem("ated") == "at"


def test_scifact_abstracts(fts5: sqlite3.Connection) -> None:
    if not (SCIFACT / "corpus.jsonl").exists():
        pytest.skip("SciFact is not next to the repository")
    lines = (SCIFACT / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    for line in random.Random(3).sample(lines, 150):
        doc = json.loads(line)
        text = f"{doc['title']}\n\n{doc['text']}"
        assert tokenize(text) == fts5_terms(fts5, text)


_suffixes = st.sampled_from(["s", "es", "ies", "sses", "ed", "eed", "ing", "ational", "ization",
                             "fulness", "iciti", "ement", "ion", "ll", "y", "at", "bl", "e"])
_stems = st.text(alphabet="aeiouybcdlmnrstzwx", max_size=6)
_words = st.tuples(st.sampled_from(["", "ß", "é", "1", "日"]), _stems, _suffixes).map("".join)


@settings(max_examples=120, deadline=None)
@given(word_list=st.lists(_words, min_size=1, max_size=8))
def test_porter_steps_equal_fts5(fts5: sqlite3.Connection, word_list: list[str]) -> None:
    text = " ".join(word_list)
    assert tokenize(text) == fts5_terms(fts5, text)


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_arbitrary_text_equals_fts5(fts5: sqlite3.Connection, text: str) -> None:
    assert tokenize(text) == fts5_terms(fts5, text)


def test_each_folded_word_is_one_fts5_token(fts5: sqlite3.Connection) -> None:
    # The SQLite store queries FTS5 with folded words as phrases: each must come back
    # as exactly the term the in-memory index computes.
    for text in TEXTS:
        for word in words(text):
            assert fts5_terms(fts5, word) == [porter_stem(word)]


def test_query_terms_group_words_by_term() -> None:
    assert query_terms("Running runs RUN the dog, the") == [
        ("run", "running", 3), ("the", "the", 2), ("dog", "dog", 1)]
    assert query_terms("!!! 🚀") == []

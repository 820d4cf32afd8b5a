"""The keyword tokenizer: how text becomes BM25 terms on every store.

It mirrors SQLite FTS5's ``porter unicode61 remove_diacritics 2`` so that keyword
search means the same on the in-memory store and on SQLite:

1. lower-case the text and strip diacritics (``Café`` -> ``cafe``);
2. split it into runs of Unicode letters and digits (``_``, punctuation, symbols
   and emoji separate words);
3. Porter-stem each ASCII word (``studies`` -> ``studi``).

No stop-words are removed, as in FTS5: BM25's idf already gives common words little
weight.
"""

from __future__ import annotations

import re
import unicodedata

from ragloom.retrieval.stemmer import porter_stem

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def strip_diacritics(text: str) -> str:
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def words(text: str) -> list[str]:
    """Lower-case, diacritic-free words of a text, unstemmed."""
    return _WORD.findall(strip_diacritics(text.lower()))


def tokenize(text: str) -> list[str]:
    """The BM25 terms of a text (stemmed words, in order, repeats kept)."""
    return [porter_stem(word) for word in words(text)]

"""The keyword tokenizer: how text becomes BM25 terms on every store.

It is SQLite FTS5's ``porter unicode61 remove_diacritics 2``, token for token, so
keyword search means the same on the in-memory store, the SQLite store's in-memory
copy and FTS5 itself:

1. a token is a run of token characters: ASCII letters and digits, and the non-ASCII
   characters unicode61 counts as letters, numbers or private use; inside a token
   unicode61 also keeps combining diacritics (and then drops them). Everything else
   (``_``, punctuation, symbols, emoji) separates tokens;
2. each character is folded as unicode61 folds it: lower-cased, diacritics removed
   (``Café`` -> ``cafe``), ligatures such as ``ﬁ`` kept;
3. each token is Porter-stemmed as FTS5 stems it (:mod:`ragloom.lexical.stemmer`).

unicode61 has character tables of its own (Unicode 6.1 categories and folding), which
Python's :mod:`unicodedata` (a much later Unicode) does not reproduce. So a non-ASCII
character's class and fold are asked of the SQLite library this process links,
through a private in-memory FTS5 table, once per distinct character; text that is all
ASCII never needs it. Where the linked SQLite has no FTS5 (so no SQLite store either),
:mod:`unicodedata` stands in.

No stop-words are removed, as in FTS5: BM25's idf already gives common words little
weight.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import unicodedata
from collections.abc import Iterable

from ragloom.lexical.stemmer import porter_stem

# A run of characters that may belong to tokens: ASCII letters/digits and anything
# non-ASCII (which the character table then splits further).
_RUN = re.compile(r"[0-9A-Za-z\u0080-\U0010ffff]+")
_ASCII_WORD = re.compile(r"[0-9a-z]+")

#: Distinct terms kept from one keyword query (each costs FTS5 lookups, and SQLite caps
#: a compound SELECT at 500 parts); the first ones.
MAX_QUERY_TERMS = 200

# Character classes in the table: starts (and continues) a token; only continues one
# (a combining diacritic, dropped); separates tokens.
_TOKEN, _INSIDE, _SEPARATOR = 0, 1, 2


class _Unicode61:
    """Class and fold of non-ASCII characters as the linked SQLite's unicode61 has them."""

    def __init__(self) -> None:
        self._table: dict[str, tuple[int, str]] = {}
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._fts5 = True

    def lookup(self, chars: Iterable[str]) -> dict[str, tuple[int, str]]:
        table = self._table
        missing = {char for char in chars if char not in table}
        if missing:
            with self._lock:
                self._learn(sorted(missing - table.keys()))
        return table

    def _learn(self, chars: list[str]) -> None:
        if not chars:
            return
        probed = self._probe(chars) if self._fts5 else None
        for char in chars:
            self._table[char] = probed[char] if probed is not None else _fallback(char)

    def _probe(self, chars: list[str]) -> dict[str, tuple[int, str]] | None:
        """Tokenise ``a{c}a {c}b`` for each character c with FTS5 itself."""
        try:
            conn = self._connection()
        except sqlite3.Error:
            self._fts5 = False
            return None
        found: dict[str, tuple[int, str]] = {}
        usable = [char for char in chars if not 0xD800 <= ord(char) <= 0xDFFF]
        for char in chars:
            found[char] = (_SEPARATOR, "")  # lone surrogates cannot even be stored
        conn.execute("DELETE FROM probe")
        conn.executemany("INSERT INTO probe (rowid, x) VALUES (?, ?)",
                         ((n, f"a{char}a {char}b") for n, char in enumerate(usable)))
        tokens: dict[int, list[tuple[int, str]]] = {}
        for doc, offset, term in conn.execute("SELECT doc, offset, term FROM probe_terms"):
            tokens.setdefault(int(doc), []).append((int(offset), str(term)))
        for n, char in enumerate(usable):
            terms = [term for _, term in sorted(tokens.get(n, []))]
            if len(terms) == 2 and terms[0].startswith("a") and terms[0].endswith("a"):
                fold = terms[0][1:-1]
                found[char] = (_TOKEN, fold) if terms[1] == fold + "b" and fold else (
                    _INSIDE, fold)
        return found

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(":memory:", check_same_thread=False)
            conn.execute("CREATE VIRTUAL TABLE probe USING fts5(x, tokenize="
                         "'unicode61 remove_diacritics 2')")
            conn.execute("CREATE VIRTUAL TABLE probe_terms USING fts5vocab(probe, instance)")
            self._conn = conn
        return self._conn


def _fallback(char: str) -> tuple[int, str]:
    """unicodedata's view, for an SQLite without FTS5: letters, numbers, private use."""
    category = unicodedata.category(char)
    if category[0] in "LN" or category == "Co":
        base = unicodedata.normalize("NFD", char.lower())
        kept = "".join(c for c in base if not unicodedata.combining(c))
        return _TOKEN, kept if len(kept) == 1 else char.lower()
    if unicodedata.combining(char):
        return _INSIDE, ""
    return _SEPARATOR, ""


_UNICODE61 = _Unicode61()


def _split(run: str, table: dict[str, tuple[int, str]], out: list[str]) -> None:
    """Tokens of a run holding non-ASCII characters, character by character."""
    token: list[str] | None = None
    for char in run:
        if char < "\x80":
            kind, fold = _TOKEN, char.lower()
        else:
            kind, fold = table[char]
        if kind == _SEPARATOR or (kind == _INSIDE and token is None):
            if token is not None:
                out.append("".join(token))
                token = None
            continue
        if token is None:
            token = []
        token.append(fold)
    if token is not None:
        out.append("".join(token))


def words(text: str) -> list[str]:
    """The folded tokens of a text (lower-case, diacritics removed), unstemmed."""
    if text.isascii():
        return _ASCII_WORD.findall(text.lower())
    out: list[str] = []
    runs = _RUN.findall(text)
    table = _UNICODE61.lookup(char for run in runs if not run.isascii()
                              for char in run if char >= "\x80")
    for run in runs:
        if run.isascii():
            out.append(run.lower())
        else:
            _split(run, table, out)
    return out


def tokenize(text: str) -> list[str]:
    """The BM25 terms of a text (stemmed tokens, in order, repeats kept)."""
    return [porter_stem(word) for word in words(text)]


def query_terms(text: str) -> list[tuple[str, str, int]]:
    """A keyword query's distinct terms, in order of first use: (term, one folded word
    that stems to it, how often the query uses the term). At most
    :data:`MAX_QUERY_TERMS` terms are kept, the first ones."""
    first: dict[str, str] = {}
    counts: dict[str, int] = {}
    for word in words(text):
        term = porter_stem(word)
        if term in counts:
            counts[term] += 1
        elif len(counts) < MAX_QUERY_TERMS:
            first[term], counts[term] = word, 1
    return [(term, first[term], count) for term, count in counts.items()]


def strip_diacritics(text: str) -> str:
    """``text`` folded as the tokenizer folds words (separators kept as they are)."""
    if text.isascii():
        return text
    table = _UNICODE61.lookup(char for char in text if char >= "\x80")
    return "".join(char if char < "\x80" or table[char][0] == _SEPARATOR else table[char][1]
                   for char in text)

"""The Porter (1980) stemmer exactly as SQLite FTS5's ``porter`` tokenizer applies it.

Keyword search stems with this on every store we ship, so the in-memory BM25 index
and SQLite's FTS5 agree on every term ("running" and "runs" both become "run").
FTS5's variant differs from the textbook in details that matter for agreement:

* it works on the UTF-8 *bytes* of a token and stems every token of 3 to 64 bytes,
  digits and non-ASCII letters included (a non-ASCII byte is a consonant), so
  "1990s" becomes "1990" and "straße" keeps its "e" (its "ß" is two consonants);
* a rule's suffix must leave a non-empty stem, and steps 1a and 1b add length
  conditions of their own ("ies" alone stays "ie", "ated" becomes "at");
* step 1b's double-consonant rule counts "y" as a consonant.

The result is a ``str``; a stem that cuts a multi-byte character (possible only in
contrived tokens) keeps its stray bytes as surrogate escapes, so it stays distinct.
Pure Python, no dependency; results are cached per word.
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("aeiou")
_MAX_BYTES = 64


def _consonants(word: str) -> list[bool]:
    """Per letter: consonant? (y is a vowel after a consonant, as Porter says)."""
    flags: list[bool] = []
    previous = False
    for char in word:
        vowel = char in _VOWELS or (char == "y" and previous)
        previous = not vowel
        flags.append(previous)
    return flags


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: the number of vowel-consonant sequences."""
    m = 0
    previous_vowel = False
    for consonant in _consonants(stem):
        if consonant and previous_vowel:
            m += 1
        previous_vowel = not consonant
    return m


def _has_vowel(stem: str) -> bool:
    # FTS5 counts any "y" after the first letter; equivalent to Porter's *v*.
    return any(char in _VOWELS or (char == "y" and i > 0) for i, char in enumerate(stem))


def _cvc(stem: str) -> bool:
    """*o: ends consonant-vowel-consonant, the last not w, x or y."""
    if not stem or stem[-1] in "wxy":
        return False
    flags = _consonants(stem)
    return len(flags) >= 3 and flags[-3] and not flags[-2] and flags[-1]


def _rule(word: str, rules: tuple[tuple[str, str], ...], min_measure: int) -> str:
    """The first rule whose suffix ends ``word`` (leaving a stem) decides, even if its
    condition fails; none further is tried."""
    for suffix, replacement in rules:
        if len(word) > len(suffix) and word.endswith(suffix):
            stem = word[: len(word) - len(suffix)]
            return stem + replacement if _measure(stem) > min_measure else word
    return word


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("logi", "log"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"),
    ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
    ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
    ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
)
_STEP3 = (
    ("ical", "ic"), ("ness", ""), ("icate", "ic"), ("iciti", "ic"), ("ful", ""),
    ("ative", ""), ("alize", "al"),
)
# Longest first where one suffix ends another ("ement", "ment", "ent").
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)


def _step1a(word: str) -> str:
    if not word.endswith("s"):
        return word
    if word.endswith("es"):
        n = len(word)
        if (n > 4 and word.endswith("sses")) or (n > 3 and word[-3] == "i"):
            return word[:-2]
        return word[:-1]
    return word if word.endswith("ss") else word[:-1]


def _step1b(word: str) -> str:
    if len(word) > 3 and word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ed", "ing"):
        if len(word) > len(suffix) and word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            return _step1b2(word[: -len(suffix)])
    return word


def _step1b2(word: str) -> str:
    if len(word) > 2 and word.endswith(("at", "bl", "iz")):
        return word + "e"
    last = word[-1]
    if (len(word) > 1 and last not in _VOWELS and last not in "lsz"
            and last == word[-2]):
        return word[:-1]
    if _measure(word) == 1 and _cvc(word):
        return word + "e"
    return word


def _step4(word: str) -> str:
    for suffix in sorted(_STEP4, key=len, reverse=True):
        if len(word) > len(suffix) and word.endswith(suffix):
            stem = word[: len(word) - len(suffix)]
            if suffix == "ion" and not stem.endswith(("s", "t")):
                return word
            return stem if _measure(stem) > 1 else word
    return word


def _step5(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            word = stem
    if len(word) > 1 and word.endswith("ll") and _measure(word[:-1]) > 1:
        word = word[:-1]
    return word


def _stem_bytes(word: str) -> str:
    """The steps over a token whose characters stand for its UTF-8 bytes."""
    word = _step1a(word)
    word = _step1b(word)
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    word = _rule(word, _STEP2, 0)
    word = _rule(word, _STEP3, 0)
    word = _step4(word)
    return _step5(word)


@lru_cache(maxsize=200_000)
def porter_stem(word: str) -> str:
    """The FTS5 Porter stem of a folded (lower-case) token."""
    if word.isascii():
        if not 3 <= len(word) <= _MAX_BYTES:
            return word
        return _stem_bytes(word)
    raw = word.encode("utf-8", "surrogateescape")
    if not 3 <= len(raw) <= _MAX_BYTES:
        return word
    # latin-1 maps each byte to one character: the steps see bytes, as FTS5's do.
    stem = _stem_bytes(raw.decode("latin-1")).encode("latin-1")
    return stem.decode("utf-8", "surrogateescape")

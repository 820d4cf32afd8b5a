"""Sentence boundaries by regular expression (no nltk).

A sentence ends at ``.``, ``!`` or ``?`` (possibly repeated and followed by closing
quotes or brackets) followed by whitespace and a character that can start a sentence.
A period after a known abbreviation ("Dr.", "e.g.") or a single initial ("J.")
does not end a sentence. A blank line always does.
"""

from __future__ import annotations

import re

from ragloom.chunking.base import Span

_ABBREVIATION_WORDS = """mr mrs ms dr prof sr jr st mt vs etc e.g i.e cf al fig figs no nos
vol vols p pp ch sec eq eqs approx inc ltd co corp dept est jan feb mar apr jun jul aug sep
sept oct nov dec u.s u.k a.m p.m ph.d gen col lt sgt capt rev hon ave blvd rd"""
ABBREVIATIONS = frozenset(_ABBREVIATION_WORDS.split())

_END = re.compile(r"""[.!?]+["'\u2019\u201d)\]]*(?=\s)""")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_WORD_BEFORE = re.compile(r"([\w.]+)$")


def _is_abbreviation(text: str, period: int) -> bool:
    """Whether the period at ``period`` closes an abbreviation or an initial."""
    match = _WORD_BEFORE.search(text, max(0, period - 20), period)
    if match is None:
        return False
    word = match.group(1).lower().strip(".")
    if len(word) == 1 and word.isalpha():
        return True
    return word in ABBREVIATIONS


def _starts_sentence(char: str) -> bool:
    return char.isupper() or char.isdigit() or char in "\"'([\u2018\u201c" or not char.isalpha()


def sentence_starts(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """Offsets in ``text[start:end]`` where a new sentence begins (excluding ``start``)."""
    end = len(text) if end is None else end
    cuts: set[int] = set()
    for match in _END.finditer(text, start, end):
        following = match.end()
        while following < end and text[following].isspace():
            following += 1
        if following >= end:
            continue
        single_period = match.group().rstrip("\"')]\u2019\u201d") == "."
        if single_period and _is_abbreviation(text, match.start()):
            continue
        if _starts_sentence(text[following]):
            cuts.add(following)
    for match in _BLANK_LINE.finditer(text, start, end):
        following = match.end()
        while following < end and text[following].isspace():
            following += 1
        if following < end:
            cuts.add(following)
    return sorted(cuts)


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """Contiguous spans covering ``text[start:end]``, one per sentence (with trailing space)."""
    end = len(text) if end is None else end
    if start >= end:
        return []
    bounds = [start, *sentence_starts(text, start, end), end]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]

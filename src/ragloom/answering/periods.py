"""Editions of the same document: an undated question is about the newest one.

A knowledge base often holds this year's price list beside last year's, the new
fares beside the old ones. "band d council tax" asks for today's charge; "band d
council tax in 2025/26" names its year. When the question names no year (and does
not look back: "last year", "previous"), evidence from an older edition of a
document yields to a close match from a newer edition of the same document: one
whose name (file name and title, years left out) shares most of its words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragloom.answering.sentences import Sentence, document_names
from ragloom.types import QueryMatch

__all__ = ["newest_first"]

_YEAR = re.compile(r"(?<!\d)(19\d\d|20\d\d)(?!\d)")
_LOOKS_BACK = re.compile(r"\b(last|previous|prior|old|older|former|earlier|before|past|"
                         r"was|were|did|used to)\b", re.I)
_WORD = re.compile(r"[a-z]+")
# A newer edition's sentence must score at least this share of the best one's.
CLOSE = 0.85
SAME_SERIES = 0.5


def _edition(match: QueryMatch) -> tuple[int, frozenset[str]]:
    """The newest year a document's names carry (0 if none), and their other words."""
    names = document_names(match).lower()
    years = [int(y) for y in _YEAR.findall(names)]
    return (max(years) if years else 0), frozenset(_WORD.findall(names))


def _same_series(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a and b) and len(a & b) / len(a | b) >= SAME_SERIES


def newest_first(question: str, evidence: Sequence[Sentence],
                 sources: Sequence[QueryMatch]) -> list[Sentence]:
    """``evidence`` with a close match from the newest edition first, when the best
    sentence comes from an older edition and the question names no year."""
    ranked = list(evidence)
    if len(ranked) < 2 or _YEAR.search(question) or _LOOKS_BACK.search(question):
        return ranked
    best = ranked[0]
    if not 1 <= best.number <= len(sources):
        return ranked
    year, words = _edition(sources[best.number - 1])
    if not year:
        return ranked
    newer: Sentence | None = None
    newest = year
    for sentence in ranked[1:]:
        if sentence.score < best.score * CLOSE or not 1 <= sentence.number <= len(sources):
            continue
        other_year, other_words = _edition(sources[sentence.number - 1])
        if other_year > newest and _same_series(words, other_words):
            newer, newest = sentence, other_year
    if newer is None:
        return ranked
    return [newer, *(s for s in ranked if s is not newer)]

"""Comparisons: each side retrieved on its own, the two facts side by side, the
arithmetic shown, both sources cited.

The forms read from the question:

* two sides: "how much lighter is A than B", "difference between A and B", "compare
  A and B", "A vs B", "is X cheaper in A or B";
* a target: "did X hit its target", "by how much did X beat its target";
* a change: "how much did X go up (from A to B)", "... up from ...";
* a superlative over a table: "cheapest venue", "which is the lightest".

Each side's figure comes from a passage about that side (its text, title or file
name), from the cell labelled with the side or the attribute when the sentence is a
table record, else the figure nearest the attribute. When both figures share a unit
(durations in any time unit), the difference is computed and shown with the unit.

One side's figure is found by :mod:`.facts`; changes, targets and superlatives are
read by :mod:`.trends`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragloom.answering.corpus import Corpus
from ragloom.answering.facts import (
    _COMPARATIVES,
    _SUPERLATIVES,
    _TARGET_WORDS,
    Fact,
    _attribute,
    _cite,
    _own,
    _words,
    fact_for,
    row_label,
)
from ragloom.answering.grounding import content_words
from ragloom.answering.question import Question
from ragloom.answering.result import EngineAnswer, refusal
from ragloom.answering.sentences import SentenceRanker
from ragloom.answering.trends import _against_target, _change_in_place, _extreme
from ragloom.answering.values import difference
from ragloom.types import QueryMatch

_THAN = re.compile(r"\b(?:is|are|was|were|does|do|did)\s+(?:the\s+)?(.+?)\s+"
                   r"(?:(?:more|less)\s+(?:\w+\s+)?|\w+er\s+)?than\s+(?:the\s+|a\s+)?(.+?)"
                   r"\s*\??$", re.I)  # "lighter than", "more expensive than"
_THAN_AFTER = re.compile(r"\bthan\s+(?:the\s+|a\s+|in\s+)?(.+?)\s*\??$", re.I)
_BETWEEN = re.compile(r"\bbetween\s+(?:the\s+)?(.+?)\s+and\s+(?:the\s+)?(.+?)"
                      r"(?:\s+(?:in|for|on|by|when)\s+.*)?\s*\??$", re.I)
_VERSUS = re.compile(r"^\s*(?:compare\s+)?(?:the\s+)?(.+?)\s+(?:vs\.?|versus|and|with|to)\s+"
                     r"(?:the\s+)?(.+?)\s*\??$", re.I)
_COMPARED = re.compile(r"\b(?:does|is|was|do|are|did)\s+(?:the\s+)?(.+?)\s+compared\s+(?:to|with)"
                       r"\s+(?:the\s+)?(.+?)\s*\??$", re.I)
_PLACE = re.compile(r"^(.*?)\s+\b(?:in|at|for|from|on)\s+(?:the\s+)?(.+)$", re.I)
_LEAD = re.compile(r"^\s*(?:in|at|for|from|on|with|of)\s+(?:the\s+)?", re.I)
_OR = re.compile(r"\b(?:in|at|for|from)?\s*(?:the\s+)?([\w' -]+?)\s+or\s+(?:in\s+|at\s+)?"
                 r"(?:the\s+)?([\w' -]+?)\s*\??$", re.I)
_THAN_BEFORE = re.compile(r"\bhow (?:many|much) (?:more|fewer|less)\s+(.+?)\s+(?:(?:did|does|do|"
                          r"has|have|was|were|are|is)\b.*?)?\bthan\s+(?:the\s+|a\s+)?(?:year "
                          r"before|previous year|last year|year earlier|before|previously)"
                          r"\s*\??$", re.I)
_TARGET = re.compile(r"\bdid\s+(?:the\s+)?(.+?)\s+(?:hit|meet|reach|exceed|beat|miss|make|"
                     r"achieve)\b", re.I)
_CHANGE = re.compile(r"\bhow much (?:did|has|have|does|do)\s+(?:the\s+)?(.+?)\s+(?:go up|gone up|"
                     r"go down|increase|rise|grow|fall|drop|decrease|change|improve)\w*"
                     r"(?:\s+(?:from|between)\s+(.+?)\s+(?:to|and)\s+(.+?))?\s*\??$", re.I)

_PER_PERIOD = re.compile(r"\s+(?:a|an|per|each|every)\s+(day|week|month|year|hour|night|"
                         r"session|visit)\s*$", re.I)


# How a table's column names the period: "Monthly (direct debit)", "Annual fee".
_PERIODIC = {"day": "daily", "week": "weekly", "month": "monthly", "year": "annual"}


def _split_side(side: str) -> tuple[str, list[str]]:
    """A side's name (up to its last number or code, or after its last "in"/"at")
    and the words that say what is compared."""
    side = _LEAD.sub("", side)
    period = _PER_PERIOD.search(side)
    if period and period.start() > 0:
        # "all inclusive a month": the side is "all inclusive", "month" is compared.
        name, rest = _split_side(side[: period.start()])
        word = period.group(1).lower()
        return name, [*rest, _PERIODIC.get(word, word)]
    place = _PLACE.match(side)
    if place and not any(ch.isdigit() for ch in place.group(2)):
        return place.group(2).strip(), _words(place.group(1))
    tokens = side.split()
    last = max((i for i, t in enumerate(tokens) if any(ch.isdigit() for ch in t)), default=-1)
    if last >= 0 and last < len(tokens) - 1:
        return " ".join(tokens[: last + 1]), _words(" ".join(tokens[last + 1:]))
    return side, []


_PREPOSITION = re.compile(r"\s(?:in|at|for|from|on)\s", re.I)


def _parallel(question: str, sides: tuple[str, str]) -> tuple[tuple[str, str], list[str]]:
    """The two sides made alike, and the words they share that say what is compared:

    * "does wheal rose cost … than …": after "does", the side's last word is the
      verb that says what is compared ("cost"), not part of its name;
    * "… than chapel loft in high season": when the first side has no place or time
      of its own, a trailing "in …" of the second side qualifies both ("high season"
      is the column, "chapel loft" the side).
    """
    first, second = sides
    shared: list[str] = []
    if not _PREPOSITION.search(f" {first} ") and not any(ch.isdigit() for ch in first):
        tokens = first.split()
        if len(tokens) >= 2 and re.search(rf"\b(?:does|do|did)\s+(?:the\s+)?"
                                          rf"{re.escape(first)}", question, re.I):
            first, shared = " ".join(tokens[:-1]), [tokens[-1].lower()]
        place = _PLACE.match(_LEAD.sub("", second))
        if place and not any(ch.isdigit() for ch in place.group(2)):
            second = place.group(1).strip()
            shared += _words(place.group(2))
    return (first, second), shared


def sides_of(question: str) -> tuple[str, str] | None:
    """The two things a comparison is between, from its form."""
    for pattern in (_BETWEEN, _COMPARED, _THAN):
        found = pattern.search(question)
        if found:
            return found.group(1).strip(" ,"), found.group(2).strip(" ,?")
    body = re.sub(r"^\s*(how does|how do|what is the difference|compare|comparison of)\s+",
                  "compare ", question.strip(), flags=re.I)
    if re.match(r"^\s*compare\b", body, re.I):
        found = _VERSUS.search(body)
        if found:
            first = re.sub(r"^\s*compare\s+", "", found.group(1), flags=re.I)
            return first.strip(" ,"), found.group(2).strip(" ,?")
    found = _OR.search(question)
    if found and re.match(r"^\s*(is|are|was|which|who|where)\b", question, re.I):
        first = found.group(1).strip()
        place = _PLACE.match(first)
        return (place.group(2) if place else first.split()[-1]), found.group(2).strip()
    return None


def _like(first: Fact | None, names: Sequence[str]) -> list[str]:
    """The words of the first fact's row label that say what kind of row it is ("adult"
    of "Adult swim"), not which side it is (its name or code)."""
    if first is None:
        return []
    sides = {w for name in names for w in content_words(name)}
    return [w for w in row_label(first.sentence.text) if w.isalpha() and w not in sides]


def compare(question: Question, sources: list[QueryMatch], corpus: Corpus | None,
            ranker: SentenceRanker) -> EngineAnswer | None:
    """A comparison answer, or None when the question's form is not one of them."""
    target = _TARGET.search(question.text)
    if target and any(w in question.text.lower() for w in _TARGET_WORDS):
        return _against_target(question, target.group(1), sources, corpus, ranker)
    change = _CHANGE.search(question.text)
    if change and change.group(2):
        subject = change.group(1)
        return _two_sides(question, (f"{subject} {change.group(2)}",
                                     f"{subject} {change.group(3)}"), sources, corpus, ranker,
                          later_second=True)
    if change:
        return _change_in_place(question, change.group(1), sources, corpus, ranker)
    before = _THAN_BEFORE.search(question.text)
    if before:
        # "how many more bookings than the year before": the figure and the earlier one,
        # usually in one sentence ("Bookings: 412 (371 the year before)").
        in_place = _change_in_place(question, before.group(1), sources, corpus, ranker)
        if in_place is not None:
            return in_place
    superlative = next((w for w in _SUPERLATIVES if re.search(rf"\b{w}\b", question.text,
                                                              re.I)), None)
    if superlative:
        return _extreme(question, superlative, sources, corpus, ranker)
    sides = sides_of(question.text)
    if sides is None:
        return None
    return _two_sides(question, sides, sources, corpus, ranker)


_MORE_LESS = re.compile(r"\b((?:more|less) \w+) than\b", re.I)


def _comparative(question: str) -> str | None:
    """The comparative the question uses ("thinner", "more expensive"), if any."""
    found = _MORE_LESS.search(question)
    if found:
        return found.group(1).lower()
    for word in _COMPARATIVES:
        if word not in ("more", "less") and re.search(rf"\b{word}\b", question, re.I):
            return word
    return None


def _two_sides(question: Question, sides: tuple[str, str], sources: list[QueryMatch],
               corpus: Corpus | None, ranker: SentenceRanker, *,
               later_second: bool = False) -> EngineAnswer:
    sides, shared = _parallel(question.text, sides)
    split = [_split_side(s) for s in sides]
    names = [name for name, _ in split]
    attribute, lower_wins = _attribute(question, names)
    attribute = list(dict.fromkeys(shared + [w for _, rest in split for w in rest]
                                   + attribute))
    attribute = [w for w in attribute if _PERIODIC.get(w) not in attribute]
    required = _own(question, list(sides))
    first = fact_for(names[0], attribute, corpus, sources, ranker, other=names[1],
                     required=required)
    second = fact_for(names[1], attribute, corpus, sources, ranker, other=names[0],
                      taken=first.sentence if first is not None else None, required=required,
                      like=_like(first, names))
    facts = [first, second]
    missing = [name for name, fact in zip(names, facts, strict=True) if fact is None]
    if missing:
        return refusal("no figure found for " + " and ".join(missing), sources,
                       kind="comparison")
    found = [f for f in facts if f is not None]
    merged, numbers = _cite(found, sources)
    lines = [f"{f.side}: {f.value} [{n}]" for f, n in zip(found, numbers, strict=True)]
    delta = difference(found[0].figure, found[1].figure)
    answer = "; ".join(lines) + "."
    if delta:
        one, two = found[0].figure.value, found[1].figure.value
        if later_second:
            direction = "up" if two > one else "down"
            answer += f" Change: {direction} {delta}."
        elif one == two:
            answer += " They are the same."
        else:
            winner = (found[0] if (one < two) == bool(lower_wins) else found[1]).side
            asked = _comparative(question.text) if lower_wins is not None else None
            answer += f" Difference: {delta} ({winner} is " + (
                f"{asked})." if asked else ("the lower" if lower_wins else "the higher") + (
                    " one)." if lower_wins is not None else " figure)."))
            if question.yes_no and asked and not later_second and \
                    re.search(r"\bthan\b", question.text, re.I):
                # "is A thinner than B": the first side is the one asked about.
                answer = ("Yes" if winner == found[0].side else "No") + \
                    f", {found[0].side} is " + ("" if winner == found[0].side else "not ") + \
                    f"{asked} than {found[1].side}. " + answer
    return EngineAnswer(
        answer=answer, sources=merged, kind="comparison", strategy="comparison",
        quote=found[0].sentence.text, citations=sorted(set(numbers)), origin="extract",
        points=[{"text": f.sentence.text, "citation": n, "value": f.value}
                for f, n in zip(found, numbers, strict=True)])

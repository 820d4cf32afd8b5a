"""One side of a comparison: the figure of a named thing for an attribute, from a
passage about it.

A side's figure comes from a passage about that side (its text, title or file name)
that holds the thing measured ("garden waste" of "garden waste cost") in the section
the figure is in; from the cell labelled with the side or the measure when the
sentence is a table record, the value of a one-cell line ("Boil time (1 litre): 2
minutes 30 seconds"), the clause naming the side the most, else the figure nearest
the attribute. A column's label gives a bare value its sign or unit ("price_gbp").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragloom.answering.corpus import Corpus
from ragloom.answering.gate import term_present
from ragloom.answering.gather import merge_sources
from ragloom.answering.grounding import content_words
from ragloom.answering.question import Question
from ragloom.answering.sentences import Sentence, SentenceRanker, is_heading
from ragloom.answering.values import (
    Figure,
    cell_for,
    cells,
    figures,
    first_figure,
    holds,
    labelled,
    with_label_unit,
)
from ragloom.retrieval.stemmer import porter_stem
from ragloom.types import QueryMatch

_WEIGHT = ("weight", "weighs", "kg", "heavy", "mass")
_PRICE = ("price", "cost", "costs", "fee", "charge", "hire", "gbp", "rate", "quote", "paid")
_TIME = ("time", "speed", "minutes", "seconds", "takes", "boil")
_LENGTH = ("length", "long", "duration", "distance", "range")
_THICKNESS = ("thickness", "thick", "depth", "mm")
_WIDTH = ("width", "wide", "breadth")
#: Comparative -> (attribute words, True when the smaller figure "wins").
_COMPARATIVES: dict[str, tuple[tuple[str, ...], bool]] = {
    "lighter": (_WEIGHT, True), "heavier": (_WEIGHT, False),
    "cheaper": (_PRICE, True), "dearer": (_PRICE, False), "pricier": (_PRICE, False),
    "expensive": (_PRICE, False), "quicker": (_TIME, True), "faster": (_TIME, True),
    "slower": (_TIME, False), "longer": (_LENGTH, False), "shorter": (_LENGTH, True),
    "bigger": ((), False), "larger": ((), False), "smaller": ((), True),
    "higher": ((), False), "lower": ((), True), "more": ((), False), "less": ((), True),
    "fewer": ((), True), "greater": ((), False), "thinner": (_THICKNESS, True),
    "thicker": (_THICKNESS, False), "wider": (_WIDTH, False), "narrower": (_WIDTH, True),
}
_SUPERLATIVES: dict[str, tuple[tuple[str, ...], bool]] = {
    "cheapest": (_PRICE, True), "dearest": (_PRICE, False), "lightest": (_WEIGHT, True),
    "heaviest": (_WEIGHT, False), "quickest": (_TIME, True), "fastest": (_TIME, True),
    "slowest": (_TIME, False), "longest": (_LENGTH, False), "shortest": (_LENGTH, True),
    "biggest": ((), False), "largest": ((), False), "smallest": ((), True),
    "highest": ((), False), "lowest": ((), True), "most expensive": (_PRICE, False),
    "least expensive": (_PRICE, True), "thinnest": (_THICKNESS, True),
    "thickest": (_THICKNESS, False), "widest": (_WIDTH, False), "narrowest": (_WIDTH, True),
}
#: Words that name a measure rather than the thing measured.
_MEASURES = frozenset(_WEIGHT + _PRICE + _TIME + _LENGTH + _THICKNESS + _WIDTH)
_TARGET_WORDS = ("target", "goal", "budget", "forecast", "plan", "quota")
_FILLER = frozenset({"one", "ones", "model", "version", "much", "how", "what", "which",
                     "difference", "differ", "compare", "compared", "comparison", "versus",
                     "vs", "between", "go", "went", "gone", "up", "down", "last", "year",
                     # the change asked about, not the thing that changed
                     "grow", "grew", "growth", "increase", "increased", "rise", "rose",
                     "fall", "fell", "drop", "dropped", "decrease", "decreased", "change",
                     "changed", "improve", "improved"})


@dataclass(frozen=True)
class Fact:
    side: str
    value: str
    figure: Figure
    sentence: Sentence
    match: QueryMatch


def _words(text: str) -> list[str]:
    return [w for w in content_words(text) if w not in _FILLER]


def _holds(text: str, words: Sequence[str]) -> bool:
    return bool(words) and holds(text, words)


def _about(match: QueryMatch, side: str) -> bool:
    chunk = match.chunk
    names = " ".join([chunk.text, chunk.source.replace("-", " ").replace("_", " "),
                      str(chunk.metadata.get("title", "") or "")])
    words = _words(side)
    codes = [c for c in re.findall(r"\w*\d\w*", side.lower())]
    squashed = re.sub(r"[\s_-]+", "", names.lower())
    if codes and not all(re.sub(r"[\s_-]+", "", c) in squashed for c in codes):
        return False
    if not words:
        return bool(codes)
    held = set(content_words(names))
    stems = {porter_stem(w) for w in held}
    return sum(term_present(w, held, stems) for w in words) * 2 >= len(words)


def _titled(match: QueryMatch, side: str) -> bool:
    """Whether the passage's document is named after ``side`` (file name or title)."""
    chunk = match.chunk
    name = " ".join([chunk.source.replace("-", " ").replace("_", " "),
                     str(chunk.metadata.get("title", "") or "")]).lower()
    tokens = [t for t in re.findall(r"\w+", side.lower()) if t not in _FILLER]
    return bool(tokens) and all(re.search(rf"(?<![a-z0-9]){re.escape(t)}(?![a-z0-9])", name)
                                for t in tokens)


def _labelled(sentence: str, attribute: Sequence[str]) -> str:
    """The cell labelled with a word of the measure ("hire per hour"), else with any
    word of the attribute."""
    measures = [w for w in attribute if w in _MEASURES]
    others = [w for w in attribute if w not in _MEASURES]
    if measures and others:
        # "off peak a month": the "Monthly" price, not the "Annual (paid in advance)" one.
        named = labelled(sentence, others)
        if any(ch.isdigit() for ch in named):
            return named
    return (labelled(sentence, measures) if measures else "") or (
        labelled(sentence, attribute) if attribute else "")


def _value(sentence: str, side: str, attribute: Sequence[str], named: bool,
           other: str = "") -> str:
    value = cell_for(sentence, side) or _labelled(sentence, attribute)
    # With its column's unit a price of 1899 is "£1899", not the year 1899.
    if value and first_figure(with_label_unit(sentence, value), side) is not None:
        return value
    if cells(sentence) and not named:
        return ""
    single = re.match(r"^([^:;]{1,60}):\s*(.+)$", sentence)
    if single and not cells(sentence):
        # "Boil time (1 litre): 2 minutes 30 seconds": the value's first part, not the
        # label's figure ("72 Wh, up to 14 hours" -> "72 Wh").
        head = re.split(r"(?<!\d),|,(?!\d)|;|\(", single.group(2))[0].strip()
        if re.match(r"[\u00a3$\u20ac]?\s?\d", head) and first_figure(head, side) is not None:
            return head
    found = figures(sentence, avoid=side)
    if not found:
        return ""
    lowered = sentence.lower()
    if len(found) > 1:  # "30% on bicycles and 40% on parts": the side's own clause
        # A comma inside a number ("£16,200") does not end a clause.
        clauses = re.split(r"(?<!\d),|,(?!\d)|;|\band\b|\bwhile\b|\bbut\b|\bwhereas\b",
                           sentence)
        words, others = _words(side), _words(other)
        scored = [(sum(_holds(c, [w]) for w in words) - sum(_holds(c, [w]) for w in others), c)
                  for c in clauses if figures(c, avoid=side)]
        best = max((n for n, _ in scored), default=0)
        own = [c for n, c in scored if n == best]
        if best and len(own) == 1:  # the one clause naming the side the most
            return figures(own[0], avoid=side)[0].text
    spots = [lowered.find(w) for w in attribute if lowered.find(w) >= 0]
    if spots:
        return min(found, key=lambda f: min(abs(lowered.find(f.text.lower()) - s)
                                            for s in spots)).text
    return found[0].text


def _section(passage: str, sentence: str) -> str:
    """The part of ``passage`` from the last heading before ``sentence`` to its end."""
    at = passage.find(sentence[:40])
    if at < 0:
        return passage
    start = 0
    offset = 0
    for line in passage[:at].splitlines(keepends=True):
        if line.strip() and (line.lstrip().startswith("#") or is_heading(line.strip())):
            start = offset
        offset += len(line)
    return passage[start: at + len(sentence)]


_OTHER_THAN_MONEY = re.compile(r"\d\s*(?:kg|g|grams?|km|mm|cm|m|metres?|miles?|h|hrs?|"
                               r"hours?|mins?|minutes?|seconds?|w|wh|kwh|watts?|l|litres?|"
                               r"ml|gb|mb|tb|%|rpm)\b", re.I)
_MONEY_SIGN = re.compile(r"[\u00a3$\u20ac]")
_MONEY_WORD = re.compile(r"\d\s*(?:p|pence|pounds?|dollars?|euros?|gbp|usd|eur)\b", re.I)


def _fits_measure(value: str, measures: Sequence[str]) -> bool:
    """Whether a value can be the measure compared: a price is money, not a weight or a
    time; a weight, a time or a length is not money."""
    if any(w in _PRICE for w in measures):
        # Money has its sign, its word or its pence ("£5.40", "85p", "7.99"): a bare
        # "4" of "Year 4" is no price.
        money = bool(_MONEY_SIGN.search(value) or _MONEY_WORD.search(value)
                     or re.fullmatch(r"\d[\d,]*\.\d\d", value.strip()))
        return money and not _OTHER_THAN_MONEY.search(value)
    if measures:
        return not _MONEY_SIGN.search(value)
    return True


def _row_named_first(ranked: list[Sentence], side: str) -> list[Sentence]:
    """``ranked`` with the table rows that mention ``side`` only in a later cell (a
    "What it includes: everything in Adult all inclusive" column) after the others:
    a row is about the thing its first cells name."""
    words = _words(side)
    rows = [cells(sentence.text) for sentence in ranked]
    named = [len(row) >= 2 and any(_holds(f"{label} {value}", words) for label, value in row[:3])
             for row in rows]
    if not any(named):
        return ranked  # no row names the side in its first cells: nothing to prefer
    later = [len(row) >= 2 and not first for row, first in zip(rows, named, strict=True)]
    order = sorted(range(len(ranked)), key=lambda i: later[i])
    return [ranked[i] for i in order]


def fact_for(side: str, attribute: Sequence[str], corpus: Corpus | None,
             sources: list[QueryMatch], ranker: SentenceRanker, *,
             other: str = "", taken: Sentence | None = None,
             required: Sequence[str] = (), like: Sequence[str] = ()) -> Fact | None:
    """The figure of ``side`` for ``attribute``, from a passage about ``side`` that holds
    the question's own ``required`` words (e.g. "new bin") and the words of ``attribute``
    that name the thing measured (e.g. "garden waste" of "garden waste cost"). A prose
    sentence holds the ``required`` words itself, or a word of the measure ("Pay the £22
    charge" under "Ordering a new bin")."""
    thing = [w for w in attribute if w not in _MEASURES and w not in required]
    measures = [w for w in attribute if w in _MEASURES]
    # The search names the side, what is measured and one word of the measure: all the
    # synonyms of "price" would drown "adult swim" in fees and charges.
    searched = list(dict.fromkeys([*required, *thing, *measures[:1]])) or list(attribute)
    query = f"{side} {' '.join(searched)}".strip()
    passages = merge_sources(list(corpus.search(query, top_k=10)) if corpus else [], sources)
    about = {n: _about(m, side) and holds(m.chunk.text, [*required, *thing])
             for n, m in enumerate(passages, start=1)}
    titled = {n for n, m in enumerate(passages, start=1) if _titled(m, side)}
    ranked = _row_named_first(ranker.rank(query, passages)[:60], side)
    # A sentence or row naming the question's own words ("a swim") first; then one
    # the passage's words tie to them. Among those, a row labelled like the other
    # side's fact (``like``: "Adult" for "Adult swim"): like is compared with like.
    strict = {id(s) for s in ranked if required and _holds(s.text, required)}
    ranked = sorted(ranked, key=lambda s: (id(s) not in strict, -_alike(s.text, like)))
    for sentence in ranked:
        if not about.get(sentence.number) or (titled and sentence.number not in titled
                                              and not cell_for(sentence.text, side)):
            continue
        named = _holds(sentence.text, _words(side))
        if taken is not None and sentence.text == taken.text and not (
                named or cell_for(sentence.text, side)):
            continue
        if other and _holds(sentence.text, _words(other)) and not named:
            continue
        if attribute and not (any(_holds(sentence.text, [w]) for w in attribute)
                              or labelled(sentence.text, attribute)
                              or cell_for(sentence.text, side)):
            continue
        if required and not cells(sentence.text) and not _holds(sentence.text, required) \
                and not any(_holds(sentence.text, [w]) for w in measures):
            continue
        if thing and not holds(_section(passages[sentence.number - 1].chunk.text,
                                        sentence.text), thing):
            continue
        value = with_label_unit(sentence.text, _value(sentence.text, side, attribute, named,
                                                      other))
        if value and not _fits_measure(value, measures):
            continue  # "8.1 kg" is not what "more expensive" compares
        figure = first_figure(value, side) if value else None
        if figure is not None:
            return Fact(side, value, figure, sentence, passages[sentence.number - 1])
    return None


def row_label(text: str) -> list[str]:
    """The words of a record's first cell value, its row label ("adult", "swim" of
    "Ticket: Adult swim; Price: £5.40"); none for prose."""
    record = cells(text)
    return content_words(record[0][1]) if record else []


def _alike(text: str, like: Sequence[str]) -> float:
    """How alike the row label of ``text`` and ``like`` are: the share of their stems
    they have in common ("Adult" is closer to "Adult swim" than "Family (2 adults and 2
    juniors)" is); 0 for prose or no ``like``."""
    label = {porter_stem(w) for w in row_label(text)}
    wanted = {porter_stem(w) for w in like}
    if not label or not wanted:
        return 0.0
    return len(label & wanted) / len(label | wanted)


def _cite(facts: Sequence[Fact], sources: list[QueryMatch]) -> tuple[list[QueryMatch],
                                                                   list[int]]:
    merged = merge_sources(sources, [f.match for f in facts])
    index = {m.chunk.id: n for n, m in enumerate(merged, start=1)}
    return merged, [index[f.match.chunk.id] for f in facts]


def _own(question: Question, sides: Sequence[str]) -> list[str]:
    """The question's words beyond its sides and its comparison words."""
    side_words = {w for s in sides for w in content_words(s)}
    return [t for t in question.terms if t not in side_words and t not in _COMPARATIVES
            and t not in _SUPERLATIVES and t not in _FILLER and t not in _TARGET_WORDS
            and not t.isdigit()]


def _attribute(question: Question, sides: Sequence[str]) -> tuple[list[str], bool | None]:
    text = question.text.lower()
    side_words = {w for s in sides for w in content_words(s)}
    extra: list[str] = []
    lower_wins: bool | None = None
    for word, (words, low) in {**_COMPARATIVES, **_SUPERLATIVES}.items():
        if re.search(rf"\b{word}\b", text):
            extra.extend(words)
            lower_wins = low if lower_wins is None else lower_wins
    own = [t for t in question.terms if t not in side_words and t not in _COMPARATIVES
           and t not in _SUPERLATIVES and t not in _FILLER and t not in _TARGET_WORDS]
    return list(dict.fromkeys(own + extra)), lower_wins

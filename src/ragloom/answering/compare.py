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
from ragloom.answering.result import EngineAnswer, refusal
from ragloom.answering.sentences import Sentence, SentenceRanker, is_heading, split_sentences
from ragloom.answering.values import (
    Figure,
    cell_for,
    cells,
    difference,
    figures,
    first_figure,
    holds,
    labelled,
    show,
    with_label_unit,
)
from ragloom.retrieval.stemmer import porter_stem
from ragloom.types import QueryMatch

_WEIGHT = ("weight", "weighs", "kg", "heavy", "mass")
_PRICE = ("price", "cost", "costs", "fee", "charge", "hire", "gbp", "rate", "quote", "paid")
_TIME = ("time", "speed", "minutes", "seconds", "takes", "boil")
_LENGTH = ("length", "long", "duration", "distance", "range")
#: Comparative -> (attribute words, True when the smaller figure "wins").
_COMPARATIVES: dict[str, tuple[tuple[str, ...], bool]] = {
    "lighter": (_WEIGHT, True), "heavier": (_WEIGHT, False),
    "cheaper": (_PRICE, True), "dearer": (_PRICE, False), "pricier": (_PRICE, False),
    "expensive": (_PRICE, False), "quicker": (_TIME, True), "faster": (_TIME, True),
    "slower": (_TIME, False), "longer": (_LENGTH, False), "shorter": (_LENGTH, True),
    "bigger": ((), False), "larger": ((), False), "smaller": ((), True),
    "higher": ((), False), "lower": ((), True), "more": ((), False), "less": ((), True),
    "fewer": ((), True), "greater": ((), False),
}
_SUPERLATIVES: dict[str, tuple[tuple[str, ...], bool]] = {
    "cheapest": (_PRICE, True), "dearest": (_PRICE, False), "lightest": (_WEIGHT, True),
    "heaviest": (_WEIGHT, False), "quickest": (_TIME, True), "fastest": (_TIME, True),
    "slowest": (_TIME, False), "longest": (_LENGTH, False), "shortest": (_LENGTH, True),
    "biggest": ((), False), "largest": ((), False), "smallest": ((), True),
    "highest": ((), False), "lowest": ((), True), "most expensive": (_PRICE, False),
    "least expensive": (_PRICE, True),
}
_THAN = re.compile(r"\b(?:is|are|was|were|does|do|did)\s+(?:the\s+)?(.+?)\s+"
                   r"(?:(?:more|less|\w+er)\s+)?than\s+(?:the\s+|a\s+)?(.+?)\s*\??$", re.I)
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
_TARGET = re.compile(r"\bdid\s+(?:the\s+)?(.+?)\s+(?:hit|meet|reach|exceed|beat|miss|make|"
                     r"achieve)\b", re.I)
_CHANGE = re.compile(r"\bhow much (?:did|has|have|does|do)\s+(?:the\s+)?(.+?)\s+(?:go up|gone up|"
                     r"go down|increase|rise|grow|fall|drop|decrease|change|improve)\w*"
                     r"(?:\s+(?:from|between)\s+(.+?)\s+(?:to|and)\s+(.+?))?\s*\??$", re.I)
#: Words that name a measure rather than the thing measured.
_MEASURES = frozenset(_WEIGHT + _PRICE + _TIME + _LENGTH)
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


def _split_side(side: str) -> tuple[str, list[str]]:
    """A side's name (up to its last number or code, or after its last "in"/"at")
    and the words that say what is compared."""
    side = _LEAD.sub("", side)
    place = _PLACE.match(side)
    if place and not any(ch.isdigit() for ch in place.group(2)):
        return place.group(2).strip(), _words(place.group(1))
    tokens = side.split()
    last = max((i for i, t in enumerate(tokens) if any(ch.isdigit() for ch in t)), default=-1)
    if last >= 0 and last < len(tokens) - 1:
        return " ".join(tokens[: last + 1]), _words(" ".join(tokens[last + 1:]))
    return side, []


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
    return (labelled(sentence, measures) if measures else "") or (
        labelled(sentence, attribute) if attribute else "")


def _value(sentence: str, side: str, attribute: Sequence[str], named: bool,
           other: str = "") -> str:
    value = cell_for(sentence, side) or _labelled(sentence, attribute)
    if value and first_figure(value, side) is not None:
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


def fact_for(side: str, attribute: Sequence[str], corpus: Corpus | None,
             sources: list[QueryMatch], ranker: SentenceRanker, *,
             other: str = "", taken: Sentence | None = None,
             required: Sequence[str] = ()) -> Fact | None:
    """The figure of ``side`` for ``attribute``, from a passage about ``side`` that holds
    the question's own ``required`` words (e.g. "new bin") and the words of ``attribute``
    that name the thing measured (e.g. "garden waste" of "garden waste cost"). A prose
    sentence holds the ``required`` words itself, or a word of the measure ("Pay the £22
    charge" under "Ordering a new bin")."""
    query = f"{side} {' '.join(attribute)}".strip()
    passages = merge_sources(list(corpus.search(query, top_k=10)) if corpus else [], sources)
    thing = [w for w in attribute if w not in _MEASURES and w not in required]
    measures = [w for w in attribute if w in _MEASURES]
    about = {n: _about(m, side) and holds(m.chunk.text, [*required, *thing])
             for n, m in enumerate(passages, start=1)}
    titled = {n for n, m in enumerate(passages, start=1) if _titled(m, side)}
    for sentence in ranker.rank(query, passages)[:60]:
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
        figure = first_figure(value, side) if value else None
        if figure is not None:
            return Fact(side, value, figure, sentence, passages[sentence.number - 1])
    return None


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
    superlative = next((w for w in _SUPERLATIVES if re.search(rf"\b{w}\b", question.text,
                                                              re.I)), None)
    if superlative:
        return _extreme(question, superlative, sources, corpus, ranker)
    sides = sides_of(question.text)
    if sides is None:
        return None
    return _two_sides(question, sides, sources, corpus, ranker)


def _two_sides(question: Question, sides: tuple[str, str], sources: list[QueryMatch],
               corpus: Corpus | None, ranker: SentenceRanker, *,
               later_second: bool = False) -> EngineAnswer:
    split = [_split_side(s) for s in sides]
    names = [name for name, _ in split]
    attribute, lower_wins = _attribute(question, names)
    attribute = list(dict.fromkeys([w for _, rest in split for w in rest] + attribute))
    required = _own(question, list(sides))
    first = fact_for(names[0], attribute, corpus, sources, ranker, other=names[1],
                     required=required)
    second = fact_for(names[1], attribute, corpus, sources, ranker, other=names[0],
                      taken=first.sentence if first is not None else None, required=required)
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
            answer += f" Difference: {delta} ({winner} is the " + (
                "lower" if lower_wins else "higher") + (
                " one)." if lower_wins is not None else " figure).")
    return EngineAnswer(
        answer=answer, sources=merged, kind="comparison", strategy="comparison",
        quote=found[0].sentence.text, citations=sorted(set(numbers)), origin="extract",
        points=[{"text": f.sentence.text, "citation": n, "value": f.value}
                for f, n in zip(found, numbers, strict=True)])


def _change_in_place(question: Question, subject: str, sources: list[QueryMatch],
                     corpus: Corpus | None, ranker: SentenceRanker) -> EngineAnswer | None:
    """"How much did X go up": a sentence holding X's figure and the one before it."""
    passages = merge_sources(list(corpus.search(question.text, top_k=8)) if corpus else [],
                             sources)
    for sentence in ranker.rank(question.text, passages)[:20]:
        if not _holds(sentence.text, _words(subject)[:2]):
            continue
        found = _change_pair(sentence.text)
        if len(found) >= 2 and found[0].same_kind(found[1]):
            merged, numbers = _cite([Fact(subject, found[0].text, found[0], sentence,
                                          passages[sentence.number - 1])], sources)
            delta = show(abs(found[0].value - found[1].value), found[0])
            return EngineAnswer(
                answer=f"{delta} [{numbers[0]}] \u2014 \u201c{sentence.text}\u201d",
                sources=merged, kind="comparison", strategy="comparison",
                quote=sentence.text, citations=numbers, origin="extract")
    return None


_UP_FROM = re.compile(r"(?:up|down|rise|rose|fell|fall|increase|decrease|grew|growth|drop)\w*"
                      r"\s+(?:\w+\s+){0,2}?from\s+", re.I)


def _change_pair(text: str) -> list[Figure]:
    """The new figure and the old one: "6.8, up from 6.3"; "from 2.1 to 2.4"."""
    marker = _UP_FROM.search(text)
    if marker:
        before = figures(text[: marker.start()])
        after = figures(text[marker.end():])
        if before and after:
            return [before[-1], after[0]]
    ranged = re.search(r"\bfrom\s+(.+?)\s+to\s+(.+?)(?:[,.;]|$)", text)
    if ranged:
        old, new = figures(ranged.group(1)), figures(ranged.group(2))
        if old and new:
            return [new[0], old[0]]
    return figures(text)


def _extreme(question: Question, word: str, sources: list[QueryMatch], corpus: Corpus | None,
             ranker: SentenceRanker) -> EngineAnswer | None:
    """The row with the lowest or highest figure of the attribute, among table rows."""
    attribute, lower_wins = _attribute(question, [])
    passages = merge_sources(list(corpus.search(question.text, top_k=15)) if corpus else [],
                             sources)
    terms = [t for t in question.terms if t not in _SUPERLATIVES and t not in _FILLER]
    rows: list[tuple[int, Figure, str, QueryMatch]] = []
    for match in passages:
        for text in split_sentences(match.chunk.text):
            value = _labelled(text, attribute) if cells(text) else ""
            figure = first_figure(value) if value else None
            if figure is not None:
                # Rows of the table the question names: its columns hold its words.
                header = " ".join(label for label, _ in cells(text))
                rows.append((sum(holds(header, [t]) for t in terms), figure, text, match))
    fit = max((r[0] for r in rows), default=0)
    rows = [r for r in rows if r[0] == fit]
    if len(rows) < 2:
        return None
    best = (min if lower_wins else max)(rows, key=lambda r: r[1].value)
    _, figure, text, match = best
    merged = merge_sources(sources, [match])
    number = [m.chunk.id for m in merged].index(match.chunk.id) + 1
    label = cells(text)[0][1]
    return EngineAnswer(
        answer=f"{label}: {figure.text} [{number}] \u2014 \u201c{text}\u201d",
        sources=merged, kind="comparison", strategy="comparison", quote=text,
        citations=[number], origin="extract")


def _year(match: QueryMatch) -> int:
    chunk = match.chunk
    names = f"{chunk.source} {chunk.metadata.get('title', '') or ''}"
    years = [int(y) for y in re.findall(r"(?<!\d)((?:19|20)\d{2})(?!\d)", names)]
    return max(years, default=0)


def _target_fact(sentence: Sentence, subject: str) -> tuple[Figure, Figure] | None:
    goal_text = labelled(sentence.text, _TARGET_WORDS)
    actual_text = ""
    if goal_text:
        actual_text = next((v for label, v in cells(sentence.text)
                            if not any(w in label.lower() for w in _TARGET_WORDS)
                            and first_figure(v) is not None), "")
    found = figures(sentence.text, avoid=subject)
    if not goal_text and len(found) >= 2:
        lowered = sentence.text.lower()

        def after_target(figure: Figure) -> bool:
            at = lowered.find(figure.text.lower())
            return any(w in lowered[max(0, at - 12): at] for w in _TARGET_WORDS)

        goal_index = next((i for i, f in enumerate(found) if after_target(f)), len(found) - 1)
        goal_text = found[goal_index].text
        actual_text = next(f.text for i, f in enumerate(found) if i != goal_index)
    actual, goal = first_figure(actual_text), first_figure(goal_text)
    if actual is None or goal is None or not actual.same_kind(goal):
        return None
    return actual, goal


def _against_target(question: Question, subject: str, sources: list[QueryMatch],
                    corpus: Corpus | None, ranker: SentenceRanker) -> EngineAnswer:
    """Did the subject reach its target: the latest figures when the question names no
    period (the newest document about it)."""
    query = f"{subject} target"
    passages = merge_sources(list(corpus.search(query, top_k=8)) if corpus else [], sources)
    found: list[tuple[int, int, Sentence, Figure, Figure]] = []
    for rank, sentence in enumerate(ranker.rank(question.text, passages)[:30]):
        if not _holds(sentence.text, _words(subject)[:1]) and not cell_for(sentence.text,
                                                                            subject):
            continue
        pair = _target_fact(sentence, subject)
        if pair is not None:
            found.append((_year(passages[sentence.number - 1]), -rank, sentence, *pair))
    if not found:
        return refusal(f"no figure with a target found for {subject}", sources,
                       kind="comparison")
    _, _, sentence, actual, goal = max(found, key=lambda item: (item[0], item[1]))
    merged = merge_sources(sources, [passages[sentence.number - 1]])
    number = [m.chunk.id for m in merged].index(passages[sentence.number - 1].chunk.id) + 1
    verdict = "Yes" if actual.value >= goal.value else "No"
    gap = show(abs(actual.value - goal.value), actual)
    how = "above" if actual.value >= goal.value else "short of"
    answer = (f"{verdict}: {subject} reached {actual.text} against a target of "
              f"{goal.text}, {gap} {how} it [{number}] \u2014 \u201c{sentence.text}\u201d")
    return EngineAnswer(answer=answer, sources=merged, kind="comparison",
                        strategy="comparison", quote=sentence.text, citations=[number],
                        origin="extract")

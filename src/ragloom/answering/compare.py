"""Comparisons: each side retrieved on its own, the two facts side by side, the
arithmetic shown, both sources cited.

"How much lighter is A than B", "difference between A and B", "compare A and B",
"A vs B": the two sides are read from the question's form; the measured attribute is
what the question says beyond the two names. Each side is searched separately and its
value taken from the best sentence that names it and holds a quantity. When both
values share a unit, the difference is computed. "Did X hit its target" compares X's
figure with its target, from the sentence or table row that holds both.
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
from ragloom.answering.sentences import Sentence, SentenceRanker
from ragloom.answering.spans import _MONEY, _QUANTITY, table_value
from ragloom.retrieval.stemmer import porter_stem
from ragloom.types import QueryMatch

_THAN = re.compile(r"\b(?:is|are|was|were|does|do|did)\s+(?:the\s+)?(.+?)\s+(?:\w+\s+)?than\s+"
                   r"(?:the\s+|a\s+)?(.+?)\s*\??$", re.I)
_BETWEEN = re.compile(r"\bbetween\s+(?:the\s+)?(.+?)\s+and\s+(?:the\s+)?(.+?)"
                      r"(?:\s+(?:in|for|on|by|when)\s+.*)?\s*\??$", re.I)
_VERSUS = re.compile(r"(?:compare\s+(?:the\s+)?)?(.+?)\s+(?:vs\.?|versus|and|with|to)\s+"
                     r"(?:the\s+)?(.+?)\s*\??$", re.I)
_TARGET = re.compile(r"\bdid\s+(?:the\s+)?(.+?)\s+(?:hit|meet|reach|exceed|beat|miss|make|"
                     r"achieve)\b", re.I)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_TARGET_WORDS = ("target", "goal", "budget", "forecast", "plan", "quota")


@dataclass(frozen=True)
class Fact:
    side: str
    value: str
    sentence: Sentence
    match: QueryMatch


def sides_of(question: str) -> tuple[str, str] | None:
    """The two things a comparison is between, from its form."""
    for pattern in (_BETWEEN, _THAN):
        found = pattern.search(question)
        if found:
            return found.group(1).strip(" ,"), found.group(2).strip(" ,?")
    body = re.sub(r"^\s*(how does|how do|what is the difference|compare|comparison of)\s+",
                  "compare ", question.strip(), flags=re.I)
    found = _VERSUS.search(body)
    if found and re.match(r"^\s*compare\b", body, re.I):
        first = re.sub(r"^\s*compare\s+", "", found.group(1), flags=re.I)
        return first.strip(" ,"), found.group(2).strip(" ,?")
    return None


def _value(text: str) -> float | None:
    found = _NUMBER.search(text)
    if not found:
        return None
    try:
        return float(found.group().replace(",", ""))
    except ValueError:
        return None


def _unit(text: str) -> str:
    found = _NUMBER.search(text)
    tail = text[found.end():] if found else text
    head = text[: found.start()] if found else ""
    symbol = re.findall(r"[£$€%]", head + tail)
    words = re.findall(r"[a-z°]+", tail.lower())
    return (symbol[0] if symbol else "") + (words[0] if words else "")


def _names(text: str, side: str) -> bool:
    words = set(content_words(text))
    stems = {porter_stem(w) for w in words}
    parts = content_words(side)
    if any(ch.isdigit() for ch in side):
        codes = re.findall(r"\w*\d\w*", side.lower())
        if not all(re.search(rf"(?<![\w.]){re.escape(c)}(?!\w)", text.lower()) for c in codes):
            return False
    return all(term_present(p, words, stems) for p in parts) if parts else False


def _quantity(question: str, text: str, avoid: str = "") -> str:
    cell = table_value(question, text)
    if cell and _NUMBER.search(cell):
        return cell
    found = [m.group().strip() for m in _MONEY.finditer(text)] or [
        m.group().strip() for m in _QUANTITY.finditer(text) if _NUMBER.search(m.group())]
    found = [f for f in found if f.lower() not in avoid.lower()]
    return found[0] if found else ""


def fact_for(side: str, attribute: str, question: str, corpus: Corpus | None,
             sources: list[QueryMatch], ranker: SentenceRanker) -> Fact | None:
    query = f"{side} {attribute}".strip()
    passages = corpus.search(query, top_k=8) if corpus is not None else []
    passages = merge_sources(list(passages), sources)
    for sentence in ranker.rank(query, passages):
        if not _names(sentence.text, side):
            continue
        value = _quantity(f"{attribute} {side}", sentence.text, avoid=side)
        if value:
            return Fact(side, value, sentence, passages[sentence.number - 1])
    return None


def _difference(first: Fact, second: Fact) -> str:
    a, b = _value(first.value), _value(second.value)
    if a is None or b is None or _unit(first.value) != _unit(second.value):
        return ""
    delta = abs(a - b)
    text = f"{delta:.6g}"
    number = _NUMBER.search(first.value)
    unit = first.value[number.end():].strip() if number else ""
    prefix = re.match(r"^\s*([£$€])", first.value)
    shown = f"{prefix.group(1) if prefix else ''}{text}{(' ' + unit) if unit else ''}"
    bigger = first.side if a > b else second.side
    if a == b:
        return f"Both are {first.value}: no difference."
    return (f"Difference: {shown} ({first.value} \u2212 {second.value} in absolute terms; "
            f"{bigger} has the higher figure).")


def _cited(facts: Sequence[Fact], sources: list[QueryMatch]) -> tuple[list[QueryMatch],
                                                                    dict[str, int]]:
    merged = merge_sources(sources, [f.match for f in facts])
    index = {m.chunk.id: n for n, m in enumerate(merged, start=1)}
    return merged, {f.side: index[f.match.chunk.id] for f in facts}


def compare(question: Question, sources: list[QueryMatch], corpus: Corpus | None,
            ranker: SentenceRanker) -> EngineAnswer | None:
    """A comparison answer, or None when the question's sides cannot be read."""
    target = _TARGET.search(question.text)
    if target and any(w in question.text.lower() for w in _TARGET_WORDS):
        return _against_target(question, target.group(1), sources, corpus, ranker)
    sides = sides_of(question.text)
    if sides is None:
        return None
    side_words = set(content_words(sides[0])) | set(content_words(sides[1]))
    attribute = " ".join(t for t in question.terms if t not in side_words)
    facts = [fact_for(side, attribute, question.text, corpus, sources, ranker)
             for side in sides]
    missing = [side for side, fact in zip(sides, facts, strict=True) if fact is None]
    if missing:
        return refusal("no figure found for " + " and ".join(missing), sources,
                       kind="comparison")
    found = [f for f in facts if f is not None]
    merged, numbers = _cited(found, sources)
    lines = [f"{f.side}: {f.value} [{numbers[f.side]}]" for f in found]
    difference = _difference(found[0], found[1])
    answer = "; ".join(lines) + "." + (f" {difference}" if difference else "")
    return EngineAnswer(
        answer=answer, sources=merged, kind="comparison", strategy="comparison",
        quote=found[0].sentence.text, citations=sorted(set(numbers.values())),
        origin="extract", points=[{"text": f.sentence.text, "citation": numbers[f.side],
                                   "value": f.value} for f in found])


def _against_target(question: Question, subject: str, sources: list[QueryMatch],
                    corpus: Corpus | None, ranker: SentenceRanker) -> EngineAnswer:
    query = f"{subject} target actual"
    passages = merge_sources(list(corpus.search(query, top_k=8)) if corpus else [], sources)
    for sentence in ranker.rank(question.text, passages):
        if not _names(sentence.text, subject):
            continue
        numbers = [m.group().strip() for m in _QUANTITY.finditer(sentence.text)
                   if _NUMBER.search(m.group()) and m.group().strip().lower()
                   not in subject.lower()]
        target_cell = table_value("target goal budget forecast plan quota", sentence.text)
        if len(numbers) < 2:
            continue
        goal = target_cell if target_cell and _NUMBER.search(target_cell) else numbers[-1]
        actual = next((n for n in numbers if n != goal), numbers[0])
        a, g = _value(actual), _value(goal)
        if a is None or g is None:
            continue
        merged = merge_sources(sources, [passages[sentence.number - 1]])
        number = [m.chunk.id for m in merged].index(passages[sentence.number - 1].chunk.id) + 1
        verdict = "Yes" if a >= g else "No"
        gap = a - g
        sign = "+" if gap >= 0 else "\u2212"
        answer = (f"{verdict}: {subject} reached {actual} against a target of {goal} "
                  f"({sign}{abs(gap):.6g}) [{number}] \u2014 \u201c{sentence.text}\u201d")
        return EngineAnswer(answer=answer, sources=merged, kind="comparison",
                            strategy="comparison", quote=sentence.text, citations=[number],
                            origin="extract")
    return refusal(f"no figure with a target found for {subject}", sources, kind="comparison")

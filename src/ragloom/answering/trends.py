"""Comparisons over time and over a table: how much a figure changed, whether it
reached its target, and the row with the lowest or highest figure."""

from __future__ import annotations

import re

from ragloom.answering.corpus import Corpus
from ragloom.answering.facts import (
    _FILLER,
    _SUPERLATIVES,
    _TARGET_WORDS,
    Fact,
    _attribute,
    _cite,
    _holds,
    _labelled,
    _words,
)
from ragloom.answering.gather import merge_sources
from ragloom.answering.question import Question
from ragloom.answering.result import EngineAnswer, refusal
from ragloom.answering.sentences import Sentence, SentenceRanker, split_sentences
from ragloom.answering.values import (
    Figure,
    cell_for,
    cells,
    figures,
    first_figure,
    holds,
    labelled,
    show,
)
from ragloom.types import QueryMatch


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
            # The arithmetic is shown: the difference is in no sentence of the passage.
            sums = f"{found[0].text} \u2212 {found[1].text}"
            return EngineAnswer(
                answer=f"{delta} ({sums}) [{numbers[0]}] \u2014 \u201c{sentence.text}\u201d",
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

"""Two-step questions: answer the first step, search again with what it found.

"What day are the bins emptied at Oakfield Community Hall?" needs two facts from two
files: the hall is in Millfield (a venue list), and Millfield's bins go out on
Tuesday (a council guide). When the best evidence is about the question's subject but
lacks what is asked (no value of the asked kind, or the question's other words), its
values (a record's cells, the names it holds that the question does not) are bridges:
each is searched for together with the missing words, and the first sentence that
names the bridge and holds the asked value answers, citing both steps. The number of
bridges tried is bounded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from itertools import pairwise

from ragloom.answering.corpus import Corpus
from ragloom.answering.gate import term_present
from ragloom.answering.gather import merge_sources
from ragloom.answering.grounding import content_words
from ragloom.answering.periods import newest_first
from ragloom.answering.question import Question
from ragloom.answering.result import EngineAnswer
from ragloom.answering.sentences import Sentence, SentenceRanker, document_names
from ragloom.answering.spans import (
    answer_span,
    asked_measure,
    measure_cue,
    states_measure,
    value_kind,
)
from ragloom.answering.values import cells
from ragloom.retrieval.stemmer import porter_stem
from ragloom.types import QueryMatch

MAX_BRIDGES = 3
_FLAGS = frozenset({"yes", "no", "true", "false"})
#: A cell value longer than this is a phrase, not a name to search for.
MAX_NAME_WORDS = 4
#: Words either side of a bridge that may say what it is.
NEXT_TO = 2
#: Passages read for each bridge.
SECOND_TOP_K = 12
#: First-step sentences tried for a question with a relative clause.
MAX_FIRST_STEPS = 2
_PLACE_LABELS = ("area", "ward", "district", "zone", "region", "location", "street",
                 "address", "town", "village", "neighbourhood", "neighborhood", "city")
_NAME = re.compile(r"\b[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*")


def _present(word: str, text: str) -> bool:
    held = set(content_words(text))
    return term_present(word, held, {porter_stem(w) for w in held})


def names_bridge(sentence: str, bridge: str, asked: Sequence[str] = ()) -> bool:
    """Whether ``sentence`` names ``bridge`` itself: as a whole cell value, or as words
    not run on into a longer name ("Millfield" is not "Millfield Green"). A name run
    on by a word the question asks about is the asked thing at the bridge
    ("Harbourside Library" for "the library in Harbourside")."""
    if any(value.strip().lower() == bridge.lower() for _, value in cells(sentence)):
        return True
    for found in re.finditer(rf"(?<![\w-]){re.escape(bridge)}(?![\w-])", sentence, re.I):
        after = sentence[found.end():]
        before = sentence[: found.start()]
        # A capitalised word next to it (not a sentence's first word) extends the name.
        following = re.match(r"\s+([A-Z][\w'-]*)", after)
        if following and not _present_in(following.group(1), asked):
            continue
        if re.search(r"[\w,]\s+[A-Z][\w'-]*\s+$", before):
            continue
        return True
    return False


def _present_in(word: str, asked: Sequence[str]) -> bool:
    stem = porter_stem(word.lower())
    return any(porter_stem(a) == stem for a in asked)


def _phrases(words: Sequence[str], sentence: str) -> int:
    """How many pairs of consecutive ``words`` the sentence writes side by side."""
    lowered = sentence.lower()
    return sum(1 for a, b in pairwise(words)
               if re.search(rf"\b{re.escape(a)}\w*\W+{re.escape(b)}", lowered))


#: Share of the question's words the two steps together must hold: a chain that never
#: meets "rose" does not answer "trelowen price for a rose bush".
MIN_COVERAGE = 0.8


def _covers(question: Question, texts: Sequence[str],
            stated: AbstractSet[str] = frozenset()) -> bool:
    """Whether ``texts`` (both steps and their documents' names) hold enough of the
    question's words (``stated``: words held by what the texts state, "far" by a
    distance)."""
    terms = list(question.terms)
    joined = " ".join(texts)
    held = sum(1 for term in terms if term in stated or _present(term, joined))
    return not terms or held >= MIN_COVERAGE * len(terms)


def missing_words(question: Question, sentence: str) -> list[str]:
    """The question's key terms the sentence lacks."""
    return [t for t in question.terms if not _present(t, sentence)]


def bridges(question: Question, sentence: str) -> list[str]:
    """Values of the first step that may lead to the answer, places first. A record's
    labels are never bridges, and a long cell ("none on site: park in Harbour Road car
    park") is a phrase: the names it holds are the bridges."""
    asked = question.text.lower()
    found: list[tuple[int, str]] = []
    record = cells(sentence)
    for label, value in record:
        if (value.lower() in asked or not re.search(r"[A-Za-z]", value)
                or value.strip().lower() in _FLAGS
                or len(value.split()) > MAX_NAME_WORDS):
            continue
        place = any(word in label.lower() for word in _PLACE_LABELS)
        found.append((0 if place else 2, value.strip()))
    for text in [value for _, value in record] if record else [sentence]:
        for match in _NAME.finditer(text):
            name = match.group(0)
            if match.start() == 0 and (not record or " " in text.strip()):
                # a sentence's (or a phrase's) first word is capitalised anyway
                name = name.split(" ", 1)[1] if " " in name else ""
            if (not name or name.lower() in _FLAGS
                    or (record and sum(ch.isalpha() for ch in name) < 3)):
                continue  # a flag, or a size in a list ("XS, S, M, L"), is no name
            if name.lower() not in asked and not any(name in v for _, v in found):
                found.append((1, name))
    terms = {porter_stem(t) for t in question.terms}
    ordered = [value for _, value in sorted(
        found, key=lambda item: (item[0], not _qualified(item[1], sentence, terms)))]
    return list(dict.fromkeys(ordered))[:MAX_BRIDGES]


def _qualified(bridge: str, sentence: str, terms: set[str]) -> bool:
    """Whether the sentence writes a question word next to ``bridge`` ("our nearest vet
    is Fernbrook Veterinary Centre", "a Zipmo S9 e-scooter"): the bridge is then the
    thing the question asks about, not a place it passes through."""
    at = sentence.find(bridge)
    if at < 0:
        return False
    before = re.findall(r"[A-Za-z]+", sentence[:at])[-NEXT_TO:]
    after = re.findall(r"[A-Za-z]+", sentence[at + len(bridge):])[:NEXT_TO]
    return any(porter_stem(w.lower()) in terms for w in [*before, *after])


def _titled_by(match: QueryMatch, bridge: str, first: QueryMatch | None = None) -> bool:
    """Whether a passage's document is named after the bridge: its model code ("a
    Calder WD814" -> the WD814 manual, whose rows do not repeat the code), or every
    word of a name."""
    codes = [w for w in re.findall(r"[a-z0-9-]+", bridge.lower())
             if len(w) >= 3 and re.search(r"[a-z]", w) and re.search(r"\d", w)]
    names = document_names(match).lower()
    if not codes:
        # A place or maker another document is named after ("Fernmouth Leisure Pool"
        # -> fernmouth-leisure-pool.xlsx, whose price rows do not repeat the name); the
        # first step's own document is not a second step.
        if first is None or match.chunk.source == first.chunk.source:
            return False
        words = content_words(bridge)
        held = set(content_words(re.sub(r"[-_.]+", " ", names)))
        return bool(words) and bridge[:1].isupper() and all(w in held for w in words)
    return all(re.search(rf"(?<![a-z0-9]){re.escape(c)}(?![a-z0-9])", names) for c in codes)


def needs_second_step(question: Question, best: Sentence) -> bool:
    """Whether the best evidence is about the subject but lacks the asked value."""
    kind = value_kind(question.text)
    lacks_value = kind != "other" and not answer_span(question.text, best.text)
    return lacks_value and bool(missing_words(question, best.text))


def second_step(question: Question, first: Sentence, sources: list[QueryMatch],
                corpus: Corpus | None, ranker: SentenceRanker,
                asked: Sequence[str] | None = None) -> EngineAnswer | None:
    """The answer through a bridge of ``first``, or None when no bridge leads to one.

    ``asked``: the words of what is asked of the bridge, when the question says more
    than that (its relative clause led to ``first``); by default the question's words
    ``first`` lacks."""
    if corpus is None:
        return None
    missing = missing_words(question, first.text)
    needed = missing
    if asked is not None:
        missing = [w for w in asked if not _present(w, first.text)]
        needed = list(asked)
    origin = sources[first.number - 1] if 0 < first.number <= len(sources) else None
    # "how far" is held by "Range: up to 45 km": the unit says the word.
    cue = measure_cue(question.text)
    cue_words, cue_units = cue if cue is not None else (set(), re.compile(r"(?!)"))
    measure = asked_measure(question.text)
    measure_name = [measure[0]] if measure is not None else []
    for bridge in bridges(question, first.text):
        query = " ".join([*(missing or needed), *measure_name, bridge])
        passages = merge_sources(list(corpus.search(query, top_k=SECOND_TOP_K)), [])
        # An undated question: the newest edition of a document (this year's fares).
        found: list[tuple[int, int, int, Sentence, str]] = []
        for rank, sentence in enumerate(newest_first(question.text, ranker.rank(query, passages),
                                                     passages)[:15]):
            if sentence.text == first.text or not (
                    names_bridge(sentence.text, bridge, missing)
                    or _titled_by(passages[sentence.number - 1], bridge, origin)):
                continue
            stated = cue_words if states_measure(cue_units, sentence.text) else set()
            held = sum(1 for word in needed if word in stated or _present(word, sentence.text))
            span = answer_span(question.text, sentence.text) if held else ""
            if span and not _covers(question, [first.text, sentence.text, *(
                    document_names(m) for m in (origin, passages[sentence.number - 1])
                    if m is not None)], stated):
                continue
            if span:
                found.append((-held, -_phrases(needed, sentence.text), rank, sentence, span))
        if found:
            # The sentence holding the most of what is asked, then the most of its
            # phrases ("junior swim" over "family swim ... juniors"), the better ranked
            # on ties.
            _, _, _, sentence, span = min(found, key=lambda item: item[:3])
            second_match = passages[sentence.number - 1]
            merged = merge_sources(sources, [second_match])
            index = {m.chunk.id: n for n, m in enumerate(merged, start=1)}
            one, two = first.number, index[second_match.chunk.id]
            answer = (f"{span} [{two}] \u2014 \u201c{first.text}\u201d [{one}]; "
                      f"\u201c{sentence.text}\u201d [{two}]")
            return EngineAnswer(
                answer=answer, sources=merged, kind="lookup", strategy="two-step",
                quote=sentence.text, citations=sorted({one, two}), origin="extract",
                points=[{"text": first.text, "citation": one},
                        {"text": sentence.text, "citation": two, "bridge": bridge}])
    return None


# "the pool where st brannocks year 4 have lessons", "the shop that sells it"
_RELATIVE = re.compile(r"\b(?:the|a|an|its|their)\s+(?P<head>[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)"
                       r"\s+(?:where|that|which|who)\s+(?P<clause>\S.*?)\s*\??$", re.I)
# "the compost the allotment society recommends", "the lavenders the trust planted in …"
_REDUCED = re.compile(r"\bthe\s+(?P<head>[a-z][\w'-]*)\s+(?P<clause>(?:the|our|my|your|its)\s+"
                      r"(?:[a-z][\w'-]*\s+){0,3}[a-z][\w'-]*(?:ed|es|s)\b.*?)\s*\??$", re.I)


def relative_clause(question: str) -> tuple[str, str] | None:
    """``(head, clause)`` when the question names its subject by a relative clause at
    its end ("… at the pool where st brannocks year 4 have lessons": the pool is found
    from the clause first); None otherwise."""
    for pattern in (_RELATIVE, _REDUCED):
        found = pattern.search(question)
        if found and content_words(found.group("clause")):
            return found.group("head").strip(), found.group("clause").strip()
    return None


def through_clause(question: Question, sources: list[QueryMatch], corpus: Corpus | None,
                   ranker: SentenceRanker) -> EngineAnswer | None:
    """A question whose subject is named by a relative clause: the clause is searched
    first ("the pool where … have lessons" -> "Year 4 have swimming lessons at
    Fernmouth Leisure Pool"), its sentence about the head is the first step, and its
    names are the bridges of :func:`second_step`. None when no chain answers."""
    if corpus is None:
        return None
    found = relative_clause(question.text)
    if found is None:
        return None
    head, clause = found
    query = f"{head} {clause}"
    passages = merge_sources(sources, corpus.search(query, top_k=8))
    ranked = ranker.rank(query, passages)
    head_words = content_words(head)
    clause_words = content_words(clause)
    firsts = [s for s in ranked[:8]
              if sum(_present(w, s.text) for w in clause_words) * 2 >= len(clause_words)
              and (not head_words or any(_present(w, s.text) for w in head_words)
                   or bridges(question, s.text))]
    told = {porter_stem(w) for w in clause_words}
    asked = [t for t in question.terms if porter_stem(t) not in told]
    for first in firsts[:MAX_FIRST_STEPS]:
        answered = second_step(question, first, passages, corpus, ranker, asked)
        if answered is not None:
            return answered
    return None

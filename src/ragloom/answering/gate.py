"""Whether the evidence answers the question: calibrated signals, not word lists.

A lookup is refused when the evidence lacks what the question is about or what it
asks. The signals are ones that hold on any documents:

* **subject**: the codes, numbers and names of the question ("model 14", "Kingsbridge")
  must appear in the best sentence's passage, its headings or its document's name;
  evidence about another subject never answers;
* **coverage**: the idf-weighted share of the question's key terms found around the
  best sentence (the sentence, its neighbours, its passage's headings, its document's
  file name, title and section), with typos
  forgiven (one edit in words of five letters or more);
* **match**: the best sentence's score and lexical share, and its margin over the
  next sentence.

:class:`GatePolicy` mixes them into one confidence with weights measured as a
precision/recall trade-off on the dev sets (``bench/qa``); ``refuse_below`` is the
operating point. Raising it refuses more (fewer confident wrong answers, more
answerable questions refused).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from ragloom.answering.grounding import compound_words, content_words
from ragloom.answering.question import Question, holds_label
from ragloom.answering.sentences import (
    Sentence,
    document_name_parts,
    is_heading,
    split_sentences,
)
from ragloom.answering.similar import WordSimilarity
from ragloom.answering.spans import answer_span, measure_cue, states_measure, value_kind
from ragloom.answering.tables import with_records
from ragloom.retrieval.stemmer import porter_stem
from ragloom.types import QueryMatch


@dataclass(frozen=True)
class GateSignals:
    """What the gate measured for one question."""

    score: float
    lexical: float
    margin: float
    coverage: float  # idf-weighted share of key terms around the best sentence
    sentence_coverage: float  # ... in the best sentence alone
    typed: float  # 1: holds the kind of value asked for; 0: lacks it; 0.5: none asked
    missing: tuple[str, ...]
    subject_missing: tuple[str, ...]
    # idf-weighted share of what the question asks about its subject (its terms that
    # neither name the subject nor the document) found in the sentence or next to it
    attribute_coverage: float = 1.0

    def to_dict(self) -> dict[str, object]:
        return {"score": round(self.score, 4), "lexical": round(self.lexical, 4),
                "margin": round(self.margin, 4), "coverage": round(self.coverage, 4),
                "sentence_coverage": round(self.sentence_coverage, 4), "typed": self.typed,
                "attribute_coverage": round(self.attribute_coverage, 4),
                "missing": list(self.missing), "subject_missing": list(self.subject_missing)}


@dataclass(frozen=True)
class GatePolicy:
    """How the signals mix into a confidence, and where refusing starts."""

    # A logistic fit (``bench/gate_fit.py --source answers72 --source dev``) on the
    # lookups of the everyday-document dev sources (the 72 questions of bench/answers,
    # bench/qa/dev), each source and each class weighted equally: "answerable and
    # the extract is right" against "unanswerable". SQuAD 2.0's adversarial
    # unanswerable questions are left out of the fit: these signals cannot tell them
    # apart (balanced accuracy 0.48 when held out), and with equal weight they pulled
    # the everyday sources' operating point down. The figures are in the fit's output.
    bias: float = -6.49
    w_score: float = 2.39
    w_lexical: float = 0.35
    w_margin: float = 2.78
    w_coverage: float = 3.3
    w_sentence_coverage: float = 1.3
    w_typed: float = -0.15
    w_attribute_coverage: float = 1.86
    refuse_below: float = 0.55  # the fit's best balanced accuracy (answerable passed + refused)
    min_score: float = 0.25

    def confidence(self, s: GateSignals) -> float:
        z = (self.bias + self.w_score * s.score + self.w_lexical * s.lexical
             + self.w_margin * s.margin + self.w_coverage * s.coverage
             + self.w_sentence_coverage * s.sentence_coverage + self.w_typed * s.typed
             + self.w_attribute_coverage * s.attribute_coverage)
        return 1.0 / (1.0 + math.exp(-z))


def _edit1(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by at most one edit (a swap of two neighbouring
    letters counts as one)."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diff) <= 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


#: Words of a period said as how often ("weekly" permit: a week's permit).
_EVERY = {"daily": "day", "weekly": "week", "monthly": "month", "yearly": "year",
          "annually": "year", "annual": "year", "hourly": "hour", "nightly": "night",
          "quarterly": "quarter", "fortnightly": "fortnight"}


_WORKDAYS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday"})
_WEEKEND = frozenset({"saturday", "sunday"})


def _calendar(term: str, words: set[str]) -> bool:
    """Whether ``words`` name the days ``term`` means, or a span of days holding it: a
    weekday is Monday to Friday, the weekend Saturday and Sunday."""
    day = term[:-1] if term.endswith("s") else term
    if day == "weekday":
        return bool(words & _WORKDAYS)
    if day == "weekend":
        return bool(words & _WEEKEND)
    if day in _WORKDAYS:
        return bool(words & {"weekday", "weekdays"})
    if day in _WEEKEND:
        return bool(words & {"weekend", "weekends"})
    return False


def term_present(term: str, words: set[str], stems: set[str]) -> bool:
    """A question word is present as the same stem, as the period it says how often
    ("weekly" and "weeks"), or with one typo when it is a long word (never for codes
    and model numbers: "kx200" is not "kx100")."""
    stem = porter_stem(term)
    if stem in stems or term in words:
        return True
    if _calendar(term, words):
        return True
    period = _EVERY.get(term)
    if (period is not None and porter_stem(period) in stems) or any(
            porter_stem(_EVERY[w]) == stem for w in words if w in _EVERY):
        return True
    if len(term) >= 5 and not any(ch.isdigit() for ch in term):  # codes are exact
        return any(len(w) >= 4 and _edit1(term, w) for w in words)
    return False


def _vocabulary(texts: Sequence[str]) -> tuple[set[str], set[str]]:
    """The texts' content words and their stems; a hyphenated or split compound also
    counts as one word ("Wi-Fi" holds "wifi", "check in" holds "checkin")."""
    words = {w for text in texts for w in content_words(text)}
    words.update(w for text in texts for w in compound_words(text))
    return words, {porter_stem(w) for w in words}


def _neighbours(best: Sentence, match: QueryMatch) -> tuple[list[str], list[str]]:
    """The best sentence's neighbours in its passage (itself included) and the
    passage's headings."""
    sentences = split_sentences(match.chunk.text)
    near = sentences[max(0, best.position - 1): best.position + 2]
    return near, [s for s in sentences if is_heading(s)]


def _squash(text: str) -> str:
    return re.sub(r"[\s-]+", "", text.lower())


def _subject_present(item: str, words: set[str], stems: set[str], text: str) -> bool:
    if re.fullmatch(r"[a-z]{3,} [a-z]", item):  # a one-letter label ("band d")
        return holds_label(item, text)
    if any(ch.isdigit() for ch in item):
        pattern = r"(?<![\w.])" + re.escape(_squash(item)) + r"(?![\w])"
        spaced = r"(?<![\w.])" + re.escape(item.lower()) + r"(?![\w])"
        return (re.search(spaced, text.lower()) is not None
                or re.search(pattern, _squash(text)) is not None
                or _squash(item) in _squash(text).split())
    parts = [w for w in content_words(item)]
    return all(term_present(w, words, stems) for w in parts) if parts else True


def proper_terms(question: Question, texts: Sequence[str]) -> tuple[str, ...]:
    """Question words the passages write as names (capitalised mid-sentence, never
    lower case), with a number that follows them in the question ("orbis 14")."""
    body = "\n".join(texts)
    tokens = re.findall(r"[\w'\u2019-]+", question.text)
    found: list[str] = []
    for i, token in enumerate(tokens):
        word = token.lower()
        if len(word) < 3 or word.isdigit() or word not in question.terms:
            continue
        # Capitalised mid-sentence, after a lower-case word or a comma or colon: at
        # the start of a line or after a number ("Slide 4 People") it is a title.
        upper = len(re.findall(rf"(?<=[a-z,;:)] ){re.escape(word.capitalize())}\b", body))
        lower = len(re.findall(rf"\b{re.escape(word)}\b", body))
        if upper and not lower:
            follow = tokens[i + 1] if i + 1 < len(tokens) else ""
            found.append(f"{word} {follow}" if follow.isdigit() else word)
    return tuple(found)


# Words that say what kind of document a file is, not what it is about.
_DOCUMENT_WORDS = frozenset({
    "guide", "guides", "manual", "manuals", "handbook", "leaflet", "page", "pages",
    "prices", "price", "list", "lists", "rules", "policy", "policies", "report", "reports",
    "review", "reviews", "minutes", "notes", "terms", "catalogue", "catalog", "timetable",
    "sheet", "sheets", "information", "info", "document", "documents", "file", "files",
    "faq", "brochure", "newsletter", "summary", "plan", "plans"})


def named_documents(question: Question, matches: Sequence[QueryMatch]) -> tuple[str, ...]:
    """The question's words that name some of the passages' documents but not all ("the
    lido" names porthkellis-lido-2026.md): a passage from another document does not
    answer a question about that one."""
    names = [set(content_words(re.sub(r"[-_.]+", " ", PurePath(m.chunk.source).stem)))
             for m in matches if m.chunk.source]
    found: list[str] = []
    for term in question.terms:
        if len(term) < 4 or not term.isalpha() or term in _DOCUMENT_WORDS:
            continue
        held = [term_present(term, words, {porter_stem(w) for w in words}) for words in names]
        if any(held) and not all(held):
            found.append(term)
    return tuple(found)


def subjects(question: Question, matches: Sequence[QueryMatch]) -> tuple[str, ...]:
    """What the evidence must be about: the question's codes and names, its words the
    passages write as names, and its words that name a document."""
    found = list(question.subject)
    for item in proper_terms(question, [m.chunk.text for m in matches]):
        if not any(item.split()[0] in existing.lower() for existing in found):
            found.append(item)
    for term in named_documents(question, matches):
        if not any(term in existing.lower() for existing in found):
            found.append(term)
    return tuple(dict.fromkeys(found))


_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")


_YEAR_SPAN = re.compile(r"(?<!\d)((?:19|20)\d\d)[-/ ](\d\d)(?!\d)")


def _years(name: str) -> set[str]:
    """The years a name carries ("council tax 2025-26": 2025 and 2026; "minutes
    2026-02" only 2026: a span is two years in a row)."""
    years = set(_YEAR.findall(name))
    years.update(first[:2] + second for first, second in _YEAR_SPAN.findall(name)
                 if int(second) == (int(first) + 1) % 100)
    return years


def _other_period(item: str, names: Sequence[str]) -> bool:
    """Whether ``item`` is a year and the document's names carry years, none of them
    it: "Sales Review 2024" is about 2024 even where it mentions "January 2025", so it
    does not answer a question about 2025."""
    if not _YEAR.fullmatch(item.strip()):
        return False
    named = set().union(*(_years(name) for name in names))
    return bool(named) and item.strip() not in named


def _about(match: QueryMatch, items: Sequence[str]) -> tuple[str, ...]:
    """The ``items`` the passage, its headings and its document's names do not name
    (a year counts as named only by a document that is not named after another year)."""
    names = document_name_parts(match)
    # Table rows read with their headers ("Band: D"), as the sentences are.
    wide = [match.chunk.text, with_records(match.chunk.text), *names]
    words, stems = _vocabulary(wide)
    text = "\n".join(wide)
    return tuple(item for item in items if _other_period(item, names)
                 or not _subject_present(item, words, stems, text))


def on_subject(question: Question, evidence: Sequence[Sentence],
               matches: Sequence[QueryMatch]) -> tuple[list[Sentence], tuple[str, ...]]:
    """The evidence from passages about the question's subject, and what no passage
    names (when none is about it)."""
    items = subjects(question, matches)
    if not items:
        return list(evidence), ()
    missing = {n: _about(m, items) for n, m in enumerate(matches, start=1)}
    kept = [s for s in evidence if not missing.get(s.number)]
    if kept:
        return kept, ()
    fewest = min(missing.values(), key=len) if missing else tuple(items)
    return [], fewest


def partly_on_subject(question: Question, evidence: Sequence[Sentence],
                      matches: Sequence[QueryMatch]) -> list[Sentence]:
    """The evidence from passages that name some of the question's subjects but not
    all: the first step of a question whose subjects sit in two documents ("the
    library in the same area as Rope Walk Arts Studio": the studio's row names its
    area, the library's row its hours)."""
    items = subjects(question, matches)
    if len(items) < 2:
        return []
    missing = {n: _about(m, items) for n, m in enumerate(matches, start=1)}
    return [s for s in evidence if 0 < len(missing.get(s.number, items)) < len(items)]


def _presence(terms: Sequence[str], texts: Sequence[str], exact: set[str],
              similar: WordSimilarity | None) -> dict[str, float]:
    """How present each term is in ``texts``: 1 when written there (stemmed, or with
    one typo), else its closeness in meaning to the texts' words (never for codes,
    numbers and the question's names, which must be written: ``exact``)."""
    words, stems = _vocabulary(texts)
    present: dict[str, float] = {}
    for term in terms:
        if term_present(term, words, stems):
            present[term] = 1.0
        elif similar is None or term in exact or any(ch.isdigit() for ch in term):
            present[term] = 0.0
        else:
            present[term] = similar.closeness(term, (w for w in words if w.isalpha()))
    return present


def _share(present: dict[str, float], terms: Sequence[str], weights: dict[str, float]) -> float:
    """The idf-weighted share of ``terms`` present (1.0 when there are none)."""
    total = sum(weights[t] for t in terms)
    if not terms or total <= 0:
        return 1.0
    return sum(weights[t] * present[t] for t in terms) / total


def measure(question: Question, evidence: Sequence[Sentence],
            matches: Sequence[QueryMatch], idf: dict[str, float] | None = None,
            similar: WordSimilarity | None = None) -> GateSignals:
    """The gate's signals for the best sentence of ``evidence``; with ``similar``, a
    term the evidence paraphrases earns partial credit (:mod:`.similar`)."""
    best = evidence[0]
    margin = best.score - evidence[1].score if len(evidence) > 1 else best.score
    terms = list(dict.fromkeys(question.terms))
    weights = {t: (idf or {}).get(porter_stem(t), 1.0) for t in terms}
    named = subjects(question, matches)
    exact = {w for item in named for w in content_words(item)}
    around = _present_around(best, matches)
    context = _presence(terms, around.context, exact, similar)
    missing = tuple(t for t in terms if context[t] < 0.5)
    asked = value_kind(question.text)
    typed = 0.5 if asked == "other" else (1.0 if answer_span(question.text, best.text) else 0.0)
    own = _presence(terms, [best.text], exact, similar)
    attributes = [t for t in terms if t not in exact and porter_stem(t) not in around.name_stems]
    near = _presence(attributes, around.near, exact, similar) if around.near else {}
    cue = measure_cue(question.text)
    if cue is not None:
        # "how far" is answered by "Range: up to 45 km": the unit says the word.
        words, units = cue
        for present, texts in ((context, around.context), (own, [best.text]),
                               (near, around.near)):
            if any(states_measure(units, text) for text in texts):
                for term in words & set(present):
                    present[term] = 1.0
        missing = tuple(t for t in terms if context[t] < 0.5)
    return GateSignals(score=best.score, lexical=best.lexical, margin=max(0.0, margin),
                       coverage=_share(context, terms, weights),
                       sentence_coverage=_share(own, terms, weights), typed=typed,
                       missing=missing, subject_missing=(),
                       attribute_coverage=_share(near, attributes, weights) if near else 1.0)


@dataclass(frozen=True)
class _Around:
    """The texts around the best sentence the gate reads."""

    context: list[str]  # the sentence, its neighbours, headings, document names
    near: list[str]  # the sentence and its neighbours ([] when it has no passage)
    name_stems: set[str]  # stems of the document's names


def _present_around(best: Sentence, matches: Sequence[QueryMatch]) -> _Around:
    """The best sentence, its neighbours, the headings of its passage and the names of
    its document (file name, title, section): a sentence says what its document is
    about without naming it ("Emergency repairs are fixed within 4 hours" in the
    Harbour View handbook answers "how fast are emergency repairs fixed at Harbour
    View"). The attribute share reads only the sentence and its neighbours, with the
    question's terms that name the subject or the document set aside: "voltera e5 top
    speed" asks "top speed" of the Voltera E5, and a sentence about the E5 without a
    speed does not answer it."""
    if not 0 < best.number <= len(matches):
        return _Around([best.text], [], set())
    match = matches[best.number - 1]
    near, headings = _neighbours(best, match)
    names = document_name_parts(match)
    return _Around([best.text, *near, *headings, *names], [best.text, *near],
                   _vocabulary(names)[1])


def idf_of(question: Question, sentences: Sequence[Sentence]) -> dict[str, float]:
    """Inverse document frequency of the question's terms over the candidate sentences."""
    held = [{porter_stem(w) for w in content_words(s.text)} for s in sentences]
    total = len(held) or 1
    result: dict[str, float] = {}
    for term in question.terms:
        stem = porter_stem(term)
        count = sum(1 for terms in held if stem in terms)
        result[stem] = math.log(1 + (total - count + 0.5) / (count + 0.5))
    return result


def weakness(question: Question, evidence: Sequence[Sentence], matches: Sequence[QueryMatch],
             policy: GatePolicy, similar: WordSimilarity | None = None
             ) -> tuple[str, GateSignals | None]:
    """Why the evidence does not answer the question ("" when it does), and the signals.

    ``evidence`` should already be :func:`on_subject`.
    """
    if not evidence:
        return "the passages hold no sentences", None
    signals = measure(question, evidence, matches, idf_of(question, evidence), similar)
    if signals.score < policy.min_score:
        return f"the best sentence scores {signals.score:.2f}", signals
    confidence = policy.confidence(signals)
    if confidence < policy.refuse_below:
        detail = (", ".join(signals.missing) if signals.missing else "weak match")
        return (f"confidence {confidence:.2f} (the evidence lacks: {detail})", signals)
    return "", signals

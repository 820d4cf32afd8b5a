"""Whether the evidence answers the question: calibrated signals, not word lists.

A lookup is refused when the evidence lacks what the question is about or what it
asks. The signals are ones that hold on any documents:

* **subject**: the codes, numbers and names of the question ("model 14", "Kingsbridge")
  must appear in the best sentence's passage, its headings or its document's name;
  evidence about another subject never answers;
* **coverage**: the idf-weighted share of the question's key terms found around the
  best sentence (the sentence, its neighbours, its passage's headings), with typos
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

from ragloom.answering.grounding import content_words
from ragloom.answering.question import Question
from ragloom.answering.sentences import Sentence, is_heading, split_sentences
from ragloom.answering.spans import answer_span, value_kind
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

    def to_dict(self) -> dict[str, object]:
        return {"score": round(self.score, 4), "lexical": round(self.lexical, 4),
                "margin": round(self.margin, 4), "coverage": round(self.coverage, 4),
                "sentence_coverage": round(self.sentence_coverage, 4), "typed": self.typed,
                "missing": list(self.missing), "subject_missing": list(self.subject_missing)}


@dataclass(frozen=True)
class GatePolicy:
    """How the signals mix into a confidence, and where refusing starts."""

    # A logistic fit on the lookups of the dev sources (SQuAD 2.0 "Normans", the 72
    # questions of bench/answers, bench/qa/dev), each source weighted equally:
    # "answerable and the extract is right" against "unanswerable".
    bias: float = -2.65
    w_score: float = 3.76
    w_lexical: float = -1.29
    w_margin: float = 2.41
    w_coverage: float = 1.82
    w_sentence_coverage: float = -0.43
    w_typed: float = -0.15
    refuse_below: float = 0.5
    min_score: float = 0.25

    def confidence(self, s: GateSignals) -> float:
        z = (self.bias + self.w_score * s.score + self.w_lexical * s.lexical
             + self.w_margin * s.margin + self.w_coverage * s.coverage
             + self.w_sentence_coverage * s.sentence_coverage + self.w_typed * s.typed)
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


def term_present(term: str, words: set[str], stems: set[str]) -> bool:
    """A question word is present as the same stem, or with one typo when it is a long
    word (never for codes and model numbers: "kx200" is not "kx100")."""
    if porter_stem(term) in stems or term in words:
        return True
    if len(term) >= 5 and not any(ch.isdigit() for ch in term):  # codes are exact
        return any(len(w) >= 4 and _edit1(term, w) for w in words)
    return False


def _vocabulary(texts: Sequence[str]) -> tuple[set[str], set[str]]:
    words = {w for text in texts for w in content_words(text)}
    return words, {porter_stem(w) for w in words}


def _context(best: Sentence, matches: Sequence[QueryMatch]) -> list[str]:
    """The best sentence, its neighbours and the headings of its passage."""
    passage = matches[best.number - 1].chunk.text if 0 < best.number <= len(matches) else ""
    sentences = split_sentences(passage)
    near = sentences[max(0, best.position - 1): best.position + 2]
    headings = [s for s in sentences if is_heading(s)]
    return [best.text, *near, *headings]


def _names(match: QueryMatch) -> list[str]:
    chunk = match.chunk
    name = PurePath(chunk.source).stem.replace("-", " ").replace("_", " ") if chunk.source else ""
    title = str(chunk.metadata.get("title", "") or "")
    section = str(chunk.metadata.get("section", "") or chunk.metadata.get("heading", "") or "")
    return [name, title, section]


def _squash(text: str) -> str:
    return re.sub(r"[\s-]+", "", text.lower())


def _subject_present(item: str, words: set[str], stems: set[str], text: str) -> bool:
    if any(ch.isdigit() for ch in item):
        pattern = r"(?<![\w.])" + re.escape(_squash(item)) + r"(?![\w])"
        spaced = r"(?<![\w.])" + re.escape(item.lower()) + r"(?![\w])"
        return (re.search(spaced, text.lower()) is not None
                or re.search(pattern, _squash(text)) is not None
                or _squash(item) in _squash(text).split())
    parts = [w for w in content_words(item)]
    return all(term_present(w, words, stems) for w in parts) if parts else True


def proper_terms(question: Question, texts: Sequence[str]) -> tuple[str, ...]:
    """Question words the passages write as names (capitalised, never lower case),
    with a number that follows them in the question ("orbis 14")."""
    body = "\n".join(texts)
    tokens = re.findall(r"[\w'\u2019-]+", question.text)
    found: list[str] = []
    for i, token in enumerate(tokens):
        word = token.lower()
        if len(word) < 3 or word.isdigit() or word not in question.terms:
            continue
        upper = len(re.findall(rf"(?<![.!?]\s)\b{re.escape(word.capitalize())}\b", body))
        lower = len(re.findall(rf"\b{re.escape(word)}\b", body))
        if upper and not lower:
            follow = tokens[i + 1] if i + 1 < len(tokens) else ""
            found.append(f"{word} {follow}" if follow.isdigit() else word)
    return tuple(found)


def subjects(question: Question, matches: Sequence[QueryMatch]) -> tuple[str, ...]:
    """What the evidence must be about: the question's codes and names, and its words
    the passages write as names."""
    found = list(question.subject)
    for item in proper_terms(question, [m.chunk.text for m in matches]):
        if not any(item.split()[0] in existing.lower() for existing in found):
            found.append(item)
    return tuple(dict.fromkeys(found))


def _about(match: QueryMatch, items: Sequence[str]) -> tuple[str, ...]:
    """The ``items`` the passage, its headings and its document's names do not name."""
    wide = [match.chunk.text, *_names(match)]
    words, stems = _vocabulary(wide)
    text = "\n".join(wide)
    return tuple(item for item in items if not _subject_present(item, words, stems, text))


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


def measure(question: Question, evidence: Sequence[Sentence],
            matches: Sequence[QueryMatch], idf: dict[str, float] | None = None
            ) -> GateSignals:
    """The gate's signals for the best sentence of ``evidence``."""
    best = evidence[0]
    margin = best.score - evidence[1].score if len(evidence) > 1 else best.score
    context = _context(best, matches)
    words, stems = _vocabulary(context)
    terms = list(dict.fromkeys(question.terms))
    weights = {t: (idf or {}).get(porter_stem(t), 1.0) for t in terms}
    missing = tuple(t for t in terms if not term_present(t, words, stems))
    total = sum(weights.values())
    coverage = 1.0 - (sum(weights[t] for t in missing) / total) if total else 1.0
    asked = value_kind(question.text)
    typed = 0.5 if asked == "other" else (1.0 if answer_span(question.text, best.text) else 0.0)
    own_words, own_stems = _vocabulary([best.text])
    absent = [t for t in terms if not term_present(t, own_words, own_stems)]
    own = 1.0 - (sum(weights[t] for t in absent) / total) if total else 1.0
    return GateSignals(score=best.score, lexical=best.lexical, margin=max(0.0, margin),
                       coverage=coverage, sentence_coverage=own, typed=typed, missing=missing,
                       subject_missing=())


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
             policy: GatePolicy) -> tuple[str, GateSignals | None]:
    """Why the evidence does not answer the question ("" when it does), and the signals.

    ``evidence`` should already be :func:`on_subject`.
    """
    if not evidence:
        return "the passages hold no sentences", None
    signals = measure(question, evidence, matches, idf_of(question, evidence))
    if signals.score < policy.min_score:
        return f"the best sentence scores {signals.score:.2f}", signals
    confidence = policy.confidence(signals)
    if confidence < policy.refuse_below:
        detail = (", ".join(signals.missing) if signals.missing else "weak match")
        return (f"confidence {confidence:.2f} (the evidence lacks: {detail})", signals)
    return "", signals

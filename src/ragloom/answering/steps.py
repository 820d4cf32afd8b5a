"""Procedures ("how do i …"): the steps as written, cited.

A passage's numbered or bulleted lines are the steps when there are at least two and
they are not the titles of its sections. In prose, the steps are the best sentence
and the rest of its paragraph (the author's own unit: "Switch off and unplug the
machine. Open the flap …" rarely repeats the question's words); when the best
sentence ends its paragraph, the sentences after it that stay on the question's
words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragloom.answering.question import Question
from ragloom.answering.result import EngineAnswer, refusal
from ragloom.answering.sentences import (
    Sentence,
    SentenceRanker,
    document_name_parts,
    is_heading,
    split_sentences,
)
from ragloom.answering.values import cells, holds
from ragloom.types import QueryMatch

STEP = re.compile(r"^\s*(?:step\s*)?(\d{1,2})[.):]\s+|^\s*[-*\u2022]\s+", re.I)
#: At most this many prose sentences make the steps.
MAX_PROSE_STEPS = 8


def _section_headings(lines: Sequence[str]) -> bool:
    """Whether a passage's numbered lines are the titles of its sections ("5. Child
    lock" over a paragraph), not steps: each is a heading and prose comes between."""
    marked = [i for i, line in enumerate(lines) if STEP.match(line)]
    if not all(is_heading(STEP.sub("", lines[i]).strip()) for i in marked):
        return False
    return any(not STEP.match(line) for line in lines[marked[0]: marked[-1] + 1])


def _flat(text: str) -> str:
    return " ".join(text.split())


def _rest_of_paragraph(passage: str, sentence: str) -> list[str]:
    """``sentence`` and the sentences after it in its paragraph (blocks are separated
    by blank lines; headings are left out); [] when it is not found."""
    wanted = _flat(sentence)
    for block in re.split(r"\n\s*\n", passage):
        inside = [s for s in split_sentences(block) if not is_heading(s)]
        flat = [_flat(s) for s in inside]
        if wanted in flat:
            return inside[flat.index(wanted):][:MAX_PROSE_STEPS]
    return []


def _steps(passage: str, start: int, terms: Sequence[str] = ()) -> list[str]:
    """The steps as written: numbered or bulleted lines keep their own markers (unless
    they are section titles); in prose, the best sentence and the rest of its
    paragraph, or the sentences after it that stay on the question's words."""
    lines = [line.strip() for line in passage.splitlines() if line.strip()]
    steps = [line for line in lines if STEP.match(line)]
    if len(steps) >= 2 and not _section_headings(lines):
        return [re.sub(r"^\s*[-*\u2022]\s+", "", line).strip() for line in steps]
    sentences = split_sentences(passage)
    if not 0 <= start < len(sentences):
        return []
    paragraph = _rest_of_paragraph(passage, sentences[start])
    if len(paragraph) >= 2:
        return paragraph
    following = [s for s in sentences[start: start + 6] if not is_heading(s)]
    kept = following[:1]
    for sentence in following[1:]:
        if terms and not any(holds(sentence, [t]) for t in terms):
            break
        kept.append(sentence)
    return kept


_VERB = re.compile(r"\bhow (?:do|can|should|would|could|must) (?:i|we|you|they)\s+([a-z]{3,})"
                   r"|\bhow to\s+([a-z]{3,})", re.I)
#: Best-ranked sentences among which the one whose passage is most about the question
#: gives the steps.
CONTENDERS = 5


def _verb(question: str) -> str:
    """The verb of "how do i VERB" / "how to VERB" ("" when the question has none)."""
    found = _VERB.search(question)
    return (found.group(1) or found.group(2)) if found else ""


def _about(question: Question, sentence: Sentence, sources: Sequence[QueryMatch],
           verb: str) -> int:
    """How many of the question's words the sentence, its passage and its document's
    names hold ("register my dog with fernbrook": the vet's registration form, not
    "Registered charity no." in another document), one more for a passage written as
    a list and one more for a heading naming the question's verb."""
    if not 0 < sentence.number <= len(sources):
        return 0
    match = sources[sentence.number - 1]
    text = " ".join([sentence.text, match.chunk.text, *document_name_parts(match)])
    lines = [line.strip() for line in match.chunk.text.splitlines() if line.strip()]
    listed = sum(1 for line in lines if STEP.match(line)) >= 2 and not _section_headings(lines)
    # Steps are usually written as a numbered or bulleted list, under a heading that
    # names what is done ("how do i get an allotment": "3. GETTING A PLOT").
    headed = bool(verb) and any(is_heading(STEP.sub("", line)) and holds(line, [verb])
                                for line in lines)
    return sum(1 for term in question.terms if holds(text, [term])) + int(listed) + int(headed)


def procedure(question: Question, sources: list[QueryMatch], ranker: SentenceRanker,
              evidence: Sequence[Sentence] | None = None) -> EngineAnswer:
    """The steps of the best-matching passage, as written; ``evidence``, when given,
    is the ranked evidence about the question's subject (another council's steps are
    not the answer). Among the best few sentences, the one whose passage holds the
    most of the question's words comes first."""
    ranked = list(evidence) if evidence else ranker.rank(question.text, sources)
    if not ranked:
        return refusal("the passages hold no sentences", sources, kind="procedure")
    # A table's rows are rarely the steps: prose and lists first.
    contenders = ([s for s in ranked if len(cells(s.text)) < 2] or ranked)[:CONTENDERS]
    verb = _verb(question.text)
    _, best = max(enumerate(contenders),
                  key=lambda item: (_about(question, item[1], sources, verb), -item[0]))
    steps = _steps(sources[best.number - 1].chunk.text, best.position, question.terms)
    if not steps:
        steps = [best.text]
    lines = [step if re.match(r"^\s*(?:step\s*)?\d{1,2}[.):]\s", step, re.I) else f"- {step}"
             for step in steps]
    return EngineAnswer(
        answer="\n".join(lines) + f" [{best.number}]", sources=sources, kind="procedure",
        strategy="procedure", quote=best.text, citations=[best.number], origin="extract",
        points=[{"text": s, "citation": best.number} for s in steps], evidence=ranked)

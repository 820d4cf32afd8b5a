"""Answer evaluation: is the answer right, cited, supported, and does it refuse well?

A question set is JSON Lines, one question a line::

    {"question": "How long is the lunch break?", "answers": ["30 minutes"],
     "source": "staff-handbook.md"}
    {"question": "What is the CEO's salary?", "answerable": false}

``answers`` are accepted answers (any one found in the normalised answer counts),
``source`` the file name that holds the answer; ``id`` and ``split`` are optional.
The measures (see :func:`score_answer`):

* **answer accuracy**: answerable questions whose answer holds an accepted answer
  (case, punctuation and spacing normalised; matched on word boundaries, so "6"
  does not match "16") and is not a refusal;
* **citation accuracy**: of the answerable questions answered, those whose cited
  sources include the gold file (the answer's ``citations``, else ``[n]`` markers in
  its text, else its first source);
* **unsupported claims**: numbers and names in an answer that none of its cited
  passages holds (:func:`ragloom.answering.grounding.unsupported_claims`);
* **correct refusals**: unanswerable questions the answer refuses.
"""

from __future__ import annotations

import json
import re
import time
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragloom.answering.grounding import (
    cited_numbers,
    is_refusal,
    number_value,
    unsupported_claims,
)
from ragloom.errors import InvalidInputError


@dataclass(frozen=True)
class AnswerQuestion:
    """One question of an answer evaluation set."""

    question: str
    answers: tuple[str, ...] = ()
    source: str = ""
    answerable: bool = True
    id: str = ""
    split: str = ""


def load_questions(path: str | Path) -> list[AnswerQuestion]:
    """Read a JSON Lines question set; a malformed line is an error naming the line."""
    questions: list[AnswerQuestion] = []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            answerable = bool(data.get("answerable", True))
            answers = tuple(str(a) for a in data.get("answers", ()))
            if not isinstance(data["question"], str) or (answerable and not answers):
                raise ValueError("an answerable question needs a non-empty 'answers' list")
        except (json.JSONDecodeError, KeyError, ValueError, TypeError, AttributeError) as exc:
            raise InvalidInputError(
                f"{path}, line {number}: not a question ({exc}); each line needs "
                '"question" and "answers" (a list), or "answerable": false'
            ) from exc
        questions.append(AnswerQuestion(
            question=data["question"], answers=answers, source=str(data.get("source", "")),
            answerable=answerable, id=str(data.get("id", f"q{number}")),
            split=str(data.get("split", ""))))
    if not questions:
        raise InvalidInputError(f"{path} holds no questions")
    return questions


_SYMBOLS = re.compile(r"([£$€%°])")
_SOFT = re.compile(r"(?<!\d)[.:,/](?!\d)|[.:,/](?=\s|$)|-")
_OTHER = re.compile(r"[^\w\s£$€%°.:,\-/]")
_NUMERIC = re.compile(r"\d+(?:[.,:]\d+)*")


def normalise(text: str) -> str:
    """Lower case, NFKC, symbols spaced out, punctuation dropped except inside numbers."""
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")
    text = _SYMBOLS.sub(r" \1 ", _OTHER.sub(" ", text))
    text = _SOFT.sub(" ", text)
    return " ".join(number_value(w) if _NUMERIC.fullmatch(w) else w for w in text.split())


def contains_answer(answer: str, accepted: Iterable[str]) -> bool:
    padded = f" {normalise(answer)} "
    return any(f" {normalise(gold)} " in padded for gold in accepted if normalise(gold))


def _name(source: str) -> str:
    return Path(source).name if source else ""


def cited_sources(answer: Any) -> list[str]:
    """File names of the sources an answer cites (see the module notes)."""
    sources = list(getattr(answer, "sources", []))
    numbers = list(getattr(answer, "citations", []) or []) or cited_numbers(answer.answer)
    if not numbers and sources:
        numbers = [1]
    return [_name(sources[n - 1].chunk.source) for n in numbers if 1 <= n <= len(sources)]


def _cited_passages(answer: Any) -> list[str]:
    sources = list(getattr(answer, "sources", []))
    numbers = list(getattr(answer, "citations", []) or []) or cited_numbers(answer.answer)
    chosen = [sources[n - 1] for n in numbers if 1 <= n <= len(sources)] or sources
    return [m.chunk.text for m in chosen]


@dataclass(frozen=True)
class AnswerScore:
    """How one answer scored."""

    question: AnswerQuestion
    answer: str
    refused: bool
    correct: bool
    cited: list[str]
    citation_correct: bool
    unsupported: list[str]
    seconds: float
    quote: str = ""

    def to_dict(self) -> dict[str, Any]:
        q = self.question
        return {"id": q.id, "split": q.split, "question": q.question, "answerable": q.answerable,
                "gold": list(q.answers), "gold_source": q.source, "answer": self.answer,
                "quote": self.quote, "refused": self.refused, "correct": self.correct,
                "cited": self.cited, "citation_correct": self.citation_correct,
                "unsupported": self.unsupported, "seconds": round(self.seconds, 3)}


def score_answer(question: AnswerQuestion, answer: Any, seconds: float = 0.0) -> AnswerScore:
    """Score one RagAnswer-like object (``answer``, ``sources``, optional ``citations``,
    ``refused`` and ``quote``) against its question."""
    text = str(answer.answer)
    refused = bool(getattr(answer, "refused", False)) or is_refusal(text)
    cited = [] if refused else cited_sources(answer)
    unsupported = [] if refused else [
        c.text for c in unsupported_claims(text, _cited_passages(answer),
                                           question=question.question)]
    correct = question.answerable and not refused and contains_answer(text, question.answers)
    citation_correct = question.answerable and not refused and _name(question.source) in cited
    return AnswerScore(question=question, answer=text, refused=refused, correct=correct,
                       cited=cited, citation_correct=citation_correct,
                       unsupported=unsupported, seconds=seconds,
                       quote=str(getattr(answer, "quote", "") or ""))


@dataclass(frozen=True)
class AnswerReport:
    """Totals over a question set, and every answer's score."""

    scores: list[AnswerScore] = field(default_factory=list)

    def summary(self, split: str | None = None) -> dict[str, Any]:
        scores = [s for s in self.scores if split is None or s.question.split == split]
        answerable = [s for s in scores if s.question.answerable]
        answered = [s for s in answerable if not s.refused]
        unanswerable = [s for s in scores if not s.question.answerable]
        given = [s for s in scores if not s.refused]
        with_number = [s for s in given if any(any(ch.isdigit() for ch in c)
                                                for c in s.unsupported)]
        seconds = sorted(s.seconds for s in scores)

        def share(part: int, whole: int) -> float:
            return round(part / whole, 4) if whole else 0.0

        return {
            "questions": len(scores),
            "answerable": len(answerable),
            "unanswerable": len(unanswerable),
            "answer_accuracy": share(sum(s.correct for s in answerable), len(answerable)),
            "citation_accuracy": share(sum(s.citation_correct for s in answered), len(answered)),
            "answered": len(answered),
            "false_refusals": len(answerable) - len(answered),
            "correct_refusals": share(sum(s.refused for s in unanswerable), len(unanswerable)),
            "answers_with_unsupported_claims": sum(bool(s.unsupported) for s in given),
            "answers_with_unsupported_numbers": len(with_number),
            "unsupported_claims": sum(len(s.unsupported) for s in given),
            "seconds_p50": round(seconds[len(seconds) // 2], 3) if seconds else 0.0,
            "seconds_total": round(sum(seconds), 2),
        }

    def to_dict(self) -> dict[str, Any]:
        splits = sorted({s.question.split for s in self.scores if s.question.split})
        return {"summary": self.summary(),
                "splits": {name: self.summary(name) for name in splits},
                "answers": [s.to_dict() for s in self.scores]}


def evaluate_answers(
    ask: Callable[[str], Any],
    questions: Sequence[AnswerQuestion],
    *,
    progress: Callable[[AnswerScore], None] | None = None,
) -> AnswerReport:
    """Ask every question through ``ask`` (e.g. ``NaiveRag(...).query``) and score it."""
    scores: list[AnswerScore] = []
    for question in questions:
        started = time.perf_counter()
        answer = ask(question.question)
        score = score_answer(question, answer, time.perf_counter() - started)
        scores.append(score)
        if progress is not None:
            progress(score)
    return AnswerReport(scores)


def ingest_folder(docs: str | Path, db_path: Path, *, embedder: str, name: str = "answers") -> Any:
    """A knowledge base in the SQLite file ``db_path`` holding every file under ``docs``
    (ingested as ``ragloom ingest`` does; unchanged files are not re-read)."""
    from ragloom.knowledge_base import VectorKnowledgeBase
    from ragloom.registry import make_embedder
    from ragloom.stores.sqlite import SqliteVectorStore

    folder = Path(docs)
    if not folder.is_dir():
        raise InvalidInputError(f"--docs {folder} is not a folder of documents")
    store = SqliteVectorStore(db_path, collection=name)
    knowledge_base = VectorKnowledgeBase(store, make_embedder(embedder), name=name)
    report = knowledge_base.pipeline().run_paths([str(folder)])
    if not (report.new or report.replaced or report.unchanged):
        raise InvalidInputError(f"no document under {folder} could be read")
    return knowledge_base

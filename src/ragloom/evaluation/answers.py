"""Answer evaluation: is the answer right, cited, supported, and does it refuse well?

A question set is JSON Lines, one question a line::

    {"question": "How long is the lunch break?", "answers": ["30 minutes"],
     "source": "staff-handbook.md", "kind": "number"}
    {"question": "What is the CEO's salary?", "answerable": false}

``answers`` are accepted answers (any one found in the normalised answer counts;
"a|b" accepts either form), ``source`` the file name that holds the answer (a list
of names for an answer drawn from several files); ``id``, ``split`` and ``kind``
(one of :data:`KINDS`) are optional. Instead of ``answers`` a question may give
``all_of`` (a list answer: right only when every item is in the answer), or
``answers`` with ``min_hits`` (key points: right when at least that many appear).
``match`` is ``ragloom`` (the default normalisation) or ``squad`` (SQuAD's; see
:mod:`ragloom.evaluation.matching`). The measures (see :func:`score_answer` and
:meth:`AnswerReport.summary`):

* **answer accuracy**: answerable questions whose answer holds an accepted answer
  (case, punctuation and spacing normalised; matched on word boundaries, so "6"
  does not match "16"), every ``all_of`` item or ``min_hits`` key points, and is
  not a refusal;
* **citation accuracy**: of the answerable questions answered, those whose cited
  sources include a gold file (the answer's ``citations``, else ``[n]`` markers in
  its text, else its first source);
* **unsupported claims**: numbers and names in an answer that none of its cited
  passages holds (:func:`ragloom.answering.grounding.unsupported_claims`);
* **refusals**: unanswerable questions the answer refuses (``correct_refusals``,
  the recall of "refuse"), answerable questions refused, unanswerable ones
  answered, and the precision of "refuse";
* **per kind**: the share right of each ``kind`` (an unanswerable question is
  right when it is refused).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragloom.answering.grounding import cited_numbers, is_refusal, unsupported_claims
from ragloom.answering.verify import cited_texts
from ragloom.errors import InvalidInputError
from ragloom.evaluation.matching import MATCHINGS, contains_answer, hits, normalise

__all__ = ["KINDS", "SPLITS", "AnswerQuestion", "AnswerReport", "AnswerScore",
           "contains_answer", "evaluate_answers", "filter_split", "ingest_folder",
           "load_questions", "normalise", "question_from_dict", "score_answer"]

KINDS = ("lookup", "number", "date", "table", "list", "comparison", "summary", "two-step",
         "procedure", "mentions", "unanswerable")
SPLITS = ("dev", "test", "all")


@dataclass(frozen=True)
class AnswerQuestion:
    """One question of an answer evaluation set."""

    question: str
    answers: tuple[str, ...] = ()
    source: str = ""
    answerable: bool = True
    id: str = ""
    split: str = ""
    kind: str = ""
    all_of: tuple[str, ...] = ()
    min_hits: int = 0
    match: str = "ragloom"

    @property
    def sources(self) -> list[str]:
        """The gold file names (``source`` may name several, separated by commas)."""
        return [_name(s.strip()) for s in self.source.split(",") if s.strip()]


def _strings(data: dict[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise ValueError(f"'{key}' must be a list of strings")
    if not all(isinstance(item, str | int | float) and str(item).strip() for item in value):
        raise ValueError(f"'{key}' must hold non-empty strings")
    return tuple(str(item) for item in value)


def _source(data: dict[str, Any]) -> str:
    value = data.get("source", "")
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    if not isinstance(value, str):
        raise ValueError("'source' must be a file name or a list of file names")
    return value


def question_from_dict(data: Any, default_id: str = "") -> AnswerQuestion:
    """One question from its JSON object; a ValueError says what is wrong with it."""
    if not isinstance(data, dict):
        raise ValueError("a question is a JSON object")
    text = data.get("question")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("'question' must be a non-empty string")
    answerable = data.get("answerable", True)
    if not isinstance(answerable, bool):
        raise ValueError("'answerable' must be true or false")
    answers, all_of = _strings(data, "answers"), _strings(data, "all_of")
    kind = str(data.get("kind") or ("" if answerable else "unanswerable"))
    if kind and kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")
    if (kind == "unanswerable") == answerable:
        raise ValueError('kind "unanswerable" goes with "answerable": false, and only there')
    match = str(data.get("match") or "ragloom")
    if match not in MATCHINGS:
        raise ValueError(f"unknown match {match!r}; use one of {', '.join(MATCHINGS)}")
    min_hits = data.get("min_hits", 0)
    if not isinstance(min_hits, int) or isinstance(min_hits, bool) or min_hits < 0:
        raise ValueError("'min_hits' must be a whole number >= 1")
    if answerable:
        if all_of and (answers or min_hits):
            raise ValueError("'all_of' stands alone: not with 'answers' or 'min_hits'")
        if not answers and not all_of:
            raise ValueError("an answerable question needs a non-empty 'answers' "
                             "(or 'all_of') list")
        if min_hits > len(answers):
            raise ValueError(f"'min_hits' is {min_hits} but 'answers' lists only "
                             f"{len(answers)} key points")
    return AnswerQuestion(
        question=text, answers=answers, source=_source(data), answerable=answerable,
        id=str(data.get("id", default_id)), split=str(data.get("split", "")), kind=kind,
        all_of=all_of, min_hits=min_hits, match=match)


def load_questions(path: str | Path) -> list[AnswerQuestion]:
    """Read a JSON Lines question set; a malformed line is an error naming the line."""
    questions: list[AnswerQuestion] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read the question file {path}: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            questions.append(question_from_dict(json.loads(line), f"q{number}"))
        except (json.JSONDecodeError, ValueError, TypeError) as exc:
            raise InvalidInputError(
                f"{path}, line {number}: not a question ({exc}); each line needs "
                '"question" and "answers" (a list), or "answerable": false'
            ) from exc
    if not questions:
        raise InvalidInputError(f"{path} holds no questions")
    return questions


def filter_split(questions: Sequence[AnswerQuestion], split: str | None) -> list[AnswerQuestion]:
    """The questions of one split (``dev`` or ``test``); ``all`` or None keeps every one."""
    if split is None or split == "all":
        return list(questions)
    if split not in SPLITS:
        raise InvalidInputError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
    chosen = [q for q in questions if q.split == split]
    if not chosen:
        raise InvalidInputError(f"no question is in the {split!r} split")
    return chosen


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
    """The passages an answer cites, as the engine's own last check reads them."""
    return cited_texts(list(getattr(answer, "citations", []) or []), str(answer.answer),
                       list(getattr(answer, "sources", [])))


def is_right(question: AnswerQuestion, text: str, matching: str | None = None) -> bool:
    """Whether an answer (not a refusal) holds what ``question`` asks for: an accepted
    answer, every ``all_of`` item, or ``min_hits`` key points."""
    how = matching or question.match
    if question.all_of:
        return hits(text, question.all_of, how) == len(question.all_of)
    if question.min_hits:
        return hits(text, question.answers, how) >= question.min_hits
    return contains_answer(text, question.answers, how)


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

    @property
    def right(self) -> bool:
        """Correct for an answerable question, refused for an unanswerable one."""
        return self.correct if self.question.answerable else self.refused

    def to_dict(self) -> dict[str, Any]:
        q = self.question
        gold: dict[str, Any] = {"gold": list(q.all_of or q.answers)}
        if q.all_of:
            gold["all_of"] = True
        if q.min_hits:
            gold["min_hits"] = q.min_hits
        return {"id": q.id, "split": q.split, "kind": q.kind, "question": q.question,
                "answerable": q.answerable, **gold, "gold_source": q.source,
                "answer": self.answer, "quote": self.quote, "refused": self.refused,
                "correct": self.correct, "right": self.right, "cited": self.cited,
                "citation_correct": self.citation_correct, "unsupported": self.unsupported,
                "seconds": round(self.seconds, 3)}


def score_answer(question: AnswerQuestion, answer: Any, seconds: float = 0.0, *,
                 matching: str | None = None) -> AnswerScore:
    """Score one RagAnswer-like object (``answer``, ``sources``, optional ``citations``,
    ``refused`` and ``quote``) against its question. ``matching`` (``ragloom`` or
    ``squad``) overrides the question's own ``match``."""
    if matching is not None and matching not in MATCHINGS:
        raise InvalidInputError(f"unknown matching {matching!r}; use one of "
                                f"{', '.join(MATCHINGS)}")
    text = str(answer.answer)
    refused = bool(getattr(answer, "refused", False)) or is_refusal(text)
    cited = [] if refused else cited_sources(answer)
    unsupported = [] if refused else [
        c.text for c in unsupported_claims(text, _cited_passages(answer),
                                           question=question.question)]
    correct = question.answerable and not refused and is_right(question, text, matching)
    citation_correct = (question.answerable and not refused
                        and any(name in cited for name in question.sources))
    return AnswerScore(question=question, answer=text, refused=refused, correct=correct,
                       cited=cited, citation_correct=citation_correct,
                       unsupported=unsupported, seconds=seconds,
                       quote=str(getattr(answer, "quote", "") or ""))


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def kind_table(scores: Sequence[AnswerScore]) -> dict[str, dict[str, Any]]:
    """Per ``kind`` (in :data:`KINDS` order, then ``""`` for questions without one):
    questions, right, accuracy, refused."""
    order = {kind: i for i, kind in enumerate(KINDS)}
    kinds = sorted({s.question.kind for s in scores}, key=lambda k: order.get(k, len(KINDS)))
    table: dict[str, dict[str, Any]] = {}
    for kind in kinds:
        chosen = [s for s in scores if s.question.kind == kind]
        right = sum(s.right for s in chosen)
        table[kind or "(none)"] = {"questions": len(chosen), "right": right,
                                   "accuracy": _share(right, len(chosen)),
                                   "refused": sum(s.refused for s in chosen)}
    return table


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
        refused = [s for s in scores if s.refused]
        refused_right = sum(s.refused for s in unanswerable)
        with_number = [s for s in given if any(any(ch.isdigit() for ch in c)
                                                for c in s.unsupported)]
        seconds = sorted(s.seconds for s in scores)
        return {
            "questions": len(scores),
            "answerable": len(answerable),
            "unanswerable": len(unanswerable),
            "right": sum(s.right for s in scores),
            "accuracy": _share(sum(s.right for s in scores), len(scores)),
            "answer_accuracy": _share(sum(s.correct for s in answerable), len(answerable)),
            "citation_accuracy": _share(sum(s.citation_correct for s in answered), len(answered)),
            "answered": len(answered),
            "false_refusals": len(answerable) - len(answered),
            "unanswerable_answered": len(unanswerable) - refused_right,
            "correct_refusals": _share(refused_right, len(unanswerable)),
            "refusal_precision": _share(refused_right, len(refused)),
            "refusal_recall": _share(refused_right, len(unanswerable)),
            "answers_with_unsupported_claims": sum(bool(s.unsupported) for s in given),
            "answers_with_unsupported_numbers": len(with_number),
            "unsupported_claims": sum(len(s.unsupported) for s in given),
            "seconds_p50": round(seconds[len(seconds) // 2], 3) if seconds else 0.0,
            "seconds_total": round(sum(seconds), 2),
            "by_kind": kind_table(scores),
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
    matching: str | None = None,
) -> AnswerReport:
    """Ask every question through ``ask`` (e.g. ``NaiveRag(...).query``) and score it
    (``matching="squad"`` scores every question with SQuAD's normalisation)."""
    scores: list[AnswerScore] = []
    for question in questions:
        started = time.perf_counter()
        answer = ask(question.question)
        score = score_answer(question, answer, time.perf_counter() - started,
                             matching=matching)
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

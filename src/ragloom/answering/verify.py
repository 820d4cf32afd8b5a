"""The engine's last step: every answer, of every kind, is checked against what it cites.

Each strategy grounds its own answer (a lookup quotes the sentence when the model's
answer is not backed by it; lists, summaries and comparisons are built from the
passages), but the text a user finally sees is put together from several pieces:
items from different passages, a computed difference, a first step and a second one.
:func:`verified` checks the finished text the way the answer evaluation does: every
number and name it states must be in one of the passages it cites (a difference is
allowed when the answer shows its arithmetic), so no answer states a number that
none of its sources holds, whatever strategy made it.

* ``strict``: lines holding an unsupported claim are dropped when the rest of the
  answer still cites something; otherwise the answer becomes a refusal that says
  which claim could not be backed.
* ``check``: the answer is kept and the claims are listed in ``unsupported``.
* ``off``: nothing is checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePath

from ragloom.answering.grounding import cited_numbers, unsupported_claims
from ragloom.answering.result import EngineAnswer, refusal
from ragloom.types import QueryMatch

__all__ = ["cited_texts", "verified"]


def cited_texts(citations: Sequence[int], text: str, sources: Sequence[QueryMatch]) -> list[str]:
    """The passages an answer cites: its citation list, else the ``[n]`` markers of
    its text, else every source (an answer that cites nothing rests on all of them)."""
    numbers = list(citations) or cited_numbers(text)
    chosen = [sources[n - 1] for n in numbers if 1 <= n <= len(sources)] or list(sources)
    return _texts(chosen)


def _texts(matches: Sequence[QueryMatch]) -> list[str]:
    """The passages' texts, and their documents' file names: an answer may name the
    file it cites ("Main points of report-2026-27.docx")."""
    names = [PurePath(m.chunk.source).name for m in matches if m.chunk.source]
    return [*(m.chunk.text for m in matches), *dict.fromkeys(names)]


def _line_problems(line: str, sources: Sequence[QueryMatch], question: str,
                   fallback: Sequence[str]) -> list[str]:
    """The unsupported claims of one line, against the passages the line cites (or
    those of the whole answer when the line cites none)."""
    numbers = cited_numbers(line)
    texts = _texts([sources[n - 1] for n in numbers if 1 <= n <= len(sources)])
    return [c.text for c in unsupported_claims(line, texts or fallback, question=question)]


def verified(result: EngineAnswer, question: str, grounding: str) -> EngineAnswer:
    """``result`` once its claims are checked against the passages it cites."""
    if result.refused or grounding == "off" or not result.answer.strip():
        return result
    cited = cited_texts(result.citations, result.answer, result.sources)
    problems = [c.text for c in unsupported_claims(result.answer, cited, question=question)]
    if not problems:
        return result
    if grounding == "check":
        flagged = list(dict.fromkeys([*result.unsupported, *problems]))
        return replace(result, unsupported=flagged)
    lines = result.answer.splitlines()
    kept = [line for line in lines
            if not _line_problems(line, result.sources, question, cited)]
    cites_something = any(cited_numbers(line) for line in kept)
    if len(lines) > 1 and cites_something and len(kept) < len(lines):
        text = "\n".join(kept)
        still = unsupported_claims(text, cited_texts((), text, result.sources),
                                   question=question)
        if not still:
            return replace(result, answer=text, citations=cited_numbers(text))
    return replace(refusal("the answer stated " + ", ".join(problems[:3])
                           + ", which none of its cited passages holds",
                           result.sources, kind=result.kind, evidence=result.evidence),
                   strategy=result.strategy)

"""What the answer engine produces: the answer, its evidence, and the events of a stream.

:class:`EngineAnswer` is the engine's whole result: the answer text with ``[n]``
citations, the quote that supports it, the sources it is numbered against (the
retrieved passages, plus any the strategy read: a whole document for a summary, every
matching row for a list), why it refused, and what was flagged. The entry points
turn it into their own shape (``RagAnswer``, an OpenAI response, an SSE event).

A stream yields :class:`SourcesEvent` first, then :class:`TokenEvent`\\ s, then one
:class:`AnswerEvent`, or an :class:`ErrorEvent` in place of what could not be made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ragloom.answering.sentences import Sentence
from ragloom.types import ChatResponse, QueryMatch, Usage

Origin = Literal["model", "quote", "extract", "refusal", "none"]
NOT_FOUND = "I could not find the answer in the documents."


@dataclass(frozen=True)
class EngineAnswer:
    """One answer, with everything needed to show, check and cite it."""

    answer: str
    sources: list[QueryMatch] = field(default_factory=list)
    kind: str = "lookup"
    strategy: str = "lookup"
    quote: str = ""
    citations: list[int] = field(default_factory=list)
    refused: bool = False
    reason: str = ""
    origin: Origin = "model"
    model_answer: str = ""
    unsupported: list[str] = field(default_factory=list)
    points: list[dict[str, Any]] = field(default_factory=list)
    evidence: list[Sentence] = field(default_factory=list)
    response: ChatResponse | None = None
    model_calls: int = 0

    @property
    def usage(self) -> Usage:
        return self.response.usage if self.response is not None else Usage()

    def details(self) -> dict[str, Any]:
        """The fields an entry point adds to its JSON (kind, reason, points, flags)."""
        data: dict[str, Any] = {"kind": self.kind, "strategy": self.strategy}
        if self.refused:
            data["refusal_reason"] = self.reason
        if self.points:
            data["points"] = [dict(p) for p in self.points]
        if self.unsupported:
            data["unsupported"] = list(self.unsupported)
        return data


def refusal(reason: str, sources: list[QueryMatch], *, kind: str = "lookup",
            evidence: list[Sentence] | None = None) -> EngineAnswer:
    return EngineAnswer(answer=NOT_FOUND, sources=sources, kind=kind, strategy=kind,
                        refused=True, reason=reason, origin="refusal",
                        evidence=list(evidence or []))


def cite(text: str, number: int) -> str:
    return f"{text.rstrip()} [{number}]"

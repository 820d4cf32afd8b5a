"""``RagAnswer``: an answer with its numbered sources, usage and the answer engine's
verdicts (citations, quote, refusal, kind, points). Re-exported by :mod:`ragloom.types`
and :mod:`ragloom.rag`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragloom._types.chat import Usage
from ragloom._types.vectors import QueryMatch


@dataclass(frozen=True, kw_only=True)
class RagAnswer:
    """An answer with the passages it was given, numbered as in the prompt (what
    :class:`~ragloom.protocols.Rag` ``query`` returns; ``ragloom.rag`` re-exports it).

    Answers also carry ``citations`` (numbers of the sources relied on), ``quote``
    (the sentence that supports the answer), ``refused`` (the documents do not answer
    the question) with ``reason``, ``kind`` (lookup, list, comparison, summary,
    procedure, mentions), ``points`` (a list's items or a summary's points, each
    cited), ``unsupported`` (what the check flagged) and ``origin``: ``"model"`` (the
    model's answer, checked), ``"extract"`` (the answer span or items taken from the
    passages), ``"quote"`` (the supporting sentence) or ``"refusal"``.
    """

    question: str
    answer: str
    sources: list[QueryMatch] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    degraded: bool = False
    notice: str = ""
    retrieval_seconds: float = 0.0
    model: str = ""
    quote: str = ""
    citations: list[int] = field(default_factory=list)
    refused: bool = False
    origin: str = ""
    kind: str = ""
    reason: str = ""
    points: list[dict[str, Any]] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "sources": [dict(number=n, **m.to_dict()) for n, m in enumerate(self.sources, 1)],
            "usage": {"input_tokens": self.usage.input_tokens,
                      "output_tokens": self.usage.output_tokens,
                      "latency_s": round(self.usage.latency_s, 3),
                      "retrieval_s": round(self.retrieval_seconds, 3)},
            "model": self.model,
            "degraded": self.degraded,
            "notice": self.notice,
            "quote": self.quote,
            "citations": list(self.citations),
            "refused": self.refused,
            "refusal_reason": self.reason,
            "origin": self.origin,
            "kind": self.kind,
            "points": [dict(p) for p in self.points],
            "unsupported": list(self.unsupported),
        }

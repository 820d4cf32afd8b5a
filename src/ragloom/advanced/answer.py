"""What the advanced pipeline and the agent return, and the events of a stream.

:class:`AugmentedAnswer` is a :class:`~ragloom.rag.RagAnswer` that also says which
queries were searched, whether retrieval was skipped, and (for an agent) the
searches it made. A stream yields, in order: one :class:`SourcesEvent` (before the
first token: the ``onRetrieved`` of the specifications), :class:`TokenEvent`\\ s,
then one :class:`AnswerEvent` — or an :class:`ErrorEvent` in place of whatever
could not be produced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ragloom.rag import RagAnswer
from ragloom.types import QueryMatch

__all__ = [
    "AnswerEvent",
    "AugmentedAnswer",
    "ErrorEvent",
    "SourcesEvent",
    "StreamEvent",
    "TokenEvent",
]


@dataclass(frozen=True, kw_only=True)
class AugmentedAnswer(RagAnswer):
    """A RagAnswer plus how it was found.

    ``queries`` are the texts searched (after compression or expansion);
    ``searches`` lists an agent's tool calls (``{"tool", "query", "results"}``).
    """

    queries: tuple[str, ...] = ()
    routes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    retrieval_skipped: bool = False
    searches: tuple[Mapping[str, Any], ...] = ()
    session: str | None = None
    iterations: int = 0

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data.update(queries=list(self.queries),
                    routes={k: list(v) for k, v in self.routes.items()},
                    retrieval_skipped=self.retrieval_skipped,
                    searches=[dict(s) for s in self.searches], session=self.session)
        if self.iterations:
            data["iterations"] = self.iterations
        return data


@dataclass(frozen=True, kw_only=True)
class SourcesEvent:
    sources: list[QueryMatch]
    queries: tuple[str, ...] = ()
    retrieval_skipped: bool = False
    type: Literal["sources"] = "sources"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "queries": list(self.queries),
                "retrieval_skipped": self.retrieval_skipped,
                "sources": [dict(number=n, **m.to_dict())
                            for n, m in enumerate(self.sources, 1)]}


@dataclass(frozen=True, kw_only=True)
class TokenEvent:
    text: str
    type: Literal["token"] = "token"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text}


@dataclass(frozen=True, kw_only=True)
class AnswerEvent:
    answer: AugmentedAnswer
    type: Literal["answer"] = "answer"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "answer": self.answer.to_dict()}


@dataclass(frozen=True, kw_only=True)
class ErrorEvent:
    """A failure during the stream; ``error`` is the exception (not serialised)."""

    message: str
    kind: str = "RagError"
    error: BaseException | None = field(default=None, repr=False, compare=False)
    type: Literal["error"] = "error"

    @classmethod
    def of(cls, error: BaseException) -> ErrorEvent:
        return cls(message=str(error) or type(error).__name__, kind=type(error).__name__,
                   error=error)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "kind": self.kind, "message": self.message}


StreamEvent = SourcesEvent | TokenEvent | AnswerEvent | ErrorEvent

"""Content aggregators: many lists (queries x retrievers) in, one ranked list out.

* :class:`DefaultContentAggregator`: two-stage reciprocal-rank fusion — first the
  lists of each query's retrievers, then the per-query lists. One list passes
  through with its own scores (fusing a single list would only rescale them).
* :class:`RerankingContentAggregator`: fuses the same way, then re-scores every
  candidate against the original question with a
  :class:`~ragloom.advanced.scoring.ScoringModel` and drops those below
  ``min_score``.

Items are keyed by (retriever, chunk id), never by object identity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ragloom.advanced.query import Query
from ragloom.advanced.scoring import ScoringModel, ScoringReranker
from ragloom.errors import InvalidInputError
from ragloom.retrieval.multi import fuse_match_lists
from ragloom.types import QueryMatch

__all__ = [
    "ContentAggregator",
    "DefaultContentAggregator",
    "QueryResults",
    "RerankingContentAggregator",
    "match_key",
]


@dataclass(frozen=True, kw_only=True)
class QueryResults:
    """What the retrievers found for one query: one list per retriever."""

    query: Query
    lists: Sequence[Sequence[QueryMatch]] = field(default_factory=tuple)


@runtime_checkable
class ContentAggregator(Protocol):
    def aggregate(self, question: str, results: Sequence[QueryResults]) -> list[QueryMatch]: ...


def match_key(match: QueryMatch) -> str:
    return f"{match.knowledge_base}\x1f{match.chunk.id}"


def _rrf(lists: Sequence[Sequence[QueryMatch]], k: float) -> list[QueryMatch]:
    return fuse_match_lists(lists, k)


class DefaultContentAggregator:
    """Two-stage RRF; ``max_results`` caps the result (``None``: keep all)."""

    def __init__(self, *, k: float = 60.0, max_results: int | None = None) -> None:
        if k <= 0:
            raise InvalidInputError("RRF's k must be positive")
        self.k = k
        self.max_results = max_results

    def aggregate(self, question: str, results: Sequence[QueryResults]) -> list[QueryMatch]:
        per_query = [_rrf(r.lists, self.k) for r in results]
        fused = _rrf(per_query, self.k)
        return fused if self.max_results is None else fused[: self.max_results]


class RerankingContentAggregator:
    """Fuse (as :class:`DefaultContentAggregator`), then re-score with a scoring model.

    ``candidates`` is how many fused items are scored; ``min_score`` drops items
    scored below it; ``max_results`` caps the result.
    """

    def __init__(self, scoring_model: ScoringModel, *, min_score: float | None = None,
                 max_results: int | None = None, candidates: int = 20,
                 fusion: DefaultContentAggregator | None = None) -> None:
        self.reranker = ScoringReranker(scoring_model, min_score=min_score, top_k=max_results)
        self.candidates = candidates
        self.fusion = fusion or DefaultContentAggregator()

    def aggregate(self, question: str, results: Sequence[QueryResults]) -> list[QueryMatch]:
        fused = self.fusion.aggregate(question, results)[: self.candidates]
        return self.reranker.rerank(question, fused)

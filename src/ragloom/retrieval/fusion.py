"""Rankers: pure functions that fuse several ranked lists into one.

Every list is a sequence of ``(id, score)`` pairs, best first, where ``score`` is the
contract score in [0, 1]. Items are keyed by their id string, never by object
identity, so the same chunk returned by two searches (as two different objects)
is one item. Every ranker returns :class:`Fused` items whose ``score`` is in [0, 1]
(higher is better) and whose ``raw`` is the ranker's own number; ties break by id
so results are deterministic.

* :func:`reciprocal_rank_fusion` (RRF): ``sum 1 / (k + rank)``, divided by its
  largest possible value so a top hit in every list scores 1.
* :func:`weighted_fusion`: a weighted sum of per-list normalised scores
  (min-max by default), e.g. ``alpha`` for vector and ``1 - alpha`` for keyword.

New rankers register in :data:`RANKERS` under a name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

Ranking: TypeAlias = Sequence[tuple[str, float]]
Normalization: TypeAlias = Literal["minmax", "zscore", "none"]
NORMALIZATIONS: tuple[str, ...] = ("minmax", "zscore", "none")


@dataclass(frozen=True)
class Fused:
    """One fused item: its id, its score in [0, 1] and the ranker's raw value."""

    id: str
    score: float
    raw: float


def _ordered(totals: dict[str, float], scale: float) -> list[Fused]:
    items = [Fused(item_id, min(1.0, max(0.0, raw / scale)) if scale > 0 else 0.0, raw)
             for item_id, raw in totals.items()]
    items.sort(key=lambda item: (-item.raw, item.id))
    return items


def reciprocal_rank_fusion(
    rankings: Sequence[Ranking],
    *,
    k: float = 60.0,
    weights: Sequence[float] | None = None,
    max_lists: int | None = None,
) -> list[Fused]:
    """RRF: each list adds ``weight / (k + rank)`` (rank from 1) to the items it holds.

    The score is the sum divided by the best possible sum, ``sum(weights) / (k + 1)``
    (or, with ``max_lists``, what an item in that many lists could reach, for lists
    that cannot share items such as different knowledge bases).
    """
    if k <= 0:
        raise ValueError("RRF's k (impact_factor) must be positive")
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("give one weight per ranking")
    totals: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[str] = set()
        for rank, (item_id, _score) in enumerate(ranking, start=1):
            if item_id in seen:  # a repeated id counts at its best rank only
                continue
            seen.add(item_id)
            totals[item_id] = totals.get(item_id, 0.0) + weight / (k + rank)
    best = sorted(weights, reverse=True)[:max_lists] if max_lists is not None else weights
    return _ordered(totals, sum(best) / (k + 1.0))


def normalize(scores: Sequence[float], method: Normalization = "minmax") -> list[float]:
    """Scores of one list mapped into [0, 1] so lists of different scales can be summed.

    ``minmax`` maps the list's best to 1 and its worst to 0 (all equal: all 1);
    ``zscore`` maps (s - mean) / std through the normal CDF; ``none`` keeps the
    contract scores as they are.
    """
    if method == "none" or not scores:
        return [min(1.0, max(0.0, s)) for s in scores]
    if method == "minmax":
        low, high = min(scores), max(scores)
        if high - low <= 1e-12:
            return [1.0] * len(scores)
        return [(s - low) / (high - low) for s in scores]
    if method == "zscore":
        mean = sum(scores) / len(scores)
        std = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
        if std <= 1e-12:
            return [0.5] * len(scores)
        return [0.5 * (1.0 + math.erf((s - mean) / (std * math.sqrt(2.0)))) for s in scores]
    raise ValueError(f"unknown normalisation {method!r}; use one of {', '.join(NORMALIZATIONS)}")


def weighted_fusion(
    rankings: Sequence[Ranking],
    weights: Sequence[float],
    *,
    normalization: Normalization = "minmax",
) -> list[Fused]:
    """Weighted sum of normalised scores; an item absent from a list gets 0 from it.

    The score is the sum divided by the sum of the weights, so it stays in [0, 1].
    """
    if len(weights) != len(rankings):
        raise ValueError("give one weight per ranking")
    if any(w < 0 for w in weights):
        raise ValueError("weights must not be negative")
    totals: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        best: dict[str, float] = {}
        for item_id, score in ranking:
            best[item_id] = max(score, best.get(item_id, -math.inf))
        normalised = normalize(list(best.values()), normalization)
        for item_id, value in zip(best, normalised, strict=True):
            totals[item_id] = totals.get(item_id, 0.0) + weight * value
    return _ordered(totals, float(sum(weights)))


def alpha_fusion(
    vector: Ranking, keyword: Ranking, *, alpha: float = 0.5,
    normalization: Normalization = "minmax",
) -> list[Fused]:
    """Weighted fusion of a vector and a keyword list: ``alpha`` 1 is vector only, 0 keyword."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError("alpha must be between 0 (keyword only) and 1 (vector only)")
    return weighted_fusion([vector, keyword], [alpha, 1.0 - alpha], normalization=normalization)


def fuse_hybrid(
    vector: Ranking,
    keyword: Ranking,
    *,
    ranker: str = "rrf",
    impact_factor: float = 60.0,
    alpha: float = 0.5,
    normalization: Normalization = "minmax",
) -> list[Fused]:
    """Fuse a vector and a keyword ranking with the ranker named as in ``SearchOptions``."""
    if ranker == "rrf":
        return reciprocal_rank_fusion([vector, keyword], k=impact_factor)
    if ranker == "weighted":
        return alpha_fusion(vector, keyword, alpha=alpha, normalization=normalization)
    raise ValueError(f"unknown ranker {ranker!r}; use one of {', '.join(RANKERS)}")


#: The rankers ``SearchOptions.ranker`` can name, with what each does.
RANKERS: dict[str, str] = {
    "rrf": "reciprocal rank fusion (rank-based; impact_factor is k)",
    "weighted": "weighted sum of min-max normalised scores (alpha: 0 keyword ... 1 vector)",
}

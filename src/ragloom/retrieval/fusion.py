"""Rankers: pure functions that fuse several ranked lists into one.

Every list is a sequence of ``(id, score)`` pairs, best first, where ``score`` is the
contract score in [0, 1]. Items are keyed by their id string, never by object
identity, so the same chunk returned by two searches (as two different objects)
is one item. Every ranker returns :class:`Fused` items whose ``score`` is in [0, 1]
(higher is better) and whose ``raw`` is the ranker's own number.

* :func:`reciprocal_rank_fusion` (RRF): ``sum 1 / (k + rank)``, divided by its
  largest possible value so a top hit in every list scores 1.
* :func:`weighted_fusion`: a weighted sum of per-list normalised scores
  (min-max by default), e.g. ``alpha`` for vector and ``1 - alpha`` for keyword.
  :func:`alpha_fusion` normalises the keyword side's BM25 values themselves, not
  their contract scores (see its docstring).

Rules that hold for any list size:

* **Empty lists do not count.** The weights are re-normalised over the lists that
  have results, so a hybrid search whose keyword side found nothing scores the
  vector side's matches as a vector-only search would rank them, up to 1.
* **Min-max needs a range.** A list's worst item maps to 0 only when the list was
  cut short (the search had more items below it) and its scores differ; otherwise
  (one item, all scores equal, or every item the search could find) the bottom of
  the range is the list's *no-evidence* score (its ``floor``: 0 for BM25, the score
  of an orthogonal vector for vector search), so a lone or tied match keeps what
  its own score says instead of becoming 1.0 or 0 by accident. Items at or below
  the floor add nothing.
* **Ties are broken by a stated rule:** equal fused scores (to 12 significant
  digits) go to the item with the better rank in any one list, then to the one
  with the larger sum of its input scores, then by id.

New rankers register in :data:`RANKERS` under a name.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ragloom.scores import score_to_bm25

Ranking: TypeAlias = Sequence[tuple[str, float]]
Normalization: TypeAlias = Literal["minmax", "zscore", "none"]
NORMALIZATIONS: tuple[str, ...] = ("minmax", "zscore", "none")

#: The contract score of no evidence on each side of a hybrid search: BM25 0 (no
#: query word) and cosine 0 (an unrelated text; also a dot product of 0).
KEYWORD_FLOOR = 0.0
VECTOR_FLOOR = 0.5

_EPSILON = 1e-12


@dataclass(frozen=True)
class Fused:
    """One fused item: its id, its score in [0, 1] and the ranker's raw value."""

    id: str
    score: float
    raw: float


@dataclass
class _Evidence:
    """What the tie rule looks at: the best rank in any list and the input scores."""

    rank: int
    total: float


def _evidence(rankings: Sequence[Ranking], wanted: set[str] | None) -> dict[str, _Evidence]:
    found: dict[str, _Evidence] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for rank, (item_id, score) in enumerate(ranking, start=1):
            if item_id in seen or (wanted is not None and item_id not in wanted):
                continue
            seen.add(item_id)
            known = found.get(item_id)
            if known is None:
                found[item_id] = _Evidence(rank, score)
            else:
                known.rank = min(known.rank, rank)
                known.total += score
    return found


def _contenders(totals: dict[str, float], limit: int) -> dict[str, float]:
    """The items that can be among the first ``limit`` once ordered: every item
    whose total rounds (to 12 significant digits) to at least what the
    ``limit``-th best total rounds to, ties included, and a few more.

    Rounding moves a value by at most 5e-12 of itself, so a total more than 1e-9 of
    the limit-th below it cannot round up to it; the rest are never looked at."""
    if limit >= len(totals):
        return totals
    edge = heapq.nlargest(limit, totals.values())[-1]
    low = edge - abs(edge) * 1e-9
    return {item_id: raw for item_id, raw in totals.items() if raw >= low}


def _ordered(
    totals: dict[str, float], scale: float, rankings: Sequence[Ranking],
    limit: int | None = None,
) -> list[Fused]:
    if limit is not None:
        if limit < 1:
            return []
        totals = _contenders(totals, limit)
    items = [Fused(item_id, min(1.0, max(0.0, raw / scale)) if scale > 0 else 0.0, raw)
             for item_id, raw in totals.items()]
    evidence = _evidence(rankings, None if limit is None else set(totals))

    def key(item: Fused) -> tuple[float, int, float, str]:
        # Sums of the same terms in another order differ in the last bits: rounding
        # makes them the tie they are, for the rule to break.
        seen = evidence[item.id]
        return (-float(f"{item.raw:.12g}"), seen.rank, -seen.total, item.id)

    # Each key once (formatting the rounded score is the dear part of fusing).
    keyed = sorted(((key(item), item) for item in items), key=lambda pair: pair[0])
    items = [item for _, item in keyed]
    rounded = [pair[0][0] for pair in keyed]
    # A tie stays a tie in the output: each group shares its best score.
    start = 0
    for end in range(1, len(items) + 1):
        if end < len(items) and rounded[end] == rounded[start]:
            continue
        if end - start > 1:
            best = max(items[start:end], key=lambda fused: fused.raw)
            items[start:end] = [Fused(item.id, best.score, best.raw)
                                for item in items[start:end]]
        start = end
    return items if limit is None else items[:limit]


def reciprocal_rank_fusion(
    rankings: Sequence[Ranking],
    *,
    k: float = 60.0,
    weights: Sequence[float] | None = None,
    max_lists: int | None = None,
    limit: int | None = None,
) -> list[Fused]:
    """RRF: each list adds ``weight / (k + rank)`` (rank from 1) to the items it holds.

    The score is the sum divided by the best possible sum over the lists that have
    results, ``sum(weights) / (k + 1)`` (or, with ``max_lists``, what an item in that
    many lists could reach, for lists that cannot share items such as different
    knowledge bases). ``limit``: only the first that many items (what slicing the
    whole list gives, without ordering the rest).
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
    present = [w for ranking, w in zip(rankings, weights, strict=True) if ranking]
    best = sorted(present, reverse=True)[:max_lists] if max_lists is not None else present
    return _ordered(totals, sum(best) / (k + 1.0), rankings, limit)


def normalize(
    scores: Sequence[float],
    method: Normalization = "minmax",
    *,
    floor: float | None = None,
) -> list[float]:
    """Scores of one list mapped into [0, 1] so lists of different scales can be summed.

    ``minmax`` maps the list's best to 1 and the bottom of its range to 0: the
    list's worst score, or ``floor`` (the score that means "no evidence") when given.
    Without a floor, a list whose scores are all equal (or a single score) has no
    range, and its contract scores are kept as they are rather than all becoming 1.
    ``zscore`` maps (s - mean) / std through the normal CDF (all equal: 0.5);
    ``none`` keeps the contract scores as they are.
    """
    if method == "none" or not scores:
        return [min(1.0, max(0.0, s)) for s in scores]
    if method == "minmax":
        high = max(scores)
        low = min(scores) if floor is None else floor
        if high - low <= _EPSILON:
            if floor is None:
                return [min(1.0, max(0.0, s)) for s in scores]
            return [0.0] * len(scores)
        return [min(1.0, max(0.0, (s - low) / (high - low))) for s in scores]
    if method == "zscore":
        mean = sum(scores) / len(scores)
        std = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
        if std <= _EPSILON:
            return [0.5] * len(scores)
        return [0.5 * (1.0 + math.erf((s - mean) / (std * math.sqrt(2.0)))) for s in scores]
    raise ValueError(f"unknown normalisation {method!r}; use one of {', '.join(NORMALIZATIONS)}")


def _range_floor(scores: Sequence[float], floor: float | None, cut: bool) -> float | None:
    """The bottom of a list's min-max range (see the module's rules)."""
    if cut and scores and max(scores) - min(scores) > _EPSILON:
        return min(scores)
    return floor


def weighted_fusion(
    rankings: Sequence[Ranking],
    weights: Sequence[float],
    *,
    normalization: Normalization = "minmax",
    floors: Sequence[float | None] | None = None,
    cut: Sequence[bool] | None = None,
    limit: int | None = None,
) -> list[Fused]:
    """Weighted sum of normalised scores; an item absent from a list gets 0 from it.

    The score is the sum divided by the sum of the weights of the lists that have
    results, so it stays in [0, 1]. ``floors`` give each list's no-evidence score and
    ``cut`` says which lists were cut short by the search's depth (see the module's
    rules; without them every list's own range is used, as plain min-max does).
    ``limit`` is as in :func:`reciprocal_rank_fusion`.
    """
    return _weighted(rankings, weights, normalization, floors, cut, rankings, limit)


def _weighted(
    rankings: Sequence[Ranking],
    weights: Sequence[float],
    normalization: Normalization,
    floors: Sequence[float | None] | None,
    cut: Sequence[bool] | None,
    inputs: Sequence[Ranking],
    limit: int | None = None,
) -> list[Fused]:
    """:func:`weighted_fusion` of ``rankings``; ties are broken on ``inputs`` (the same
    items with their contract scores, when ``rankings`` hold other values)."""
    if len(weights) != len(rankings):
        raise ValueError("give one weight per ranking")
    if any(w < 0 for w in weights):
        raise ValueError("weights must not be negative")
    floors = list(floors) if floors is not None else [None] * len(rankings)
    cuts = list(cut) if cut is not None else [floor is None for floor in floors]
    if len(floors) != len(rankings) or len(cuts) != len(rankings):
        raise ValueError("give one floor and one cut flag per ranking")
    totals: dict[str, float] = {}
    for ranking, weight, floor, was_cut in zip(rankings, weights, floors, cuts, strict=True):
        best: dict[str, float] = {}
        for item_id, score in ranking:
            best[item_id] = max(score, best.get(item_id, -math.inf))
        values = list(best.values())
        bottom = _range_floor(values, floor, was_cut) if normalization == "minmax" else None
        normalised = normalize(values, normalization, floor=bottom)
        for item_id, value in zip(best, normalised, strict=True):
            totals[item_id] = totals.get(item_id, 0.0) + weight * value
    present = sum(w for ranking, w in zip(rankings, weights, strict=True) if ranking)
    return _ordered(totals, float(present), inputs, limit)


def alpha_fusion(
    vector: Ranking, keyword: Ranking, *, alpha: float = 0.5,
    normalization: Normalization = "minmax", depth: int | None = None,
    cut: tuple[bool, bool] | None = None, limit: int | None = None,
) -> list[Fused]:
    """Weighted fusion of a vector and a keyword list: ``alpha`` 1 is vector only, 0 keyword.

    ``depth`` is how many results each side was asked for: a shorter list holds
    everything that side found, so its range starts at the side's no-evidence score
    (:data:`VECTOR_FLOOR`, :data:`KEYWORD_FLOOR`). Without it both lists count as cut.
    ``cut`` says it directly instead (vector, keyword), e.g. for lists filtered after
    the search.

    Both lists hold contract scores; min-max and z-score see the keyword side's BM25
    values (:func:`~ragloom.retrieval.scores.score_to_bm25`). Those normalisations
    are affine, so they should see each retriever's own measure: the vector contract
    score is affine in the cosine already, but the BM25 one, ``b / (b + 10)``, bends,
    which squeezed the strong keyword matches together and made the fused order depend
    on the display constant 10 (on SciFact, nDCG@10 0.7257 with it, 0.7309 without;
    docs/retrieval.md). Ties are still broken on the contract scores.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError("alpha must be between 0 (keyword only) and 1 (vector only)")
    if cut is None:
        cut = (depth is None or len(vector) >= depth, depth is None or len(keyword) >= depth)
    measured = keyword
    if normalization != "none":
        measured = [(item_id, score_to_bm25(score)) for item_id, score in keyword]
    return _weighted([vector, measured], [alpha, 1.0 - alpha], normalization,
                     [VECTOR_FLOOR, score_to_bm25(KEYWORD_FLOOR)], list(cut),
                     [vector, keyword], limit)


def fuse_hybrid(
    vector: Ranking,
    keyword: Ranking,
    *,
    ranker: str = "rrf",
    impact_factor: float = 60.0,
    alpha: float = 0.5,
    normalization: Normalization = "minmax",
    depth: int | None = None,
    cut: tuple[bool, bool] | None = None,
    limit: int | None = None,
) -> list[Fused]:
    """Fuse a vector and a keyword ranking with the ranker named as in ``SearchOptions``.

    Keyword items with a score at or below :data:`KEYWORD_FLOOR` are no match and are
    left out; ``depth`` and ``cut`` are as in :func:`alpha_fusion`, ``limit`` as in
    :func:`reciprocal_rank_fusion`.
    """
    keyword = [(item_id, score) for item_id, score in keyword if score > KEYWORD_FLOOR]
    if ranker == "rrf":
        return reciprocal_rank_fusion([vector, keyword], k=impact_factor, limit=limit)
    if ranker == "weighted":
        return alpha_fusion(vector, keyword, alpha=alpha, normalization=normalization,
                            depth=depth, cut=cut, limit=limit)
    raise ValueError(f"unknown ranker {ranker!r}; use one of {', '.join(RANKERS)}")


#: The rankers ``SearchOptions.ranker`` can name, with what each does.
RANKERS: dict[str, str] = {
    "rrf": "reciprocal rank fusion (rank-based; impact_factor is k)",
    "weighted": "weighted sum of min-max normalised scores (alpha: 0 keyword ... 1 vector)",
}

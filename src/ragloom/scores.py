"""The score contract: every match's ``score`` is in [0, 1] and higher is better.

Each function maps one raw measure onto that scale, monotonically, so ranking by
``score`` equals ranking by the raw measure and ``score_threshold`` means the same
thing on every store. The raw value travels alongside as ``raw_score``.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: BM25 values this size map to a score of 0.5; typical top hits fall around it.
BM25_HALF_SCORE = 10.0


def cosine_to_score(similarity: FloatArray) -> FloatArray:
    """Cosine similarity in [-1, 1] to (1 + cos) / 2."""
    return np.clip((1.0 + similarity) / 2.0, 0.0, 1.0)


def dot_to_score(product: FloatArray) -> FloatArray:
    """Unbounded dot product to a logistic curve (0.5 at zero)."""
    return 1.0 / (1.0 + np.exp(-np.clip(product, -500, 500)))


def euclidean_to_score(distance: FloatArray) -> FloatArray:
    """Distance >= 0 to 1 / (1 + d): identical vectors score 1."""
    return 1.0 / (1.0 + np.maximum(distance, 0.0))


def bm25_to_score(bm25: FloatArray) -> FloatArray:
    """BM25 >= 0 (higher is better) to b / (b + BM25_HALF_SCORE)."""
    clipped = np.maximum(bm25, 0.0)
    return clipped / (clipped + BM25_HALF_SCORE)


def score_to_bm25(score: float) -> float:
    """The BM25 value a keyword contract score came from (the inverse of
    :func:`bm25_to_score`, exact up to rounding); 0 for a score of 0 or less."""
    if score <= 0.0:
        return 0.0
    # bm25_to_score never reaches 1 for a finite BM25; keep the inverse finite anyway.
    score = min(score, math.nextafter(1.0, 0.0))
    return BM25_HALF_SCORE * score / (1.0 - score)


#: The vector score of a chunk that a hybrid search's vector side did not return
#: (cosine 0, the vector contract's no-evidence score).
VECTOR_NO_EVIDENCE = 0.5


def hybrid_score(vector: float | None, keyword: float | None, alpha: float) -> float:
    """A hybrid match's absolute score from its own two contract scores, alone.

    A weighted probabilistic OR, ``1 - (1 - v)^a * (1 - k)^b``, of the vector score
    ``v`` ((1 + cos) / 2) and the keyword score ``k`` (BM25 / (BM25 + 10)), with
    ``a = min(1, alpha / (1 - alpha))`` and ``b = min(1, (1 - alpha) / alpha)``: at
    the default alpha 0.5 both are 1; alpha 1 gives exactly the vector score and
    alpha 0 exactly the keyword score. Evidence on one side never lowers the score a
    chunk has from the other: a chunk no keyword matches scores what vector search
    gives it. A side that did not return the chunk counts as no evidence (``v`` 0.5,
    i.e. cosine 0; ``k`` 0). It depends on nothing else in the results, so a
    threshold on it means the same for every query (BM25 itself still depends on the
    collection's term statistics).
    """
    v = VECTOR_NO_EVIDENCE if vector is None else min(1.0, max(0.0, vector))
    k = 0.0 if keyword is None else min(1.0, max(0.0, keyword))
    if alpha >= 1.0:
        return v
    if alpha <= 0.0:
        return k
    a = min(1.0, alpha / (1.0 - alpha))
    b = min(1.0, (1.0 - alpha) / alpha)
    return float(1.0 - (1.0 - v) ** a * (1.0 - k) ** b)

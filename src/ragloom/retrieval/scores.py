"""The score contract, re-exported: it lives in :mod:`ragloom.scores`, below the stores
that score matches with it and the retrieval layer that fuses them."""

from ragloom.scores import (
    BM25_HALF_SCORE,
    VECTOR_NO_EVIDENCE,
    FloatArray,
    bm25_to_score,
    cosine_to_score,
    dot_to_score,
    euclidean_to_score,
    hybrid_score,
    score_to_bm25,
)

__all__ = [
    "BM25_HALF_SCORE",
    "VECTOR_NO_EVIDENCE",
    "FloatArray",
    "bm25_to_score",
    "cosine_to_score",
    "dot_to_score",
    "euclidean_to_score",
    "hybrid_score",
    "score_to_bm25",
]

"""Re-rankers: re-score retrieved matches for a question (protocols.Reranker)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ragloom.errors import InvalidInputError
from ragloom.protocols import EmbeddingProvider
from ragloom.types import Embedding, QueryMatch, Vector


def _dense(embedding: Embedding) -> npt.NDArray[np.float64]:
    if not isinstance(embedding, Vector):
        raise InvalidInputError("MaximalMarginalRelevance needs dense embeddings")
    values = embedding.values.astype(np.float64)
    norm = float(np.linalg.norm(values))
    return values / norm if norm > 0 else values


class MaximalMarginalRelevance:
    """MMR (Carbonell & Goldstein, 1998): relevant matches that do not repeat each other.

    Greedily picks the match maximising
    ``lambda_ * sim(question, d) - (1 - lambda_) * max sim(d, already picked)``
    (cosine similarities of the embedder's vectors). ``lambda_`` 1 keeps the
    relevance order; lower values favour diversity. The candidates' texts are
    re-embedded with ``embedder`` (give it the knowledge base's embedder).

    The new ``score`` is ``(1 + mmr) / 2`` made non-increasing down the list, so it
    stays in [0, 1] with higher better; ``raw_score`` is the MMR value.
    """

    def __init__(
        self, embedder: EmbeddingProvider, lambda_: float = 0.5, top_k: int | None = None
    ) -> None:
        if not 0.0 <= lambda_ <= 1.0:
            raise InvalidInputError("MMR's lambda_ must be between 0 (diverse) and 1 (relevant)")
        if top_k is not None and top_k < 1:
            raise InvalidInputError("MMR's top_k must be at least 1")
        self.embedder = embedder
        self.lambda_ = lambda_
        self.top_k = top_k

    def rerank(self, question: str, matches: Sequence[QueryMatch]) -> list[QueryMatch]:
        if not matches:
            return []
        query = _dense(self.embedder.embed_query(question))
        vectors = np.stack([_dense(e) for e in
                            self.embedder.embed_documents([m.chunk.text for m in matches])])
        return self.rerank_vectors(query, vectors, matches)

    def rerank_vectors(
        self,
        query: npt.NDArray[np.float64],
        vectors: npt.NDArray[np.float64],
        matches: Sequence[QueryMatch],
    ) -> list[QueryMatch]:
        """MMR with given unit vectors (one row per match), for callers that have them."""
        relevance = vectors @ query
        similarity = vectors @ vectors.T
        wanted = min(self.top_k or len(matches), len(matches))
        chosen: list[int] = []
        values: list[float] = []
        redundancy = np.full(len(matches), -np.inf)
        remaining = set(range(len(matches)))
        while len(chosen) < wanted:
            penalty = np.where(np.isfinite(redundancy), redundancy, 0.0)
            mmr = self.lambda_ * relevance - (1.0 - self.lambda_) * penalty
            # Ties go to the earlier (better-ranked) match.
            best = min(remaining, key=lambda i: (-mmr[i], i))
            chosen.append(best)
            values.append(float(mmr[best]))
            remaining.discard(best)
            redundancy = np.maximum(redundancy, similarity[best])
        result: list[QueryMatch] = []
        ceiling = 1.0
        for index, value in zip(chosen, values, strict=True):
            ceiling = min(ceiling, max(0.0, min(1.0, (1.0 + value) / 2.0)))
            m = matches[index]
            result.append(QueryMatch(chunk=m.chunk, score=ceiling, raw_score=value,
                                     knowledge_base=m.knowledge_base))
        return result

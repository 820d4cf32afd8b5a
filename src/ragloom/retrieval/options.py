"""Retrieval options that travel together: library, CLI and server use the same object."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from ragloom.errors import QueryError
from ragloom.filters import MetadataFilters

SearchMode: TypeAlias = Literal["vector", "keyword", "hybrid"]
RankerName: TypeAlias = Literal["rrf", "weighted"]
SEARCH_MODES: tuple[str, ...] = ("vector", "keyword", "hybrid")
RANKERS: tuple[str, ...] = ("rrf", "weighted")
ScoreNormalization: TypeAlias = Literal["absolute", "per_query"]
SCORE_NORMALIZATIONS: tuple[str, ...] = ("absolute", "per_query")


@dataclass(frozen=True, kw_only=True)
class SearchOptions:
    """How to search.

    ``score_threshold`` drops matches whose score (in [0, 1]) is below it;
    ``top_k`` is the most matches returned (``max_chunks`` in the specifications).

    ``score_normalization`` says what a hybrid match's reported ``score`` is (vector
    and keyword scores are absolute in both): ``"absolute"`` (default) a fixed
    function of the chunk's own vector and keyword scores
    (:func:`~ragloom.retrieval.scores.hybrid_score`), so it and the threshold mean
    the same for every query; ``"per_query"`` the fused score, rescaled within each
    query's results (the best hit near 1), with the threshold applied to each side
    before fusion. The ranking is the same in both.

    ``include_embeddings`` gives every match its stored embedding.
    ``impact_factor`` is RRF's k; ``alpha`` weighs vector (1) against keyword (0)
    in the weighted ranker (min-max normalised scores; ``extra={"normalization":
    "zscore"}`` or ``"none"`` change that).

    The default ranker, weighted with alpha 0.5, was chosen by measurement: on BEIR
    SciFact with the bundled MiniLM it gives nDCG@10 0.730 against RRF's 0.720
    (min-max over the keyword side's BM25 values; docs/retrieval.md has the full
    table); 0.5 is the neutral weight, not a fit.
    """

    mode: SearchMode = "hybrid"
    top_k: int = 5
    score_threshold: float | None = None
    ranker: RankerName = "weighted"
    impact_factor: float = 60.0
    alpha: float = 0.5
    filters: MetadataFilters | None = None
    score_normalization: ScoreNormalization = "absolute"
    candidates: int = 100
    extra: dict[str, Any] = field(default_factory=dict)
    #: Graph-aware retrieval (see ragloom.graph.retrieval): chunks mentioning the
    #: question's entities and their neighbours join the candidates before fusion.
    graph: bool = False
    graph_hops: int = 1
    graph_fan_out: int = 10
    graph_weight: float = 0.5
    #: Each match carries its chunk's stored embedding (``QueryMatch.embedding``); the
    #: store must be :class:`~ragloom.protocols.EmbeddingReadable` (every store shipped is).
    include_embeddings: bool = False

    def __post_init__(self) -> None:
        if self.mode not in SEARCH_MODES:
            raise QueryError(
                f"unknown search mode {self.mode!r}; use one of {', '.join(SEARCH_MODES)}"
            )
        if self.score_normalization not in SCORE_NORMALIZATIONS:
            raise QueryError(f"unknown score_normalization {self.score_normalization!r}; "
                             f"use one of {', '.join(SCORE_NORMALIZATIONS)}")
        if self.ranker not in RANKERS:
            raise QueryError(f"unknown ranker {self.ranker!r}; use one of {', '.join(RANKERS)}")
        if self.top_k < 1:
            raise QueryError("top_k must be at least 1")
        if self.score_threshold is not None and not 0.0 <= self.score_threshold <= 1.0:
            raise QueryError("score_threshold is a score in [0, 1]")
        if not 0.0 <= self.alpha <= 1.0:
            raise QueryError("alpha must be between 0 (keyword only) and 1 (vector only)")
        if self.impact_factor <= 0:
            raise QueryError("impact_factor (RRF k) must be positive")
        if self.graph_hops < 0 or self.graph_fan_out < 1 or self.graph_weight < 0:
            raise QueryError("graph_hops must be >= 0, graph_fan_out >= 1 and "
                             "graph_weight >= 0")

    def with_(self, **changes: Any) -> SearchOptions:
        return replace(self, **changes)

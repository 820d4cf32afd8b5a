"""Rankers: keyed by id, scores in [0, 1], hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloom.retrieval.fusion import (
    KEYWORD_FLOOR,
    VECTOR_FLOOR,
    alpha_fusion,
    fuse_hybrid,
    normalize,
    reciprocal_rank_fusion,
    weighted_fusion,
)
from ragloom.retrieval.scores import bm25_to_score, score_to_bm25

ids = st.sampled_from([f"c{i}" for i in range(12)])
ranking = st.lists(st.tuples(ids, st.floats(0, 1)), max_size=10, unique_by=lambda p: p[0]).map(
    lambda items: sorted(items, key=lambda p: -p[1]))


def test_rrf_hand_computed() -> None:
    fused = reciprocal_rank_fusion([[("a", 0.9), ("b", 0.8)], [("b", 0.7), ("c", 0.1)]], k=60)
    raw = {f.id: f.raw for f in fused}
    assert raw["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert raw["a"] == pytest.approx(1 / 61)
    assert raw["c"] == pytest.approx(1 / 62)
    assert [f.id for f in fused] == ["b", "a", "c"]
    assert fused[0].score == pytest.approx((1 / 62 + 1 / 61) / (2 / 61))


def test_rrf_top_of_every_list_scores_one() -> None:
    fused = reciprocal_rank_fusion([[("a", 0.1)], [("a", 0.2)], [("a", 0.3)]])
    assert fused[0].score == pytest.approx(1.0)


def test_fusion_keys_by_id_not_identity() -> None:
    # Equal strings built separately are different objects but the same chunk.
    first = "".join(["chunk", "-1"])
    second = "".join(["chunk-", "1"])
    assert first is not second
    fused = reciprocal_rank_fusion([[(first, 0.5)], [(second, 0.5)]])
    assert len(fused) == 1
    assert len(alpha_fusion([(first, 0.5)], [(second, 0.4)])) == 1


def test_weighted_alpha_extremes_follow_one_side() -> None:
    vector = [("a", 0.9), ("b", 0.5), ("c", 0.1)]
    keyword = [("c", 0.9), ("b", 0.3), ("a", 0.2)]
    assert [f.id for f in alpha_fusion(vector, keyword, alpha=1.0)] == ["a", "b", "c"]
    assert [f.id for f in alpha_fusion(vector, keyword, alpha=0.0)] == ["c", "b", "a"]
    half = {f.id: f.score for f in alpha_fusion(vector, keyword, alpha=0.5)}
    # min-max: vector a=1, b=0.5, c=0; keyword over BM25 (contract 0.9, 0.3, 0.2 are
    # BM25 90, 30/7, 2.5): c=1, b=(30/7 - 2.5)/87.5, a=0.
    assert half["b"] == pytest.approx(0.5 * 0.5 + 0.5 * ((30 / 7 - 2.5) / 87.5))


def test_keyword_side_is_min_maxed_as_bm25_not_as_its_contract_score() -> None:
    # BM25 30, 20, 10: the middle one is half way, whatever b / (b + 10) makes of them
    # (0.75, 0.667, 0.5 would put it at 2/3).
    keyword = [(name, value / (value + 10.0)) for name, value in
               (("x", 30.0), ("y", 20.0), ("z", 10.0))]
    fused = alpha_fusion([], keyword, alpha=0.0, depth=3)
    assert [(f.id, f.score) for f in fused] == [
        ("x", pytest.approx(1.0)), ("y", pytest.approx(0.5)), ("z", pytest.approx(0.0))]
    # Not cut (fewer than the depth): the range starts at BM25 0, no evidence.
    uncut = {f.id: f.score for f in alpha_fusion([], keyword, alpha=0.0, depth=10)}
    assert uncut == pytest.approx({"x": 1.0, "y": 2 / 3, "z": 1 / 3})
    # "none" keeps contract scores as they are.
    plain = alpha_fusion([], keyword, alpha=0.0, depth=3, normalization="none")
    assert plain[1].score == pytest.approx(20 / 30)
    assert score_to_bm25(bm25_to_score(np.array([7.5]))[0]) == pytest.approx(7.5)
    assert score_to_bm25(0.0) == 0.0 and score_to_bm25(1.0) < float("inf")


def test_normalize_methods() -> None:
    assert normalize([2.0, 4.0, 3.0]) == [0.0, 1.0, 0.5]
    # No range: the contract scores stand instead of all becoming 1.
    assert normalize([0.3, 0.3]) == [0.3, 0.3]
    assert normalize([0.4]) == [0.4]
    # With a floor (the no-evidence score) the range starts there.
    assert normalize([0.8, 0.65], floor=0.5) == pytest.approx([1.0, 0.5])
    assert normalize([0.5, 0.4], floor=0.5) == [0.0, 0.0]
    z = normalize([1.0, 2.0, 3.0], "zscore")
    assert z[1] == pytest.approx(0.5) and z[0] < 0.5 < z[2]
    assert normalize([0.3, 1.5], "none") == [0.3, 1.0]
    with pytest.raises(ValueError, match="normalisation"):
        normalize([1.0], "bogus")  # type: ignore[arg-type]


@settings(max_examples=100, deadline=None)
@given(vector=ranking, keyword=ranking, k=st.floats(1, 100), alpha=st.floats(0, 1),
       method=st.sampled_from(["minmax", "zscore", "none"]))
def test_every_ranker_obeys_the_score_contract(
    vector: list[tuple[str, float]], keyword: list[tuple[str, float]], k: float, alpha: float,
    method: str,
) -> None:
    for fused in (fuse_hybrid(vector, keyword, ranker="rrf", impact_factor=k),
                  fuse_hybrid(vector, keyword, ranker="weighted", alpha=alpha,
                              normalization=method)):  # type: ignore[arg-type]
        # Keyword scores at the floor (0) are no match.
        assert {f.id for f in fused} == ({i for i, _ in vector}
                                         | {i for i, s in keyword if s > KEYWORD_FLOOR})
        assert all(0.0 <= f.score <= 1.0 for f in fused)
        assert [f.score for f in fused] == sorted((f.score for f in fused), reverse=True)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([[("a", 1.0)]], k=0)
    with pytest.raises(ValueError):
        weighted_fusion([[("a", 1.0)]], [0.5, 0.5])
    with pytest.raises(ValueError):
        fuse_hybrid([], [], ranker="nope")


def test_single_blas_thread_limits_and_restores() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from ragloom.retrieval.threads import single_blas_thread

    def blas_threads() -> list[int]:
        return [i["num_threads"] for i in threadpoolctl.threadpool_info()
                if i["user_api"] == "blas"]

    before = blas_threads()
    with single_blas_thread():
        assert all(n == 1 for n in blas_threads())
    assert blas_threads() == before


# ------------------------------------------------------------------ any list size
WEIGHTED = {"ranker": "weighted", "alpha": 0.5, "depth": 100}


@pytest.mark.parametrize("ranker", ["weighted", "rrf"])
def test_empty_lists(ranker: str) -> None:
    assert fuse_hybrid([], [], ranker=ranker, depth=100) == []
    # One side empty: the weights are re-normalised, so the best match can reach 1.
    vector_only = fuse_hybrid([("a", 0.8), ("b", 0.7)], [], ranker=ranker, depth=100)
    assert [f.id for f in vector_only] == ["a", "b"]
    assert vector_only[0].score == pytest.approx(1.0)
    keyword_only = fuse_hybrid([], [("k", 0.2)], ranker=ranker, depth=100)
    assert [(f.id, f.score) for f in keyword_only] == [("k", pytest.approx(1.0))]


def test_a_single_result_is_measured_against_no_evidence() -> None:
    # One vector match at the no-evidence score adds nothing, not 1.
    at_floor = alpha_fusion([("a", VECTOR_FLOOR)], [("b", 0.3)], depth=100)
    assert {f.id: f.score for f in at_floor} == {"b": pytest.approx(0.5), "a": 0.0}
    # A single match above it counts in proportion to the list's best (itself).
    weak = weighted_fusion([[("a", 0.6)]], [1.0], floors=[VECTOR_FLOOR], cut=[False])
    assert weak[0].score == pytest.approx(1.0)
    # Without a floor or a range (a plain list of one), the contract score stands.
    assert weighted_fusion([[("a", 0.3)]], [1.0])[0].score == pytest.approx(0.3)


def test_all_equal_scores_are_not_inflated_and_ties_follow_the_rule() -> None:
    equal = [("b", 0.7), ("a", 0.7), ("c", 0.7)]
    fused = weighted_fusion([equal], [1.0])
    assert [f.score for f in fused] == pytest.approx([0.7, 0.7, 0.7])
    # Equal scores: the better rank in the list wins, not the id.
    assert [f.id for f in fused] == ["b", "a", "c"]
    cut = alpha_fusion(equal, [], depth=3)  # a full list of ties: range from the floor
    assert [f.score for f in cut] == pytest.approx([1.0, 1.0, 1.0])


def test_two_items_keyword_winner_is_not_a_coin_toss() -> None:
    # Two chunks: the vector side barely prefers "b", only "a" holds the query word.
    vector = [("b", 0.805), ("a", 0.800)]
    keyword = [("a", 0.15)]
    fused = fuse_hybrid(vector, keyword, **WEIGHTED)  # type: ignore[arg-type]
    assert [f.id for f in fused] == ["a", "b"]
    assert fused[0].score - fused[1].score > 0.3
    # Both chunks hold the word, "a" twice as strongly: still "a".
    both = fuse_hybrid(vector, [("a", 0.15), ("b", 0.08)], **WEIGHTED)  # type: ignore[arg-type]
    assert [f.id for f in both] == ["a", "b"]


def test_exact_ties_break_by_best_rank_then_input_scores() -> None:
    # RRF: a is 1st and 2nd, b is 2nd and 1st: equal sums, equal best rank; a has the
    # larger input scores.
    fused = reciprocal_rank_fusion([[("b", 0.81), ("a", 0.80)], [("a", 0.30), ("b", 0.05)]])
    assert fused[0].raw == pytest.approx(fused[1].raw)
    assert [f.id for f in fused] == ["a", "b"]
    # Best rank first: x is 1st somewhere, y only 2nd, same sums.
    tie = weighted_fusion([[("x", 1.0), ("y", 0.5)], [("z", 1.0), ("y", 0.5)]], [1.0, 1.0],
                          normalization="none")
    assert [f.id for f in tie][:2] == ["x", "z"]


def test_cut_lists_keep_plain_min_max() -> None:
    # Lists as long as the depth asked were cut: their worst maps to 0 as before.
    vector = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    keyword = [("c", 0.5), ("b", 0.3), ("a", 0.1)]
    fused = {f.id: f.score for f in fuse_hybrid(vector, keyword, ranker="weighted", depth=3)}
    # Keyword as BM25: 10, 30/7, 10/9.
    middle = (30 / 7 - 10 / 9) / (10 - 10 / 9)
    assert fused == pytest.approx({"a": 0.5, "b": 0.5 * 0.5 + 0.5 * middle, "c": 0.5})


# Scores from a few values, so that fused totals tie often (the case a shortcut for
# the first n items is most likely to get wrong), and any floats.
tied_ranking = st.lists(st.tuples(ids, st.sampled_from([0.0, 0.2, 0.5, 0.55, 1.0])),
                        max_size=12, unique_by=lambda p: p[0]).map(
    lambda items: sorted(items, key=lambda p: -p[1]))


@settings(max_examples=300, deadline=None)
@given(st.one_of(tied_ranking, ranking), st.one_of(tied_ranking, ranking),
       st.sampled_from(["rrf", "weighted"]), st.integers(0, 14))
def test_a_limit_gives_the_head_of_the_whole_fused_list(
    vector: list[tuple[str, float]], keyword: list[tuple[str, float]], ranker: str, limit: int
) -> None:
    whole = fuse_hybrid(vector, keyword, ranker=ranker, depth=10)
    head = fuse_hybrid(vector, keyword, ranker=ranker, depth=10, limit=limit)
    assert head == whole[:limit]
    lists = [vector, keyword, vector[::-1]]
    assert (reciprocal_rank_fusion(lists, weights=[1.0, 0.5, 0.2], limit=limit)
            == reciprocal_rank_fusion(lists, weights=[1.0, 0.5, 0.2])[:limit])
    assert (weighted_fusion(lists, [0.4, 0.4, 0.2], normalization="none", limit=limit)
            == weighted_fusion(lists, [0.4, 0.4, 0.2], normalization="none")[:limit])

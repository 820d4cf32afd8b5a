"""Metrics against hand-computed examples (BEIR / pytrec_eval definitions)."""

from __future__ import annotations

import math

import pytest

from ragloom.evaluation.metrics import mean, mrr_at_k, ndcg_at_k, recall_at_k


def test_ndcg_binary_hand_computed() -> None:
    # Relevant d1 at rank 1 and d3 at rank 3; two relevant in total.
    dcg = 1 / math.log2(2) + 1 / math.log2(4)
    idcg = 1 / math.log2(2) + 1 / math.log2(3)
    assert ndcg_at_k(["d1", "d2", "d3"], {"d1": 1, "d3": 1}, 10) == pytest.approx(dcg / idcg)


def test_ndcg_graded_uses_linear_gain() -> None:
    # pytrec_eval's ndcg uses the grade as gain: ranking (1, 2) vs ideal (2, 1).
    got = ndcg_at_k(["a", "b"], {"a": 1, "b": 2}, 10)
    expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert got == pytest.approx(expected)


def test_ndcg_cutoff_zero_grades_and_duplicates() -> None:
    assert ndcg_at_k([f"x{i}" for i in range(10)] + ["a"], {"a": 1}, 10) == 0.0
    assert ndcg_at_k(["a", "a", "b"], {"a": 1, "b": 1}, 10) == pytest.approx(1.0)
    assert ndcg_at_k(["a"], {"a": 0}, 10) == 0.0
    assert ndcg_at_k(["a"], {"a": 1, "b": 1, "c": 1}, 1) == pytest.approx(1.0)


def test_recall_and_mrr_hand_computed() -> None:
    ranking = ["x", "a", "y", "b"]
    judged = {"a": 1, "b": 2, "c": 1, "z": 0}
    assert recall_at_k(ranking, judged, 100) == pytest.approx(2 / 3)
    assert recall_at_k(ranking, judged, 2) == pytest.approx(1 / 3)
    assert mrr_at_k(ranking, judged, 10) == pytest.approx(0.5)
    assert mrr_at_k(ranking, judged, 1) == 0.0
    assert recall_at_k([], {}, 10) == 0.0
    assert mean([0.5, 1.0]) == 0.75 and mean([]) == 0.0

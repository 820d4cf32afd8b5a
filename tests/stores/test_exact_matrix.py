"""The exact matrix's ranking: best first, ties by id, whatever the insertion order."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloom.stores.exact import DenseMatrix
from ragloom.testing.store_conformance import brute_force

# Vectors drawn from a handful of small integers: equal vectors (ties) are common.
_vectors = st.lists(st.lists(st.integers(-2, 2), min_size=3, max_size=3)
                    .filter(lambda v: any(v)), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(vectors=_vectors, query=st.lists(st.integers(-2, 2), min_size=3, max_size=3)
       .filter(lambda v: any(v)), top_k=st.integers(1, 45),
       metric=st.sampled_from(["cosine", "dot", "euclidean"]), seed=st.integers(0, 5))
def test_top_k_is_the_head_of_the_whole_ranking_with_ties_by_id(
        vectors: list[list[int]], query: list[int], top_k: int, metric: str, seed: int) -> None:
    ids = [f"c{i:03d}" for i in range(len(vectors))]
    order = np.random.default_rng(seed).permutation(len(ids))  # insertion order
    matrix = DenseMatrix(metric)  # type: ignore[arg-type]
    matrix.upsert((ids[i], np.asarray(vectors[i], dtype=np.float32)) for i in order)
    q = np.asarray(query, dtype=np.float32)
    whole = matrix.search(q, len(ids))
    # The top k, ties at the cut included, is exactly the whole ranking's head (ids
    # and measures; scores to the last bits, which vectorised exp may round apart).
    head = matrix.search(q, top_k)
    assert [(item, raw) for item, _, raw in head] == [
        (item, raw) for item, _, raw in whole[:top_k]]
    assert np.allclose([s for _, s, _ in head], [s for _, s, _ in whole[:top_k]],
                       rtol=0, atol=1e-12)
    # The whole ranking: best first, equal measures by id, scores in [0, 1].
    better_first = -1.0 if metric == "euclidean" else 1.0
    for (first, _, a), (second, _, b) in itertools.pairwise(whole):
        assert better_first * (a - b) >= 0
        if a == b:
            assert first < second, "equal measures must be ordered by id"
    assert all(0.0 <= score <= 1.0 for _, score, _ in whole)
    # Each measure is the reference's (float64) to float32 precision.
    reference = dict(brute_force(np.asarray(vectors, dtype=np.float64), ids,
                                 q.astype(np.float64), metric, len(ids)))
    assert all(abs(raw - reference[item]) < 1e-4 for item, _, raw in whole)


def test_duplicate_vectors_come_back_in_id_order() -> None:
    matrix = DenseMatrix("cosine")
    vector = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    for item in ("d", "b", "e", "a", "c"):
        matrix.upsert([(item, vector)])
    matrix.upsert([("z", np.array([0.0, 1.0, 0.0], dtype=np.float32))])
    assert [item for item, _, _ in matrix.search(vector, 4)] == ["a", "b", "c", "d"]
    assert [item for item, _, _ in matrix.search(vector, 10)] == ["a", "b", "c", "d", "e", "z"]

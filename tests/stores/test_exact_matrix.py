"""The exact matrix's ranking: best first, ties by id, whatever the insertion order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloom.stores.exact import DenseMatrix
from ragloom.testing.store_conformance import brute_force

# Vectors drawn from a handful of small integers: equal vectors (ties) are common.
_vectors = st.lists(st.lists(st.integers(-2, 2), min_size=3, max_size=3)
                    .filter(lambda v: any(v)), min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(vectors=_vectors, query=st.lists(st.integers(-2, 2), min_size=3, max_size=3)
       .filter(lambda v: any(v)), top_k=st.integers(1, 45),
       metric=st.sampled_from(["cosine", "dot", "euclidean"]), seed=st.integers(0, 5))
def test_search_orders_like_brute_force_with_ties_by_id(
        vectors: list[list[int]], query: list[int], top_k: int, metric: str, seed: int) -> None:
    ids = [f"c{i:03d}" for i in range(len(vectors))]
    order = np.random.default_rng(seed).permutation(len(ids))  # insertion order
    matrix = DenseMatrix(metric)  # type: ignore[arg-type]
    matrix.upsert((ids[i], np.asarray(vectors[i], dtype=np.float32)) for i in order)
    q = np.asarray(query, dtype=np.float32)
    got = matrix.search(q, top_k)
    want = brute_force(np.asarray(vectors, dtype=np.float64), ids, q.astype(np.float64),
                       metric, top_k)
    # The same ids in the same order; the measure agrees to float32 precision.
    # (Ranks within float32 rounding of each other may swap: compare where the
    # reference's neighbours are clearly apart.)
    assert len(got) == len(want)
    for (got_id, score, raw), (want_id, want_raw) in zip(got, want, strict=True):
        assert abs(raw - want_raw) < 1e-4
        assert 0.0 <= score <= 1.0
        if got_id != want_id:
            assert abs(raw - dict(want).get(got_id, np.inf)) < 1e-4
    tied = [item for item, _, _ in got]
    raws = [raw for _, _, raw in got]
    for n in range(1, len(got)):
        if raws[n] == raws[n - 1]:
            assert tied[n - 1] < tied[n], "equal measures must be ordered by id"


def test_duplicate_vectors_come_back_in_id_order() -> None:
    matrix = DenseMatrix("cosine")
    vector = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    for item in ("d", "b", "e", "a", "c"):
        matrix.upsert([(item, vector)])
    matrix.upsert([("z", np.array([0.0, 1.0, 0.0], dtype=np.float32))])
    assert [item for item, _, _ in matrix.search(vector, 4)] == ["a", "b", "c", "d"]
    assert [item for item, _, _ in matrix.search(vector, 10)] == ["a", "b", "c", "d", "e", "z"]

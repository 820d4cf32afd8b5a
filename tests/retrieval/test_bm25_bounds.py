"""BM25 pruning's per-term bounds (``BM25Index._peak``) on texts of varied length:
each bounds every share the term gives, through adds, removes and the delta, and the
pruned search still equals scoring every posting."""

from __future__ import annotations

import numpy as np
import pytest

from ragloom.retrieval.tokenize import query_terms
from ragloom.stores.bm25 import K1, BM25Index, saturation


def _corpus(seed: int, texts: int) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, 301)
    weights /= weights.sum()
    out = []
    for n in range(texts):
        size = int(rng.integers(1, 60))  # lengths far from the average both ways
        words = rng.choice(300, size=size, p=weights)
        out.append((f"t{n:05d}", " ".join(f"w{w}" for w in words)))
    return out


def _changed_index(seed: int) -> tuple[BM25Index, list[tuple[str, str]]]:
    corpus = _corpus(seed, 2500)
    index = BM25Index()
    index.add(corpus)
    index.remove([item for item, _ in corpus[::5]])
    # In the delta only: short texts repeating common and rare words, so the delta
    # holds a term's highest tf and shortest text.
    late = [("late0", "w3 w3 w3 w3 w3 w3 w3"), ("late1", "w0"), ("late2", "w250 w250 w250"),
            ("late3", "w1 w2 w1 w2 w1"), ("late4", "w9999 w9999")]
    index.add(late)
    assert index._delta  # not folded yet: the bounds read both kinds of block
    return index, corpus + late


@pytest.mark.parametrize("seed", [3, 4])
def test_a_terms_peak_bounds_its_saturation_in_every_text(seed: int) -> None:
    index, _ = _changed_index(seed)
    average = index._total_length / len(index)
    for term in index._term_id:
        slots, tfs = index._postings(term)
        if not slots.shape[0]:
            continue
        exact = saturation(tfs.astype(np.float64), index._lengths[slots].astype(np.float64),
                           average)
        peak = index._peak(term, average)
        assert exact.max() <= peak < K1 + 1.0, term
    # A term only the delta holds: its peak is its one text's saturation.
    assert index._peak("w9999", average) == pytest.approx(
        float(saturation(np.array([2.0]), np.array([2.0]), average)[0]))


@pytest.mark.parametrize("seed", [3, 4])
def test_pruning_with_peaks_equals_scoring_every_posting(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import ragloom.stores.bm25 as bm25

    index, corpus = _changed_index(seed)
    rng = np.random.default_rng(seed + 50)
    queries = [" ".join(corpus[int(i)][1].split()[:int(k)])
               for i, k in zip(rng.integers(0, len(corpus), 60), rng.integers(2, 9, 60),
                               strict=True)]
    queries += ["w3 w0 w250", "w1 w2 w3 w4 w5", "w3 w3 w1", "w9999 w0 w1 w2"]
    queries = [q for q in queries if len(query_terms(q)) > 1]
    for top_k in (1, 10, 100):
        monkeypatch.setattr(bm25, "_PRUNE_AT", 10**12)
        full = [index.search(query, top_k) for query in queries]
        monkeypatch.setattr(bm25, "_PRUNE_AT", 0)
        pruned = [index.search(query, top_k) for query in queries]
        assert pruned == full  # ids, order and scores, bit for bit
    index.compact()  # the block's statistics, recomputed, say the same
    monkeypatch.setattr(bm25, "_PRUNE_AT", 0)
    assert [index.search(query, 10) for query in queries] == [
        hits[:10] for hits in full]

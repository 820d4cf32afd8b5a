"""An in-memory BM25 index with incremental add and remove.

Scoring is SQLite FTS5's ``bm25()`` (``fts5_aux.c``), so the in-memory and SQLite
stores rank alike and give the same raw scores::

    idf(t)   = ln((N - n(t) + 0.5) / (n(t) + 0.5)), or 1e-6 where that is <= 0
    score(d) = sum over query terms t of
               idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))

with k1 = 1.2 and b = 0.75, N the number of indexed texts, |d| the number of terms
of d and avgdl their mean over the index. A term found in half the texts or more
gets the 1e-6 floor: it still ranks the texts that hold it (by tf and length) but
adds almost nothing to the score. A query term counts once per occurrence in the
query, as FTS5 counts each phrase of its query. Terms come from
:func:`ragloom.retrieval.tokenize.tokenize` (lower-cased, diacritics stripped,
Porter-stemmed), the same analysis as the SQLite store's FTS5 table.

Postings live in dicts so adds and removes are cheap; a term's postings are turned
into NumPy arrays on first query after a change, so a query costs a few vector
operations per term rather than a Python loop over every posting.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from ragloom.retrieval.tokenize import tokenize

K1 = 1.2
B = 0.75
#: FTS5's idf for terms found in half the texts or more (its formula gives <= 0 there).
FTS5_IDF_FLOOR = 1e-6

_Arrays = tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]


class BM25Index:
    """BM25 over documents identified by string ids (chunk ids in the stores)."""

    def __init__(
        self,
        *,
        k1: float = K1,
        b: float = B,
        tokenizer: Callable[[str], list[str]] = tokenize,
    ) -> None:
        self.k1 = k1
        self.b = b
        self.tokenizer = tokenizer
        self._slot: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._free: list[int] = []
        self._lengths = np.zeros(0, dtype=np.float64)
        self._terms: dict[int, Counter[str]] = {}
        self._postings: dict[str, dict[int, int]] = {}
        self._arrays: dict[str, _Arrays] = {}
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, item: str) -> bool:
        return item in self._slot

    # -------------------------------------------------------------------- upkeep
    def add(self, items: Iterable[tuple[str, str]]) -> None:
        """Index (id, text) pairs; an id already present is replaced."""
        for item_id, text in items:
            if item_id in self._slot:
                self.remove([item_id])
            counts = Counter(self.tokenizer(text))
            slot = self._free.pop() if self._free else self._new_slot()
            self._slot[item_id] = slot
            self._ids[slot] = item_id
            self._terms[slot] = counts
            length = sum(counts.values())
            self._lengths[slot] = length
            self._total_length += length
            for term, tf in counts.items():
                self._postings.setdefault(term, {})[slot] = tf
                self._arrays.pop(term, None)

    def _new_slot(self) -> int:
        slot = len(self._ids)
        self._ids.append(None)
        if slot >= self._lengths.shape[0]:
            grown = np.zeros(max(16, int(slot * 1.5) + 1), dtype=np.float64)
            grown[: self._lengths.shape[0]] = self._lengths
            self._lengths = grown
        return slot

    def remove(self, ids: Iterable[str]) -> int:
        removed = 0
        for item_id in ids:
            slot = self._slot.pop(item_id, None)
            if slot is None:
                continue
            for term in self._terms.pop(slot):
                postings = self._postings[term]
                del postings[slot]
                if not postings:
                    del self._postings[term]
                self._arrays.pop(term, None)
            self._total_length -= int(self._lengths[slot])
            self._lengths[slot] = 0.0
            self._ids[slot] = None
            self._free.append(slot)
            removed += 1
        return removed

    # -------------------------------------------------------------------- search
    def _term_arrays(self, term: str) -> _Arrays:
        arrays = self._arrays.get(term)
        if arrays is None:
            postings = self._postings[term]
            slots = np.fromiter(postings.keys(), dtype=np.int64, count=len(postings))
            tfs = np.fromiter(postings.values(), dtype=np.float64, count=len(postings))
            arrays = (slots, tfs)
            self._arrays[term] = arrays
        return arrays

    def idf(self, term: str) -> float:
        n = len(self._postings.get(term, ()))
        total = len(self._slot)
        idf = math.log((total - n + 0.5) / (n + 0.5))
        return idf if idf > 0.0 else FTS5_IDF_FLOOR

    def search(
        self, text: str, top_k: int, allowed: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """The ``top_k`` best (id, BM25) pairs with BM25 > 0; ties break by id."""
        if top_k <= 0 or not self._slot:
            return []
        terms = [term for term in self.tokenizer(text) if term in self._postings]
        if not terms:
            return []
        scores = np.zeros(len(self._ids), dtype=np.float64)
        lengths = self._lengths[: len(self._ids)]
        average = self._total_length / len(self._slot) or 1.0
        for term, repeats in Counter(terms).items():
            slots, tfs = self._term_arrays(term)
            norm = self.k1 * (1.0 - self.b + self.b * lengths[slots] / average)
            # Same operations, in the same order, as FTS5's bm25() so both stores agree
            # to the last bits; a repeated term is added once per occurrence, as there.
            contribution = self.idf(term) * ((tfs * (self.k1 + 1.0)) / (tfs + norm))
            for _ in range(repeats):
                scores[slots] += contribution
        if allowed is not None:
            mask = np.zeros(len(self._ids), dtype=bool)
            rows = [self._slot[i] for i in allowed if i in self._slot]
            mask[rows] = True
            scores[~mask] = 0.0
        candidates = np.flatnonzero(scores > 0.0)
        if candidates.size > top_k:
            # A little over top_k so ties at the cut-off can still be broken by id.
            keep = np.argpartition(-scores[candidates], top_k - 1)[:top_k]
            threshold = scores[candidates[keep]].min()
            candidates = candidates[scores[candidates] >= threshold]
        ranked = sorted(
            ((self._ids[slot] or "", float(scores[slot])) for slot in candidates.tolist()),
            key=lambda pair: (-pair[1], pair[0]),
        )
        return ranked[:top_k]

"""An in-memory BM25 index with incremental add and remove, compact in memory.

Scoring (the same on every store we ship; the SQLite store computes it from FTS5's
own statistics, see :mod:`ragloom.stores.sqlite_keyword`)::

    idf(t)   = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))          (Lucene's, always > 0)
    score(d) = sum over query terms t of
               idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))

with k1 = 1.2 and b = 0.75, N the number of indexed texts, n(t) those holding t, |d|
the number of terms of d and avgdl their mean over the index. A query term counts
once per occurrence in the query. Terms come from
:func:`ragloom.retrieval.tokenize.tokenize`, FTS5's own analysis.

Why not FTS5's idf, ``ln((N - n + 0.5) / (n + 0.5))``: it is 0 for a term in half the
texts and negative beyond (FTS5 floors it at 1e-6), so in a small knowledge base a
word found in one of two documents scores both 0. Lucene's stays positive and
orders terms the same way.

Layout: postings live in NumPy arrays, one block per term (CSR), 8 bytes a posting,
plus a small delta of recent adds in per-term ``array``s. Removing a text only marks
its slot dead (the counts skip dead slots); the delta and the dead postings are folded
into a fresh block once they pass a quarter of it, so a change costs amortised time
proportional to its size. No per-text term lists are kept.
"""

from __future__ import annotations

import math
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ragloom.lexical.tokenize import query_terms, tokenize

K1 = 1.2
B = 0.75
#: FTS5's idf for terms found in half the texts or more (its formula gives <= 0 there).
FTS5_IDF_FLOOR = 1e-6
#: Pending postings folded into the blocks at once, at least.
_MERGE_AT = 50_000
#: Queries touching fewer postings than this score every posting (it is fast enough);
#: above it, texts that cannot reach the top k are skipped (see ``BM25Index.search``).
_PRUNE_AT = 200_000
# A term's share of a score is idf * saturation, and saturation <= the term's peak
# (``BM25Index._peak``) < k1 + 1; the slack covers the rounding of the FTS5-idf round
# trip in ``contributions`` and of the peak's own saturation.
_BOUND_SLACK = 1.0 + 1e-9

FloatArray = npt.NDArray[np.float64]


def lucene_idf(found: int, total: int) -> float:
    """Lucene's BM25 idf: positive for any term found in the collection."""
    return math.log(1.0 + (total - found + 0.5) / (found + 0.5))


def fts5_idf(found: int, total: int) -> float:
    """FTS5 bm25()'s idf, floored at 1e-6 where its formula gives <= 0."""
    idf = math.log((total - found + 0.5) / (found + 0.5))
    return idf if idf > 0.0 else FTS5_IDF_FLOOR


def saturation(tfs: FloatArray, lengths: FloatArray, average: float) -> FloatArray:
    """tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl)), in FTS5 bm25()'s order
    of operations (so it equals, bit for bit, what FTS5 multiplies its idf by)."""
    norm = K1 * (1.0 - B + B * lengths / average)
    return (tfs * (K1 + 1.0)) / (tfs + norm)


def contributions(fts5_scores: FloatArray, found: int, total: int) -> FloatArray:
    """One occurrence of a query term's share of the score, from the term's FTS5
    ``bm25()`` values (FTS5's idf times :func:`saturation`): the idf swapped for
    Lucene's. The in-memory index goes through the same two operations, so both
    stores give bit-identical scores."""
    fts = fts5_idf(found, total)
    return lucene_idf(found, total) * (fts5_scores / fts)


def ranked_top(
    scores: dict[str, float] | Sequence[tuple[str, float]], top_k: int
) -> list[tuple[str, float]]:
    """The ``top_k`` best (id, score) pairs with score > 0, ties broken by id."""
    items = scores.items() if isinstance(scores, dict) else scores
    return sorted(((i, s) for i, s in items if s > 0.0), key=lambda p: (-p[1], p[0]))[:top_k]


class BM25Index:
    """BM25 over texts identified by string ids (chunk ids in the stores)."""

    def __init__(self, *, tokenizer: Callable[[str], list[str]] = tokenize) -> None:
        self.tokenizer = tokenizer
        self._slot: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._lengths: npt.NDArray[Any] = np.zeros(0, dtype=np.int32)
        self._alive: npt.NDArray[Any] = np.zeros(0, dtype=bool)
        self._distinct: npt.NDArray[Any] = np.zeros(0, dtype=np.int32)  # terms per slot
        self._total_length = 0
        self._term_id: dict[str, int] = {}
        # The block: postings of term i at [offsets[i], offsets[i + 1]).
        self._offsets = np.zeros(1, dtype=np.int64)
        self._slots: npt.NDArray[Any] = np.zeros(0, dtype=np.int32)
        self._tfs: npt.NDArray[Any] = np.zeros(0, dtype=np.uint16)
        self._delta: dict[int, tuple[array[int], array[int]]] = {}
        self._pending = 0  # postings in the delta
        self._dead = 0  # postings of removed texts still in the block or delta
        # Each slot's k1 * (1 - b + b * |d| / avgdl) for the current avgdl: a search
        # gathers it instead of recomputing it per posting (at 1M texts that was half a
        # common term's scoring). Dropped by every change to the texts.
        self._norms: tuple[float, FloatArray] | None = None
        # Per term of the block: its highest tf and the shortest text holding it, for
        # a bound on its share (see ``_peak``); still bounds after removes.
        self._max_tf: npt.NDArray[Any] = np.zeros(0, dtype=np.uint32)
        self._min_length: npt.NDArray[Any] = np.zeros(0, dtype=np.int32)

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, item: object) -> bool:
        return item in self._slot

    @property
    def postings(self) -> int:
        """Postings held, dead ones included (what the memory is spent on)."""
        return int(self._slots.shape[0]) + self._pending

    # -------------------------------------------------------------------- upkeep
    def add(self, items: Iterable[tuple[str, str]]) -> None:
        """Index (id, text) pairs; an id already present is replaced."""
        term_id = self._term_id
        added = 0
        self._norms = None
        for item_id, text in items:
            added += 1
            if item_id in self._slot:
                self.remove([item_id])
            counts = Counter(self.tokenizer(text))
            slot = self._new_slot(item_id)
            length = sum(counts.values())
            self._lengths[slot] = length
            self._distinct[slot] = len(counts)
            self._total_length += length
            for term, tf in counts.items():
                tid = term_id.get(term)
                if tid is None:
                    tid = term_id[term] = len(term_id)
                pair = self._delta.get(tid)
                if pair is None:
                    pair = self._delta[tid] = (array("i"), array("I"))
                pair[0].append(slot)
                pair[1].append(tf)
            self._pending += len(counts)
            if slot % 4096 == 0:  # a big add folds as it goes: smaller peaks
                self._maybe_merge()
                term_id = self._term_id  # a fold renumbers the terms
        if added >= 4096:  # a build: leave it all in the compact block
            self.compact()
        else:
            self._maybe_merge()

    def _new_slot(self, item_id: str) -> int:
        slot = len(self._ids)
        self._ids.append(item_id)
        self._slot[item_id] = slot
        if slot >= self._lengths.shape[0]:
            size = max(64, int(slot * 1.5) + 1)
            self._lengths = _grown(self._lengths, size)
            self._alive = _grown(self._alive, size)
            self._distinct = _grown(self._distinct, size)
        self._alive[slot] = True
        return slot

    def remove(self, ids: Iterable[str]) -> int:
        removed = 0
        for item_id in ids:
            slot = self._slot.pop(item_id, None)
            if slot is None:
                continue
            self._alive[slot] = False
            self._ids[slot] = None
            self._total_length -= int(self._lengths[slot])
            self._dead += int(self._distinct[slot])
            removed += 1
        if removed:
            self._norms = None
            self._maybe_merge()
        return removed

    def _maybe_merge(self) -> None:
        if self._pending + self._dead > max(_MERGE_AT, self._slots.shape[0] // 4):
            self.compact()

    def compact(self) -> None:
        """Fold the delta into the block, drop dead postings, slots and unused terms."""
        size = len(self._ids)
        self._norms = None
        counts = np.diff(self._offsets)
        tids = np.repeat(np.arange(counts.shape[0], dtype=np.int32), counts)
        parts_t, parts_s, parts_f = [tids], [self._slots], [self._tfs.astype(np.uint32)]
        for tid, (slots, tfs) in self._delta.items():
            parts_t.append(np.full(len(slots), tid, dtype=np.int32))
            parts_s.append(np.frombuffer(slots, dtype=np.int32))
            parts_f.append(np.frombuffer(tfs, dtype=np.uint32))
        all_t, all_s, all_f = (np.concatenate(parts) for parts in (parts_t, parts_s, parts_f))
        del parts_t, parts_s, parts_f
        keep = self._alive[all_s]
        all_t, all_s, all_f = all_t[keep], all_s[keep], all_f[keep]
        # New slots: the living ones, in order.
        alive = self._alive[:size]
        renumber = np.cumsum(alive, dtype=np.int64) - 1
        all_s = renumber[all_s].astype(np.int32)
        kept: list[str] = [i for i in self._ids if i is not None]
        self._slot = {item_id: n for n, item_id in enumerate(kept)}
        self._ids = list(kept)
        living = len(kept)
        self._lengths = self._lengths[:size][alive].copy()
        self._distinct = self._distinct[:size][alive].copy()
        self._alive = np.ones(living, dtype=bool)
        # New term ids: the terms still used, keeping their order.
        per_term = np.bincount(all_t, minlength=len(self._term_id))
        used = per_term > 0
        new_tid = np.cumsum(used, dtype=np.int64) - 1
        self._term_id = {term: int(new_tid[tid]) for term, tid in self._term_id.items()
                         if used[tid]}
        all_t = new_tid[all_t]
        order = np.argsort(all_t, kind="stable")
        self._slots = all_s[order]
        tf_type = np.uint16 if all_f.size == 0 or int(all_f.max()) <= 0xFFFF else np.uint32
        self._tfs = all_f[order].astype(tf_type)
        self._offsets = np.zeros(int(used.sum()) + 1, dtype=np.int64)
        np.cumsum(per_term[used], out=self._offsets[1:])
        starts = self._offsets[:-1]  # every term left holds a posting: no empty runs
        if starts.shape[0]:
            self._max_tf = np.maximum.reduceat(self._tfs, starts).astype(np.uint32)
            self._min_length = np.minimum.reduceat(self._lengths[self._slots], starts)
        else:
            self._max_tf = np.zeros(0, dtype=np.uint32)
            self._min_length = np.zeros(0, dtype=np.int32)
        self._delta = {}
        self._pending = 0
        self._dead = 0

    # -------------------------------------------------------------------- search
    def _postings(self, term: str) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
        """Slots holding ``term`` (living ones, ascending) and its frequency in each
        (integers: converting a long list is left to the texts actually scored)."""
        tid = self._term_id.get(term)
        if tid is None:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint32)
        parts_s: list[npt.NDArray[Any]] = []
        parts_f: list[npt.NDArray[Any]] = []
        if tid + 1 < self._offsets.shape[0]:
            start, end = int(self._offsets[tid]), int(self._offsets[tid + 1])
            parts_s.append(self._slots[start:end])
            parts_f.append(self._tfs[start:end])
        pair = self._delta.get(tid)
        if pair is not None:
            parts_s.append(np.frombuffer(pair[0], dtype=np.int32))
            parts_f.append(np.frombuffer(pair[1], dtype=np.uint32))
        slots = np.concatenate(parts_s) if len(parts_s) != 1 else parts_s[0]
        tfs = np.concatenate(parts_f) if len(parts_f) != 1 else parts_f[0]
        if not self._dead:  # nothing removed since the last fold: every slot lives
            return slots, tfs
        living = self._alive[slots]
        return slots[living], tfs[living]

    def document_frequency(self, term: str) -> int:
        return int(self._postings(term)[0].shape[0])

    def idf(self, term: str) -> float:
        """Lucene's idf of a (stemmed) term; 0 for a term no text holds."""
        found = self.document_frequency(term)
        return lucene_idf(found, len(self._slot)) if found else 0.0

    def search(
        self, text: str, top_k: int, allowed: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """The ``top_k`` best (id, BM25) pairs with BM25 > 0; ties break by id."""
        if top_k <= 0 or not self._slot:
            return []
        total = len(self._slot)
        average = self._total_length / total or 1.0
        terms: list[_Term] = []
        names: list[str] = []
        for term, _word, repeats in query_terms(text):
            slots, tfs = self._postings(term)
            if slots.shape[0]:
                terms.append((slots, tfs, repeats))
                names.append(term)
        if not terms:
            return []
        postings = sum(t[0].shape[0] for t in terms)
        if allowed is not None and postings > _PRUNE_AT:
            chosen = np.array(sorted({self._slot[i] for i in allowed if i in self._slot}),
                              dtype=np.int64)
            if chosen.shape[0] * len(terms) < postings // 4:
                # A selective filter: score just its texts (binary search per term).
                scores_at = self._scores_at(chosen, terms, total, average)
                positive = np.flatnonzero(scores_at > 0.0)
                return self._top(chosen[positive], scores_at[positive], top_k)
        if allowed is None and len(terms) > 1 and postings > _PRUNE_AT:
            peaks = [self._peak(term, average) for term in names]
            pruned = self._pruned_search(terms, peaks, top_k, total, average)
            if pruned is not None:
                return pruned
        scores = np.zeros(len(self._ids), dtype=np.float64)
        for slots, tfs, repeats in terms:
            share = self._shares(slots, tfs, slots.shape[0], total, average)
            for _ in range(repeats):  # once per occurrence, as the SQLite store adds them
                scores[slots] += share
        if allowed is not None:
            mask = np.zeros(len(self._ids), dtype=bool)
            rows = [self._slot[i] for i in allowed if i in self._slot]
            mask[rows] = True
            scores[~mask] = 0.0
        positive = np.flatnonzero(scores > 0.0)
        return self._top(positive, scores[positive], top_k)

    def _shares(self, slots: npt.NDArray[Any], tfs: npt.NDArray[Any], found: int, total: int,
                average: float) -> FloatArray:
        """One occurrence's share of the score at ``slots`` for a term in ``found`` texts.

        The operations of :func:`saturation` and :func:`contributions` in their order
        (so bit-identical to them), on the slots' cached length norms and in place:
        a common term has a posting in most texts, and each temporary is that long."""
        share = tfs.astype(np.float64)
        norm = self._slot_norms(average)[slots]
        np.add(share, norm, out=norm)  # tf + k1 * (1 - b + b * |d| / avgdl)
        np.multiply(share, K1 + 1.0, out=share)
        np.divide(share, norm, out=share)  # saturation
        fts = fts5_idf(found, total)
        np.multiply(share, fts, out=share)  # FTS5's bm25() value
        np.divide(share, fts, out=share)
        np.multiply(share, lucene_idf(found, total), out=share)
        return share

    def _slot_norms(self, average: float) -> FloatArray:
        """k1 * (1 - b + b * |d| / avgdl) per slot, as :func:`saturation` computes it."""
        cached = self._norms
        if cached is None or cached[0] != average:
            lengths = self._lengths[: len(self._ids)].astype(np.float64)
            cached = self._norms = (average, K1 * (1.0 - B + B * lengths / average))
        return cached[1]

    def _top(self, slots: npt.NDArray[Any], scores: FloatArray,
             top_k: int) -> list[tuple[str, float]]:
        """``ranked_top`` of the texts at ``slots`` scoring ``scores`` (aligned)."""
        if slots.size > top_k:
            # Everything tied with the k-th best stays, so ties can be broken by id.
            keep = np.argpartition(-scores, top_k - 1)[:top_k]
            tied = scores >= scores[keep].min()
            slots, scores = slots[tied], scores[tied]
        pairs = zip(slots.tolist(), scores.tolist(), strict=True)
        return ranked_top([(self._ids[slot] or "", score) for slot, score in pairs], top_k)

    def _peak(self, term: str, average: float) -> float:
        """At least the term's :func:`saturation` on any text holding it: saturation
        grows with tf and falls with length, so its value at the term's highest tf and
        shortest text (block and delta) bounds it. Below k1 + 1, often far below (a
        word found once in texts of about average length saturates at 1)."""
        tid = self._term_id[term]
        top_tf, shortest = 0, 2**31
        if tid < self._max_tf.shape[0]:
            top_tf, shortest = int(self._max_tf[tid]), int(self._min_length[tid])
        pair = self._delta.get(tid)
        if pair is not None and len(pair[0]):
            top_tf = max(top_tf, max(pair[1]))
            shortest = min(shortest, int(self._lengths[np.frombuffer(pair[0],
                                                                     dtype=np.int32)].min()))
        peak = saturation(np.array([top_tf], dtype=np.float64),
                          np.array([shortest], dtype=np.float64), average)
        return float(peak[0])

    def _pruned_search(self, terms: list[_Term], peaks: list[float], top_k: int, total: int,
                       average: float) -> list[tuple[str, float]] | None:
        """The same answer as scoring every posting, reading far fewer (MaxScore).

        A term adds at most ``bound`` = repeats * idf * peak to any text (``peaks``:
        :meth:`_peak`, below k1 + 1). Scoring
        the texts of the rarest terms fully gives real scores, so their k-th best,
        ``floor``, is at most the final k-th best. Terms are taken from the highest
        bound down until the bounds left sum below ``floor``; a text holding none of
        the terms taken scores below the k-th best. The terms taken are scored on
        every text they hold (a partial score, a lower bound too, so it may raise the
        floor); only texts whose partial score plus the bounds left reach the floor
        are scored fully, term by term in query order as the full scoring adds them,
        so scores are bit-identical. None when pruning would not pay.
        """
        bounds = [repeats * lucene_idf(slots.shape[0], total) * peak * _BOUND_SLACK
                  for (slots, _tfs, repeats), peak in zip(terms, peaks, strict=True)]
        order = sorted(range(len(terms)), key=lambda i: -bounds[i])
        seeded: list[npt.NDArray[Any]] = []
        for i in order:  # the rarest terms until they hold k texts
            seeded.append(terms[i][0])
            if sum(part.shape[0] for part in seeded) >= top_k:
                break
        # One term's slots are already ascending and distinct.
        seed = seeded[0] if len(seeded) == 1 else np.unique(np.concatenate(seeded))
        tails = [math.fsum(bounds[i] for i in order[start:]) for start in range(len(order) + 1)]
        floor = self._seed_floor(seed, terms, order, tails, top_k, total, average)
        taken = _taken(tails, floor)
        if sum(terms[i][0].shape[0] for i in order[:taken]) > total // 2:
            return None
        rest = tails[taken]
        touched = np.concatenate([terms[i][0] for i in order[:taken]])
        partial = self._zeroed(len(self._ids))
        try:
            for i in order[:taken]:
                slots, tfs, repeats = terms[i]
                partial[slots] += repeats * self._shares(slots, tfs, slots.shape[0], total,
                                                         average)
            # A text's score is at most its partial score plus the bounds still to add;
            # the margin keeps texts whose bound ties the floor within rounding.
            reach = partial[touched] + rest >= floor * (1.0 - 1e-9)
            candidates = self._distinct_slots(touched[reach])
            bound = partial[candidates]
        finally:
            partial[touched] = 0.0
        if candidates.shape[0] > total // 4:
            return None
        for number, i in enumerate(order[taken:], start=taken):
            # Partial scores are real lower bounds: their k-th best may raise the floor.
            floor = max(floor, _kth_best(bound, top_k))
            rest = tails[number]
            keep = bound + rest >= floor * (1.0 - 1e-9)
            candidates, bound = candidates[keep], bound[keep]
            slots, tfs, repeats = terms[i]
            at = np.minimum(np.searchsorted(slots, candidates), slots.shape[0] - 1)
            hit = slots[at] == candidates
            bound[hit] += repeats * self._shares(candidates[hit], tfs[at[hit]],
                                                 slots.shape[0], total, average)
        # Summed in another order than the full scoring's: the survivors are scored
        # again, in query-term order, for bit-identical scores.
        candidates = candidates[bound >= max(floor, _kth_best(bound, top_k)) * (1.0 - 1e-9)]
        scores = self._scores_at(candidates, terms, total, average)
        positive = np.flatnonzero(scores > 0.0)
        return self._top(candidates[positive], scores[positive], top_k)

    def _seed_floor(self, seed: npt.NDArray[Any], terms: list[_Term], order: list[int],
                    tails: list[float], top_k: int, total: int, average: float) -> float:
        """A lower bound of the k-th best score: the k-th best of the seed texts' scores
        over the terms taken in ``order``, as many as can still lower the number of
        terms :meth:`_pruned_search` must score on every text they hold.

        Partial scores are lower bounds too, and the terms left (the commonest, whose
        postings cost the most to search) add little: once the bounds they could add
        cannot lift the floor past the next tail sum, scoring them changes nothing but
        the time (at 1M texts, a common rarest term made this half a query's time).
        """
        partial = np.zeros(seed.shape[0], dtype=np.float64)
        floor = 0.0
        for number, i in enumerate(order):
            slots, tfs, repeats = terms[i]
            if slots is seed:  # the seed is this term's texts
                partial += repeats * self._shares(slots, tfs, slots.shape[0], total, average)
            else:
                at = np.minimum(np.searchsorted(slots, seed), slots.shape[0] - 1)
                hit = slots[at] == seed
                if hit.any():
                    partial[hit] += repeats * self._shares(seed[hit], tfs[at[hit]],
                                                           slots.shape[0], total, average)
            floor = _kth_best(partial, top_k)
            taken = _taken(tails, floor)
            # The full scores are at most floor + tails[number + 1] apart from these.
            if taken == 0 or floor + tails[number + 1] <= tails[taken - 1]:
                break
        return floor

    def _distinct_slots(self, slots: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """``slots`` without repeats, in no particular order (cheaper than a sort):
        each slot's last position is written into a scratch table, and a slot is kept
        where it reads its own position back."""
        table: npt.NDArray[np.int64] | None = getattr(_SCRATCH, "owners", None)
        if table is None or table.shape[0] < len(self._ids):
            table = _SCRATCH.owners = np.empty(max(len(self._ids), 1024), dtype=np.int64)
        positions = np.arange(slots.shape[0], dtype=np.int64)
        table[slots] = positions
        distinct: npt.NDArray[Any] = slots[table[slots] == positions]
        return distinct

    def _zeroed(self, size: int) -> FloatArray:
        """This thread's all-zero score buffer, at least ``size`` long."""
        buffer: FloatArray | None = getattr(_SCRATCH, "buffer", None)
        if buffer is None or buffer.shape[0] < size:
            buffer = _SCRATCH.buffer = np.zeros(max(size, 1024), dtype=np.float64)
        return buffer

    def _scores_at(self, candidates: npt.NDArray[Any], terms: list[_Term], total: int,
                   average: float) -> FloatArray:
        """Full BM25 of the texts at ``candidates`` (distinct slots), term by term."""
        scores = np.zeros(candidates.shape[0], dtype=np.float64)
        for slots, tfs, repeats in terms:
            at = np.minimum(np.searchsorted(slots, candidates), slots.shape[0] - 1)
            hit = slots[at] == candidates
            if not hit.any():
                continue
            share = self._shares(candidates[hit], tfs[at[hit]], slots.shape[0], total,
                                 average)
            for _ in range(repeats):
                scores[hit] += share
        return scores


# Per searching thread, shared by every index: a score per slot, all zeros between
# searches, so a pruned search touches only the postings it reads, not an N-long array.
_SCRATCH = threading.local()

_Term = tuple[npt.NDArray[Any], npt.NDArray[Any], int]  # living slots (sorted), tfs, repeats


def _taken(tails: list[float], floor: float) -> int:
    """How many terms (highest bound first) a text must hold one of to reach ``floor``:
    ``tails[t]`` is the sum of the bounds from the t-th on."""
    taken = 0
    while taken < len(tails) - 1 and tails[taken] >= floor:
        taken += 1
    return taken


def _kth_best(scores: FloatArray, k: int) -> float:
    """The k-th largest of ``scores`` (0 when there are fewer than k)."""
    if scores.shape[0] < k:
        return 0.0
    return float(np.partition(scores, scores.shape[0] - k)[scores.shape[0] - k])


def _grown(values: npt.NDArray[Any], size: int) -> npt.NDArray[Any]:
    grown = np.zeros(size, dtype=values.dtype)
    grown[: values.shape[0]] = values
    return grown

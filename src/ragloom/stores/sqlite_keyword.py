"""Keyword search for the SQLite store: BM25 on FTS5, and the in-memory copy's upkeep.

:class:`Fts5Search` runs FTS5 statements over one collection's text index;
:class:`Fts5Ranker` picks the ``top_k`` best rows with them. Scores are those of
:mod:`ragloom.stores.bm25` (Lucene's idf), computed from FTS5's own statistics: a
one-word FTS5 query's ``bm25()`` is FTS5's idf times the word's term-frequency part
for each row, so dividing FTS5's idf out and multiplying Lucene's in gives the
row's share, with the same floating-point operations as the in-memory index.
:class:`KeywordCopy` holds a store object's in-memory copy of the text index (a
:class:`~ragloom.stores.bm25.BM25Index`) with the counts that decide when it is
built; the store builds it, since that needs its lock and a snapshot of its chunks.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from ragloom.scores import bm25_to_score
from ragloom.stores.bm25 import K1, BM25Index, contributions, lucene_idf
from ragloom.stores.sqlite_changes import changes_since
from ragloom.types import TextChunk, VectorEntry, VectorMatch

#: Rows fetched past ``top_k`` so that ties at the cut-off are seen and broken by id.
_TIE_ROOM = 16
#: Words whose match counts are remembered per collection generation.
_COUNT_CACHE_SIZE = 50_000

KeywordIndexMode = Literal["auto", "fts", "memory"]
KEYWORD_INDEX_MODES: tuple[str, ...] = get_args(KeywordIndexMode)
#: With ``keyword_index="auto"``, the keyword query (counted per store object) from
#: which the in-memory BM25 copy is built and used. Building tokenises every chunk
#: text in Python (1-2 s per 10k chunks), a few hundred FTS5 queries' worth, and pays
#: back only in a process that keeps querying. A one-shot CLI search or ask makes one
#: keyword query (two with a retry or a follow-up); a third marks a long-lived process
#: (server, notebook, benchmark, chat session), where every later query is then more
#: than 10x faster.
AUTO_KEYWORD_INDEX_AFTER = 3
#: Chunks changed by other connections that a query applies to the in-memory copy
#: itself (tokenising them: about 0.1 s per 1,000); past that, the copy is rebuilt in
#: a background thread and FTS5 answers meanwhile.
CATCH_UP_LIMIT = 2_000


def phrase(word: str) -> str:
    """An FTS5 MATCH phrase for one folded word (quoted: operators are plain words)."""
    return '"' + word.replace('"', '""') + '"'


class Fts5Search:
    """FTS5 statements over one collection's text index, optionally filtered by metadata.

    ``fts`` is ``fts_<integer id>`` and ``where`` SQL compiled from filters, never user
    text; words and filter values travel as bound parameters.
    """

    def __init__(
        self, conn: sqlite3.Connection, fts: str, where: str, params: Sequence[object]
    ) -> None:
        self.conn = conn
        self.fts = fts
        self.where = where
        self.params = list(params)

    def rows(self, word: str) -> list[tuple[int, float]]:
        """(rowid, FTS5 bm25) of every row holding ``word`` that the filters allow."""
        fts = self.fts
        sql = f"SELECT {fts}.rowid, -bm25({fts}) FROM {fts} "
        params: list[object] = [phrase(word)]
        if self.where:
            sql += (f"JOIN chunks AS c ON c.pk = {fts}.rowid WHERE {fts} MATCH ? "
                    f"AND {self.where}")
            params.extend(self.params)
        else:
            sql += f"WHERE {fts} MATCH ?"
        return [(int(rowid), float(value)) for rowid, value in self.conn.execute(sql, params)]

    def scores(self, word: str, rowids: Iterable[int]) -> list[tuple[int, float]]:
        """(rowid, FTS5 bm25) for ``word`` on those of these rows that hold it."""
        fts = self.fts
        # The unary + keeps the rowid test out of FTS5's query plan: offered to FTS5, it
        # would run the MATCH (and bm25's idf lookups) once per rowid.
        rows = self.conn.execute(
            f"SELECT rowid, -bm25({fts}) FROM {fts} WHERE {fts} MATCH ? "
            "AND +rowid IN (SELECT value FROM json_each(?))",
            (phrase(word), json.dumps(list(rowids))))
        return [(int(rowid), float(value)) for rowid, value in rows]

    def count(self, word: str) -> int:
        """How many rows of the whole collection hold ``word`` (n in the idf)."""
        sql = f"SELECT COUNT(*) FROM {self.fts} WHERE {self.fts} MATCH ?"
        return int(self.conn.execute(sql, (phrase(word),)).fetchone()[0])

    def total(self) -> int:
        """How many rows the text index holds (N in the idf)."""
        return int(self.conn.execute(f"SELECT COUNT(*) FROM {self.fts}_docsize").fetchone()[0])

    def chunk_ids(self, rowids: Iterable[int]) -> dict[int, str]:
        return dict(self.conn.execute(
            "SELECT c.pk, c.id FROM json_each(?) AS j CROSS JOIN chunks AS c "
            "ON c.pk = j.value", (json.dumps(list(rowids)),)))


def keyword_matches(best: Sequence[tuple[TextChunk, float]]) -> list[VectorMatch]:
    """Ranked (chunk, BM25) pairs as matches with contract scores."""
    raw = np.array([value for _, value in best], dtype=np.float64)
    return [VectorMatch(chunk=chunk, score=float(score), raw_score=value)
            for (chunk, value), score in zip(best, bm25_to_score(raw), strict=True)]


@dataclass
class _Term:
    """One query term while ranking: its counts and the shares found so far."""

    term: str
    word: str
    repeats: int
    found: int
    idf: float
    # rowid -> this term's share of the score; ``complete`` once every row holding the
    # term (and passing the filters) is in, else only for the rows in ``asked``.
    shares: dict[int, float]
    asked: set[int]
    complete: bool = False

    @property
    def bound(self) -> float:
        """More than the term can add to any row: a share stays below idf * (k1 + 1)."""
        return self.repeats * self.idf * (K1 + 1.0)


class Fts5Ranker:
    """BM25 ranking on FTS5 for one store object.

    The counts the idf needs are cached per ``stamp``, the collection's (id,
    generation): any write changes the stamp.
    """

    def __init__(self) -> None:
        self._total: tuple[tuple[int, int], int] | None = None
        self._counts: tuple[tuple[int, int], dict[str, int]] = ((0, 0), {})

    def ranked(
        self, search: Fts5Search, terms: Sequence[tuple[str, str, int]], top_k: int,
        stamp: tuple[int, int],
    ) -> list[tuple[int, float]]:
        """(rowid, BM25) pairs holding the ``top_k`` best rows and the rows tied with
        them; ``terms`` as :func:`~ragloom.retrieval.tokenize.query_terms` gives them.

        Max-score evaluation: every row holding one of the *selective* terms (the
        rarest, enough of them to fill ``top_k``) is a candidate; the frequent terms
        are looked up on the candidates only. A row holding none of the selective terms
        scores less than the frequent terms' bounds together, so once the k-th best
        candidate reaches that sum nothing else can enter; until then the rarer half of
        the frequent terms joins the selective ones.
        """
        total = self._rows(search, stamp)
        counts = self._word_counts(search, {word for _, word, _ in terms}, stamp)
        known = [_Term(term, word, repeats, counts[word], lucene_idf(counts[word], total), {},
                       set()) for term, word, repeats in terms if counts[word] > 0]
        if not known:
            return []
        order = sorted(known, key=lambda item: (item.found, item.term))
        selective, covered = 0, 0
        while selective < len(order) and covered < top_k + _TIE_ROOM:
            covered += order[selective].found
            selective += 1
        while True:
            for item in order[:selective]:
                if not item.complete:
                    rows = search.rows(item.word)
                    item.shares = self._shares(rows, item, total)
                    item.complete = True
            frequent = order[selective:]
            candidates = set().union(*(item.shares.keys() for item in order[:selective]))
            margin = sum(item.bound for item in frequent)
            if frequent:
                candidates = self._prune(candidates, known, top_k, margin)
                for item in frequent:
                    missing = candidates - item.asked
                    if missing:
                        item.shares.update(self._shares(search.scores(item.word, missing),
                                                        item, total))
                        item.asked |= missing
            scores = {row: _score(row, known) for row in candidates}
            best = sorted(scores.values(), reverse=True)
            if not frequent or (len(best) >= top_k and best[top_k - 1] >= margin):
                return _with_ties(search, scores, top_k)
            # The rarer half of the frequent terms joins: few rounds, not one per term.
            selective += max(1, len(frequent) // 2)

    @staticmethod
    def _shares(rows: list[tuple[int, float]], item: _Term, total: int) -> dict[int, float]:
        values = contributions(np.array([value for _, value in rows], dtype=np.float64),
                               item.found, total)
        return {rowid: float(share) for (rowid, _), share in zip(rows, values, strict=True)}

    @staticmethod
    def _prune(candidates: set[int], known: Sequence[_Term], top_k: int,
               margin: float) -> set[int]:
        """Candidates that could still reach the top: at most ``margin`` below the k-th
        best score from the terms known for every candidate."""
        partial = {row: _score(row, [t for t in known if t.complete]) for row in candidates}
        if len(partial) <= top_k:
            return candidates
        kth = sorted(partial.values(), reverse=True)[top_k - 1]
        floor = kth - margin - 1e-9 * max(kth, 1.0)
        return {row for row, value in partial.items() if value >= floor}

    def _word_counts(
        self, search: Fts5Search, words: set[str], stamp: tuple[int, int]
    ) -> dict[str, int]:
        if self._counts[0] != stamp or len(self._counts[1]) > _COUNT_CACHE_SIZE:
            self._counts = (stamp, {})
        known = self._counts[1]
        for word in words:
            if word not in known:
                known[word] = search.count(word)
        return {word: known[word] for word in words}

    def _rows(self, search: Fts5Search, stamp: tuple[int, int]) -> int:
        if self._total is None or self._total[0] != stamp:
            self._total = (stamp, search.total())
        return self._total[1]


def _score(row: int, terms: Sequence[_Term]) -> float:
    """A row's BM25: the terms' shares in query order, once per occurrence, as the
    in-memory index adds them (so the sums are bit-identical)."""
    score = 0.0
    for item in terms:
        share = item.shares.get(row)
        if share is not None:
            for _ in range(item.repeats):
                score += share
    return score


def _with_ties(
    search: Fts5Search, scores: dict[int, float], top_k: int
) -> list[tuple[int, float]]:
    """The ``top_k`` best rows and the rows tied with the last of them; with many
    ties, the ``top_k`` best with ties broken by chunk id (reading ids, not chunks)."""
    ranked = sorted(((row, value) for row, value in scores.items() if value > 0.0),
                    key=lambda pair: -pair[1])
    if len(ranked) <= top_k:
        return ranked
    cut = ranked[top_k - 1][1]
    ranked = [pair for pair in ranked if pair[1] >= cut]
    if len(ranked) > 2 * top_k + _TIE_ROOM:
        ids = search.chunk_ids(row for row, _ in ranked)
        ranked = sorted((pair for pair in ranked if pair[0] in ids),
                        key=lambda pair: (-pair[1], ids[pair[0]]))[:top_k]
    return ranked


class KeywordCopy:
    """A store object's in-memory keyword index and the counts around it.

    The store calls these under its lock. ``build_lock`` is held while an index is
    built (outside the store's lock, so readers go on).
    """

    def __init__(self) -> None:
        self.build_lock = threading.Lock()
        self.queries = 0
        self.builds = 0
        self.catch_ups = 0
        # Exactly the chunks as of change-log sequence ``seq`` (and the store's
        # generation); None until built and whenever it cannot be brought up to date.
        self.index: BM25Index | None = None
        self.seq = 0

    def wants(self, mode: KeywordIndexMode) -> bool:
        """Count a keyword query and say whether it should run on the in-memory index."""
        self.queries += 1
        if self.index is not None or mode == "fts":
            return False
        return mode == "memory" or self.queries >= AUTO_KEYWORD_INDEX_AFTER

    def update(self, removed: Sequence[str], added: Sequence[VectorEntry]) -> None:
        """Bring the in-memory keyword index past a committed write of the store object.

        Called under the store's lock after COMMIT, as the matrix is changed: a rolled-back
        write never reaches it. Should the update fail half way, the index is dropped
        (FTS5 answers until it is rebuilt) rather than left wrong.
        """
        index = self.index
        if index is None:
            return
        try:
            index.remove(removed)
            index.add((entry.id, entry.chunk.text) for entry in added)
        except BaseException:
            self.index = None
            raise

    def catch_up(self, conn: sqlite3.Connection, cid: int, logged: bool) -> bool:
        """Apply other connections' changes (the change log past ``seq``) to the index,
        in the caller's read snapshot; returns True when that was not possible (too
        many changes, or the log does not reach back) and the index was dropped, so
        the store rebuilds it in the background while FTS5 answers."""
        index = self.index
        if index is None:
            return False
        changes = changes_since(conn, cid, self.seq, CATCH_UP_LIMIT) if logged else None
        if changes is None:
            self.index = None
            return True
        try:
            index.remove(changes.removed)
            index.add((chunk_id, text) for _, chunk_id, text, _ in changes.current)
        except BaseException:
            self.index = None
            raise
        self.seq = changes.seq
        self.catch_ups += bool(changes.removed)
        return False

"""Keyword search for the SQLite store: BM25 on FTS5, and the in-memory copy's upkeep.

:class:`Fts5Search` runs FTS5 statements over one collection's text index;
:class:`Fts5Ranker` picks the ``top_k`` best rows with them, splitting the query words
into selective and frequent ones so that frequent words do not make FTS5 score most of
the collection. :class:`KeywordCopy` holds a store object's in-memory copy of the text
index (a :class:`~ragloom.stores.bm25.BM25Index`) with the counts that decide when it
is built; the store builds it, since that needs its lock and a snapshot of its chunks.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Literal, get_args

import numpy as np

from ragloom.retrieval.scores import bm25_to_score
from ragloom.stores.bm25 import FTS5_IDF_FLOOR, K1, BM25Index
from ragloom.types import TextChunk, VectorEntry, VectorMatch

#: Rows fetched past ``top_k`` so that ties at the cut-off are seen and broken by id.
_TIE_ROOM = 16
#: Phrases whose match counts are remembered per collection generation.
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


class Fts5Search:
    """FTS5 statements over one collection's text index, optionally filtered by metadata.

    ``fts`` is ``fts_<integer id>`` and ``where`` SQL compiled from filters, never user
    text; phrases and filter values travel as bound parameters. Scores are FTS5's
    ``-bm25()``: positive, higher is better.
    """

    def __init__(
        self, conn: sqlite3.Connection, fts: str, where: str, params: Sequence[object]
    ) -> None:
        self.conn = conn
        self.fts = fts
        self.where = where
        self.params = list(params)

    def top(
        self, match: str, limit: int | None, *, at_least: float | None = None,
        by_id: bool = False,
    ) -> list[tuple[int, float]]:
        """The best (rowid, BM25) pairs for an FTS5 ``match`` expression, best first.

        At most ``limit`` (``None``: no limit), only scores >= ``at_least`` if given;
        ``by_id`` breaks ties by chunk id in SQL (at the cost of a join per row).
        """
        fts = self.fts
        sql = f"SELECT {fts}.rowid, -bm25({fts}) AS s FROM {fts} "
        params: list[object] = [match]
        if self.where or by_id:
            sql += f"JOIN chunks AS c ON c.pk = {fts}.rowid WHERE {fts} MATCH ? "
        else:
            sql += f"WHERE {fts} MATCH ? "
        if at_least is not None:
            sql += f"AND -bm25({fts}) >= ? "
            params.append(at_least)
        if self.where:
            sql += f"AND {self.where} "
            params.extend(self.params)
        sql += "ORDER BY s DESC, c.id" if by_id else "ORDER BY s DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [(int(rowid), float(value)) for rowid, value in self.conn.execute(sql, params)]

    def best(self, match: str, top_k: int) -> list[tuple[int, float]]:
        """The ``top_k`` best rows and any rows tied with the last of them."""
        limit = top_k + _TIE_ROOM
        rows = self.top(match, limit)
        if len(rows) == limit and rows[-1][1] == rows[top_k - 1][1]:
            # Ties reach past the rows fetched: let SQLite break them by chunk id.
            rows = self.top(match, top_k, at_least=rows[top_k - 1][1], by_id=True)
        return rows

    def scores(self, match: str, rowids: Iterable[int]) -> list[tuple[int, float]]:
        """(rowid, BM25) for ``match`` on those of these rows that it matches."""
        fts = self.fts
        # The unary + keeps the rowid test out of FTS5's query plan: offered to FTS5, it
        # would run the MATCH (and bm25's idf lookups) once per rowid.
        rows = self.conn.execute(
            f"SELECT rowid, -bm25({fts}) FROM {fts} WHERE {fts} MATCH ? "
            "AND +rowid IN (SELECT value FROM json_each(?))",
            (match, json.dumps(list(rowids))))
        return [(int(rowid), float(value)) for rowid, value in rows]

    def count(self, phrase: str) -> int:
        """How many rows of the whole collection match ``phrase``."""
        sql = f"SELECT COUNT(*) FROM {self.fts} WHERE {self.fts} MATCH ?"
        return int(self.conn.execute(sql, (phrase,)).fetchone()[0])


def _any(phrases: Sequence[str]) -> str:
    return "(" + " OR ".join(phrases) + ")"


def keyword_matches(best: Sequence[tuple[TextChunk, float]]) -> list[VectorMatch]:
    """Ranked (chunk, BM25) pairs as matches with contract scores."""
    raw = np.array([value for _, value in best], dtype=np.float64)
    return [VectorMatch(chunk=chunk, score=float(score), raw_score=value)
            for (chunk, value), score in zip(best, bm25_to_score(raw), strict=True)]


class Fts5Ranker:
    """BM25 ranking on FTS5 for one store object.

    The phrase and row counts the selective/frequent split needs are cached per
    ``stamp``, the collection's (id, generation): any write changes the stamp.
    """

    def __init__(self) -> None:
        self._total: tuple[tuple[int, int], int] | None = None
        self._counts: tuple[tuple[int, int], dict[str, int]] = ((0, 0), {})

    def ranked(
        self, search: Fts5Search, phrases: Sequence[str], top_k: int, stamp: tuple[int, int]
    ) -> list[tuple[int, float]]:
        """(rowid, BM25) pairs holding the ``top_k`` best rows (ties broken by chunk id)."""
        rows = self._bm25(search, phrases, top_k, stamp)
        if len(rows) > 2 * top_k + _TIE_ROOM:
            # Many ties: rank by chunk id first and read only the winners' rows.
            ids = dict(search.conn.execute(
                "SELECT c.pk, c.id FROM json_each(?) AS j CROSS JOIN chunks AS c "
                "ON c.pk = j.value", (json.dumps([rowid for rowid, _ in rows]),)))
            rows = sorted((row for row in rows if row[0] in ids),
                          key=lambda row: (-row[1], ids[row[0]]))[:top_k]
        return rows

    def _bm25(
        self, search: Fts5Search, phrases: Sequence[str], top_k: int, stamp: tuple[int, int]
    ) -> list[tuple[int, float]]:
        """(rowid, BM25) pairs holding the ``top_k`` best rows and the rows tied with them.

        The scores are those of one FTS5 query OR-ing every phrase, but that query
        scores every row holding any phrase, and frequent words are in most rows while
        weighing little (FTS5 floors the idf of words in half the rows or more at 1e-6).
        So the selective phrases pick the candidates first, as in max-score query
        evaluation: a phrase adds less than idf * (k1 + 1) to any row, so rows further
        than the frequent phrases' total below the k-th best by the selective phrases
        cannot reach the top. The candidates' full scores then come from a query that
        matches only rows holding both kinds. Any doubt falls back to the one query.
        """
        everything = _any(phrases)
        split = self._split(search, phrases, top_k, stamp)
        if split is None:
            return search.best(everything, top_k)
        selective, frequent, margin = split
        limit = top_k + _TIE_ROOM
        rows = search.top(_any(selective), limit)
        if not rows:
            return search.best(everything, top_k)
        cut = rows[min(top_k, len(rows)) - 1][1]
        # The full query sums the same terms in another order; the slack covers that.
        slack = 1e-9 * max(cut, 1.0)
        if cut <= margin + slack:
            # Rows with frequent words only could outscore these.
            return search.best(everything, top_k)
        lowest = cut - margin - slack
        if len(rows) == limit and rows[-1][1] >= lowest:
            rows = search.top(_any(selective), None, at_least=lowest)
        candidates = {rowid: value for rowid, value in rows if value >= lowest}
        # Each phrase appears as often as in the query, so repeats count each time; a
        # candidate without a frequent phrase keeps its score (they add 0 there).
        candidates.update(search.scores(f"{_any(frequent)} AND {_any(selective)}", candidates))
        result = list(candidates.items())
        if len(rows) < top_k:
            # Every row with a selective phrase is in and outranks the rows with frequent
            # phrases only; the best of those fill the remaining places.
            result += search.best(f"{everything} NOT {_any(selective)}", top_k - len(rows))
        return result

    def _split(
        self, search: Fts5Search, phrases: Sequence[str], top_k: int, stamp: tuple[int, int]
    ) -> tuple[list[str], list[str], float] | None:
        """(selective, frequent, margin): phrases (repeats kept) split for :meth:`_bm25`.

        ``margin`` bounds what the frequent phrases add to a row. Floored phrases are
        always frequent; others while the margin stays well under an estimate of the
        k-th best score and the selective phrases' rows can fill ``top_k``. None when
        no phrase is frequent.
        """
        counts = self._phrase_counts(search, set(phrases), stamp)
        total = self._fts_rows(search.conn, search.fts, stamp)
        weights: dict[str, float] = {}
        for phrase, found in counts.items():
            idf = math.log((total - found + 0.5) / (found + 0.5))
            weights[phrase] = idf if idf > 0.0 else FTS5_IDF_FLOOR
        repeats = Counter(phrases)
        ordered = sorted(repeats, key=lambda phrase: (weights[phrase], phrase))
        # Roughly the k-th best score: one occurrence, in a row of average length, of
        # the phrase at which the most selective phrases' rows add up to top_k.
        estimate, found = 0.0, 0
        for phrase in reversed(ordered):
            estimate, found = weights[phrase], found + counts[phrase]
            if found >= top_k + _TIE_ROOM:
                break
        best: int | None = None
        margin = 0.0
        for i in range(1, len(ordered)):
            margin += repeats[ordered[i - 1]] * weights[ordered[i - 1]] * (K1 + 1.0)
            floored = weights[ordered[i - 1]] == FTS5_IDF_FLOOR
            fills = sum(counts[phrase] for phrase in ordered[i:]) >= top_k + _TIE_ROOM
            if not (floored or (margin < 0.25 * estimate and fills)):
                break
            best = i
        if best is None:
            return None
        frequent = set(ordered[:best])
        margin = sum(repeats[phrase] * weights[phrase] for phrase in frequent) * (K1 + 1.0)
        return ([phrase for phrase in phrases if phrase not in frequent],
                [phrase for phrase in phrases if phrase in frequent], margin)

    def _phrase_counts(
        self, search: Fts5Search, phrases: set[str], stamp: tuple[int, int]
    ) -> dict[str, int]:
        """How many rows match each phrase (n in its idf), cached per generation."""
        if self._counts[0] != stamp or len(self._counts[1]) > _COUNT_CACHE_SIZE:
            self._counts = (stamp, {})
        known = self._counts[1]
        for phrase in phrases:
            if phrase not in known:
                known[phrase] = search.count(phrase)
        return {phrase: known[phrase] for phrase in phrases}

    def _fts_rows(self, conn: sqlite3.Connection, fts: str, stamp: tuple[int, int]) -> int:
        """How many rows the text index holds (N in BM25), cached per generation."""
        if self._total is None or self._total[0] != stamp:
            total = conn.execute(f"SELECT COUNT(*) FROM {fts}_docsize").fetchone()[0]
            self._total = (stamp, int(total))
        return self._total[1]


class KeywordCopy:
    """A store object's in-memory keyword index and the counts around it.

    The store calls these under its lock. ``build_lock`` is held while an index is
    built (outside the store's lock, so readers go on).
    """

    def __init__(self) -> None:
        self.build_lock = threading.Lock()
        self.queries = 0
        self.builds = 0
        # Exactly the chunks at the store's (_cid, _generation); None until built and
        # whenever it might be stale.
        self.index: BM25Index | None = None

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

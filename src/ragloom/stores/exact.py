"""Exact nearest-neighbour search over a float32 matrix held in memory.

Both the in-memory and the SQLite store keep their dense vectors here; SQLite is the
record of truth and this matrix is rebuilt from it on open.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from ragloom.errors import DimensionMismatchError
from ragloom.scores import cosine_to_score, dot_to_score, euclidean_to_score

Metric: TypeAlias = Literal["cosine", "euclidean", "dot"]
METRICS: tuple[Metric, ...] = ("cosine", "euclidean", "dot")


class DenseMatrix:
    """Row-per-id float32 matrix with swap-remove deletes and amortised growth."""

    def __init__(self, metric: Metric = "cosine", dimension: int | None = None) -> None:
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
        self.metric: Metric = metric
        self.dimension = dimension
        self._rows = np.zeros((0, dimension or 0), dtype=np.float32)
        self._size = 0
        self._ids: list[str] = []
        self._position: dict[str, int] = {}

    def __len__(self) -> int:
        return self._size

    def __contains__(self, item: str) -> bool:
        return item in self._position

    @property
    def ids(self) -> list[str]:
        return self._ids

    def _prepare(self, vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        vector = np.asarray(vector, dtype=np.float32)
        if self.dimension is None:
            self.dimension = int(vector.shape[0])
            self._rows = np.zeros((0, self.dimension), dtype=np.float32)
        if vector.shape[0] != self.dimension:
            raise DimensionMismatchError(
                f"vector has {vector.shape[0]} dimensions; this collection holds {self.dimension}"
            )
        if self.metric == "cosine":
            # Normalise once on the way in so a query is one matrix product.
            norm = float(np.linalg.norm(vector))
            vector = vector / norm if norm > 0 else vector
        return vector

    def upsert(self, items: Iterable[tuple[str, npt.NDArray[np.float32]]]) -> None:
        for item_id, raw in items:
            vector = self._prepare(raw)
            row = self._position.get(item_id)
            if row is None:
                self._grow(self._size + 1)
                row = self._size
                self._size += 1
                self._ids.append(item_id)
                self._position[item_id] = row
            self._rows[row] = vector

    def _grow(self, needed: int) -> None:
        if needed <= self._rows.shape[0]:
            return
        capacity = max(needed, int(self._rows.shape[0] * 1.5) + 16)
        grown = np.zeros((capacity, self.dimension or 0), dtype=np.float32)
        grown[: self._size] = self._rows[: self._size]
        self._rows = grown

    def remove(self, ids: Iterable[str]) -> int:
        removed = 0
        for item_id in ids:
            row = self._position.pop(item_id, None)
            if row is None:
                continue
            last = self._size - 1
            if row != last:
                moved = self._ids[last]
                self._rows[row] = self._rows[last]
                self._ids[row] = moved
                self._position[moved] = row
            self._ids.pop()
            self._size -= 1
            removed += 1
        return removed

    def search(
        self,
        query: npt.NDArray[np.float32],
        top_k: int,
        allowed: Sequence[str] | None = None,
    ) -> list[tuple[str, float, float]]:
        """The ``top_k`` nearest ids as (id, score in [0, 1], raw measure)."""
        if self._size == 0 or top_k <= 0:
            return []
        query = np.asarray(query, dtype=np.float32)
        if query.shape[0] != self.dimension:
            raise DimensionMismatchError(
                f"query has {query.shape[0]} dimensions; this collection holds {self.dimension}"
            )
        if allowed is None:
            rows = np.arange(self._size)
            matrix = self._rows[: self._size]
        else:
            rows = np.fromiter(
                (self._position[i] for i in allowed if i in self._position), dtype=np.int64
            )
            if rows.size == 0:
                return []
            matrix = self._rows[rows]
        raw, order_key = self._measure(matrix, query)
        k = min(top_k, raw.shape[0])
        if k < raw.shape[0]:
            top = np.argpartition(order_key, -k)[-k:]
            # Everything tied with the k-th best competes for the last places (a NaN
            # measure, which compares false, keeps the partition's choice).
            tied = np.flatnonzero(order_key >= order_key[top].min())
            best = tied if tied.size >= k else top
        else:
            best = np.arange(raw.shape[0])
        best = best[np.argsort(-order_key[best], kind="stable")]
        keys = order_key[best]
        if keys.size > 1 and bool(np.any(keys[1:] == keys[:-1])):
            # Ties break by id so results are deterministic across stores (rare with
            # real vectors: the common case orders in NumPy, not per item in Python).
            best = np.array(sorted(best.tolist(), key=lambda i: (-order_key[i],
                                                                  self._ids[rows[i]])),
                            dtype=np.int64)
        best = best[:k]
        ids = self._ids
        found = [ids[row] for row in rows[best].tolist()]
        measured = raw[best]
        return list(zip(found, self._score(measured).tolist(), measured.tolist(), strict=True))

    def _measure(
        self, matrix: npt.NDArray[np.float32], query: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        if self.metric == "euclidean":
            distance = np.linalg.norm(matrix - query, axis=1).astype(np.float64)
            return distance, -distance
        if self.metric == "cosine":
            norm = float(np.linalg.norm(query))
            query = query / norm if norm > 0 else query
        product = (matrix @ query).astype(np.float64)
        return product, product

    def _score(self, raw: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        if self.metric == "cosine":
            return cosine_to_score(raw)
        if self.metric == "dot":
            return dot_to_score(raw)
        return euclidean_to_score(raw)

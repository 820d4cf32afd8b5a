"""An approximate (HNSW) index beside the SQLite store, rebuildable from it at any time.

SQLite stays the record of truth; this sidecar only answers "which ids are near".
It is a file next to the database (``<db>.<collection>.hnsw`` plus a JSON label map,
never pickle) stamped with the collection's generation: a sidecar whose stamp does
not match the database is stale and is rebuilt, so a crash or another process's
write can cost a rebuild but never a wrong answer.

hnswlib was chosen by measurement (``bench/ann_libraries.py``): on clustered 384-d
data it gave the lowest single-thread query latency at recall@10 >= 0.95 of
usearch, hnswlib and faiss-cpu, and of those it alone offers both in-place deletes
(``mark_deleted``) and a filter callback. Filtered queries are still answered by
exact search when the filter is selective (see :meth:`HnswSidecar.search`): a graph
walk that must skip most nodes loses recall.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ragloom._optional import require

Vector = npt.NDArray[np.float32]

#: Below this many vectors exact search is fast enough (~1 ms per 10k rows here).
DEFAULT_THRESHOLD = 50_000


@dataclass(frozen=True)
class AnnSettings:
    """HNSW build and search settings.

    ``ef_search`` trades latency for recall per query. At 1M clustered 384-d vectors
    (``bench/ann_scale.py``, one thread) 64 reached recall@10 0.81-0.83 and 256 reached
    0.974-0.989 at about 0.7 ms p50, so 256 is the default: the recall a user gets
    must not sink as the collection grows, and the extra walk costs under a
    millisecond next to the query embedding's few.
    """

    m: int = 16
    ef_construction: int = 128
    ef_search: int = 256
    threshold: int = DEFAULT_THRESHOLD
    build_threads: int = 2
    #: A filter that keeps fewer than this share of the rows is searched exactly.
    exact_below: float = 0.05


def _hnswlib() -> Any:
    return require("hnswlib", package="hnswlib", extra="ann",
                   purpose="the approximate vector index")


class HnswSidecar:
    """An HNSW graph over one collection's vectors, keyed by chunk id.

    Vectors must already be prepared as the exact matrix holds them (unit length
    for cosine); the index measures inner product, and :meth:`search` returns raw
    inner products so the caller maps them onto scores as exact search does.
    """

    def __init__(self, dimension: int, settings: AnnSettings | None = None) -> None:
        self.dimension = dimension
        self.settings = settings or AnnSettings()
        self._index: Any = None
        self._labels: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._live = 0
        self._lock = threading.Lock()
        self.stamp: str = ""

    def __len__(self) -> int:
        return self._live

    # ------------------------------------------------------------------ building
    def build(self, ids: Sequence[str], vectors: Vector, stamp: str = "") -> None:
        hnswlib = _hnswlib()
        index = hnswlib.Index(space="ip", dim=self.dimension)
        capacity = max(1024, int(len(ids) * 1.1))
        index.init_index(max_elements=capacity, M=self.settings.m,
                         ef_construction=self.settings.ef_construction,
                         allow_replace_deleted=True)
        index.set_num_threads(self.settings.build_threads)
        if len(ids):
            index.add_items(np.asarray(vectors, dtype=np.float32), np.arange(len(ids)))
        index.set_num_threads(1)
        index.set_ef(self.settings.ef_search)
        with self._lock:
            self._index = index
            self._ids = list(ids)
            self._labels = {item: n for n, item in enumerate(ids)}
            self._live = len(ids)
            self.stamp = stamp

    def upsert(self, items: Iterable[tuple[str, Vector]], stamp: str = "") -> None:
        """Add or replace vectors; a replaced id is deleted and re-added."""
        with self._lock:
            index = self._require()
            for item_id, vector in items:
                old = self._labels.pop(item_id, None)
                if old is not None:
                    index.mark_deleted(old)
                    self._ids[old] = None
                    self._live -= 1
                label = len(self._ids)
                if label >= index.get_max_elements():
                    index.resize_index(max(label + 1, int(index.get_max_elements() * 1.5)))
                index.add_items(np.asarray(vector, dtype=np.float32).reshape(1, -1), [label])
                self._ids.append(item_id)
                self._labels[item_id] = label
                self._live += 1
            if stamp:
                self.stamp = stamp

    def remove(self, ids: Iterable[str], stamp: str = "") -> int:
        removed = 0
        with self._lock:
            index = self._require()
            for item_id in ids:
                label = self._labels.pop(item_id, None)
                if label is None:
                    continue
                index.mark_deleted(label)
                self._ids[label] = None
                self._live -= 1
                removed += 1
            if stamp:
                self.stamp = stamp
        return removed

    def _require(self) -> Any:
        if self._index is None:
            raise RuntimeError("the HNSW sidecar is not built; call build() or load() first")
        return self._index

    # ----------------------------------------------------------------- searching
    def search(
        self, query: Vector, top_k: int, allowed: set[str] | None = None
    ) -> list[tuple[str, float]] | None:
        """Nearest ids with their inner product, best first.

        Returns None when the caller should search exactly instead: an empty index
        or a filter so selective that a graph walk would lose recall.
        """
        with self._lock:
            index = self._require()
            if self._live == 0 or top_k <= 0:
                return []
            if allowed is not None and len(allowed) < self.settings.exact_below * self._live:
                return None
            k = min(top_k, self._live)
            vector = np.asarray(query, dtype=np.float32).reshape(1, -1)
            index.set_ef(max(self.settings.ef_search, k))
            if allowed is None:
                labels, distances = index.knn_query(vector, k=k, num_threads=1)
            else:
                wanted = {self._labels[i] for i in allowed if i in self._labels}
                k = min(k, len(wanted))
                if k == 0:
                    return []
                labels, distances = index.knn_query(
                    vector, k=k, num_threads=1, filter=wanted.__contains__)
            found: list[tuple[str, float]] = []
            for label, distance in zip(labels[0].tolist(), distances[0].tolist(), strict=True):
                item = self._ids[label]
                if item is not None:
                    # hnswlib's "ip" space reports 1 - <a, b>.
                    found.append((item, 1.0 - float(distance)))
            return found

    # ---------------------------------------------------------------- persisting
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index and its label map atomically (temp files, then rename)."""
        target = Path(path)
        with self._lock:
            index = self._require()
            tmp_index = target.with_name(target.name + ".tmp")
            index.save_index(str(tmp_index))
            labels = {"stamp": self.stamp, "dimension": self.dimension, "ids": self._ids}
            tmp_labels = _labels_path(target).with_name(_labels_path(target).name + ".tmp")
            tmp_labels.write_text(json.dumps(labels), encoding="utf-8")
            os.replace(tmp_index, target)
            os.replace(tmp_labels, _labels_path(target))

    def load(self, path: str | os.PathLike[str], expected_stamp: str) -> bool:
        """Load a saved sidecar if its stamp matches; False (nothing loaded) otherwise."""
        target = Path(path)
        labels_file = _labels_path(target)
        if not target.is_file() or not labels_file.is_file():
            return False
        try:
            labels = json.loads(labels_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if labels.get("stamp") != expected_stamp or labels.get("dimension") != self.dimension:
            return False
        hnswlib = _hnswlib()
        index = hnswlib.Index(space="ip", dim=self.dimension)
        try:
            index.load_index(str(target), allow_replace_deleted=True)
        except RuntimeError:
            return False
        index.set_num_threads(1)
        index.set_ef(self.settings.ef_search)
        ids: list[str | None] = labels["ids"]
        with self._lock:
            self._index = index
            self._ids = ids
            self._labels = {item: n for n, item in enumerate(ids) if item is not None}
            self._live = len(self._labels)
            self.stamp = expected_stamp
        return True


def _labels_path(index_path: Path) -> Path:
    return index_path.with_name(index_path.name + ".labels.json")


def sidecar_path(db_path: str, collection: str) -> Path | None:
    """Where a collection's sidecar lives, or None for an in-memory database."""
    if db_path == ":memory:":
        return None
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in collection)
    return Path(f"{db_path}.{safe}.hnsw")

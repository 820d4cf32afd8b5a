"""The exact matrix with an HNSW sidecar that takes over past a size threshold.

:class:`ApproximateMatrix` is a drop-in :class:`~ragloom.stores.exact.DenseMatrix`:
every vector stays in the exact matrix (the sidecar is rebuilt from it), and every
upsert or delete reaches both, so the two never disagree about which ids exist.
Once the collection holds ``threshold`` vectors a build starts in a background
thread; exact search answers until it is done, so no query waits for a build.
A sidecar saved by an earlier process is loaded instead when its stamp (the
collection's id and generation) matches the database's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ragloom.stores.ann import AnnSettings, HnswSidecar
from ragloom.stores.exact import DenseMatrix, Metric

log = logging.getLogger(__name__)

Vector = npt.NDArray[np.float32]


def hnsw_available() -> bool:
    try:
        import hnswlib  # noqa: F401
    except ImportError:
        return False
    return True


class ApproximateMatrix(DenseMatrix):
    """A :class:`DenseMatrix` that answers unfiltered and broad queries through HNSW.

    Only inner-product metrics (cosine on unit vectors, dot) use the sidecar;
    euclidean collections stay exact.
    """

    def __init__(
        self,
        metric: Metric = "cosine",
        dimension: int | None = None,
        *,
        settings: AnnSettings | None = None,
        path: Path | None = None,
        stamp: str = "",
        background: bool = True,
    ) -> None:
        super().__init__(metric, dimension)
        self.settings = settings or AnnSettings()
        self.path = path
        self.stamp = stamp
        self.background = background
        self._sidecar: HnswSidecar | None = None
        self._building: threading.Thread | None = None
        self._pending: list[tuple[str, str, Vector | None]] | None = None
        self._guard = threading.Lock()

    @property
    def approximate(self) -> bool:
        """True once searches go through the sidecar."""
        return self._sidecar is not None

    # ------------------------------------------------------------ keeping in step
    def upsert(self, items: Iterable[tuple[str, npt.NDArray[np.float32]]]) -> None:
        prepared = [(item_id, self._prepare(vector)) for item_id, vector in items]
        super().upsert(prepared)
        with self._guard:
            if self._sidecar is not None:
                self._sidecar.upsert(prepared, stamp=self.stamp)
            elif self._pending is not None:
                self._pending.extend(("add", i, v) for i, v in prepared)

    def remove(self, ids: Iterable[str]) -> int:
        ids = list(ids)
        removed = super().remove(ids)
        with self._guard:
            if self._sidecar is not None:
                self._sidecar.remove(ids, stamp=self.stamp)
            elif self._pending is not None:
                self._pending.extend(("remove", i, None) for i in ids)
        return removed

    def _prepare(self, vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        # Preparing twice (here and in DenseMatrix.upsert) must be harmless:
        # normalising a unit vector leaves it unchanged.
        return super()._prepare(vector)

    # ------------------------------------------------------------------ searching
    def search(
        self,
        query: npt.NDArray[np.float32],
        top_k: int,
        allowed: Sequence[str] | None = None,
    ) -> list[tuple[str, float, float]]:
        sidecar = self._ready_sidecar()
        if sidecar is None:
            return super().search(query, top_k, allowed)
        prepared = np.asarray(query, dtype=np.float32)
        if self.metric == "cosine":
            norm = float(np.linalg.norm(prepared))
            prepared = prepared / norm if norm > 0 else prepared
        found = sidecar.search(prepared, top_k, None if allowed is None else set(allowed))
        if found is None:
            return super().search(query, top_k, allowed)
        found.sort(key=lambda hit: (-hit[1], hit[0]))
        raw = np.array([value for _, value in found], dtype=np.float64)
        scores = self._score(raw) if len(found) else raw
        return [(item, float(scores[n]), float(raw[n])) for n, (item, _) in enumerate(found)]

    def _ready_sidecar(self) -> HnswSidecar | None:
        if self._sidecar is not None:
            return self._sidecar
        if (self.metric == "euclidean" or self.dimension is None
                or len(self) < self.settings.threshold or not hnsw_available()):
            return None
        with self._guard:
            if self._sidecar is None and self._building is None:
                if self._load_saved():
                    return self._sidecar
                self._start_build()
        return self._sidecar

    # ------------------------------------------------------------------- building
    def _load_saved(self) -> bool:
        if self.path is None or not self.stamp or self.dimension is None:
            return False
        sidecar = HnswSidecar(self.dimension, self.settings)
        if sidecar.load(self.path, self.stamp) and len(sidecar) == len(self):
            self._sidecar = sidecar
            return True
        return False

    def _start_build(self) -> None:
        ids = list(self.ids)
        rows = self._rows[: len(ids)].copy()
        self._pending = []
        if self.background:
            self._building = threading.Thread(
                target=self._build, args=(ids, rows), name="ragloom-hnsw-build", daemon=True)
            self._building.start()
        else:
            self._building = threading.current_thread()
            self._guard.release()
            try:
                self._build(ids, rows)
            finally:
                self._guard.acquire()

    def _build(self, ids: list[str], rows: Vector) -> None:
        assert self.dimension is not None
        sidecar = HnswSidecar(self.dimension, self.settings)
        try:
            sidecar.build(ids, rows, stamp=self.stamp)
        except Exception:  # a failed build leaves exact search in charge
            log.exception("building the HNSW index failed; exact search continues")
            with self._guard:
                self._pending, self._building = None, None
            return
        with self._guard:
            for action, item, vector in self._pending or []:
                if action == "add" and vector is not None:
                    sidecar.upsert([(item, vector)])
                else:
                    sidecar.remove([item])
            sidecar.stamp = self.stamp
            self._sidecar, self._pending, self._building = sidecar, None, None
        self.save()

    def wait_until_built(self, timeout: float | None = None) -> bool:
        """Block until a running background build ends; True if the sidecar is in use."""
        building = self._building
        if building is not None and building is not threading.current_thread():
            building.join(timeout)
        return self._sidecar is not None

    def save(self) -> None:
        """Persist the sidecar beside the database (a no-op without one or a path)."""
        sidecar, path = self._sidecar, self.path
        if sidecar is None or path is None:
            return
        try:
            sidecar.save(path)
        except OSError as exc:
            log.warning("could not save the HNSW index to %s: %s", path, exc)

    def set_stamp(self, stamp: str) -> None:
        """The database moved to a new generation through this process's own write."""
        self.stamp = stamp
        with self._guard:
            if self._sidecar is not None:
                self._sidecar.stamp = stamp

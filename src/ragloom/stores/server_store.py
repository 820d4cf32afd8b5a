"""What the stores on a database server share (PgVectorStore, MilvusStore).

Both name one knowledge base (``collection``) in a database reached by a URL, check
their settings at construction and connect on first use or :meth:`ServerStore.open`
(``close`` and ``with`` blocks too), offer ``"exact"`` or ``"hnsw"`` search with the
same three HNSW settings, bind an embedder the same way, turn their engine's
distances into the score contract the same way, and describe an empty or missing
collection the same way. Subclasses write :meth:`ServerStore._connect` and
:meth:`ServerStore._disconnect`.
"""

from __future__ import annotations

import threading
from typing import Literal, TypeVar

import numpy as np
import numpy.typing as npt

from ragloom.errors import CollectionDroppedError, ConfigurationError, EmbedderMismatchError
from ragloom.protocols import CollectionInfo, CollectionStats
from ragloom.scores import cosine_to_score, dot_to_score, euclidean_to_score
from ragloom.stores.exact import METRICS, Metric

IndexKind = Literal["exact", "hnsw"]
_Self = TypeVar("_Self", bound="ServerStore")


class ServerStore:
    """Settings, connection life cycle and shared checks of a server-backed store."""

    def __init__(self, collection: str, metric: Metric | None, index: IndexKind,
                 hnsw: tuple[int, int, int]) -> None:
        if metric is not None and metric not in METRICS:
            raise ConfigurationError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
        if index not in ("exact", "hnsw"):
            raise ConfigurationError(f"unknown index {index!r}; use 'exact' or 'hnsw'")
        if not isinstance(collection, str) or not collection:
            raise ConfigurationError("a collection name must be a non-empty string")
        self.name = collection
        self.index_kind: IndexKind = index
        #: (m, ef_construction, ef_search) for ``index="hnsw"``.
        m, ef_construction, ef_search = hnsw
        self.hnsw = (int(m), int(ef_construction), int(ef_search))
        self._metric_arg = metric
        self._lock = threading.RLock()
        #: Set by :meth:`drop`: a write then raises CollectionDroppedError.
        self._dropped = False

    # ---------------------------------------------------------------- connection
    def _connect(self) -> object:
        """Connect if not connected (under ``self._lock``); returns the connection."""
        raise NotImplementedError

    def _disconnect(self) -> None:
        """Let go of the connection (under ``self._lock``), if any."""
        raise NotImplementedError

    def open(self: _Self) -> _Self:
        with self._lock:
            self._connect()
        return self

    def close(self) -> None:
        with self._lock:
            self._disconnect()

    def drop_collection(self) -> bool:
        raise NotImplementedError

    def drop(self) -> bool:
        """Delete the collection (:meth:`drop_collection`); later writes through this
        object raise :class:`~ragloom.errors.CollectionDroppedError`."""
        with self._lock:
            self._dropped = True
            return self.drop_collection()

    def _refuse_dropped(self) -> None:
        if self._dropped:
            raise CollectionDroppedError(
                f"collection {self.name!r} was deleted; it is not created again by a "
                "write (open a new store object to create it on purpose)")

    def __enter__(self: _Self) -> _Self:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---------------------------------------------------------------- shared checks
    def _check_metric(self, stored: str) -> None:
        if self._metric_arg is not None and stored != self._metric_arg:
            raise ConfigurationError(
                f"collection {self.name!r} uses the {stored} metric, not {self._metric_arg}; "
                f"open it with metric={stored!r} or metric=None")

    def _check_binding(self, bound: str | None, known: int | None, embedder: str,
                       dimension: int) -> CollectionInfo | None:
        """Refuse an embedder other than the bound one, or a dimension other than the
        stored vectors'; the info when ``embedder`` is already bound, else None."""
        if bound is None:
            if known is not None and known != dimension:
                raise EmbedderMismatchError(
                    f"knowledge base {self.name!r} holds {known}-dimensional vectors; "
                    f"{embedder} makes {dimension}. Use a matching embedder or a new "
                    "knowledge base.")
            return None
        if (bound, known) != (embedder, dimension):
            raise EmbedderMismatchError(
                f"knowledge base {self.name!r} was built with {bound} ({known} dimensions), "
                f"not {embedder} ({dimension}). Use {bound}, or ingest into a new "
                "knowledge base (or drop this one).")
        return CollectionInfo(name=self.name, embedder=embedder, dimension=dimension)

    def _empty_stats(self) -> CollectionStats:
        return CollectionStats(name=self.name, embedder=None, dimension=None,
                               metric=self._metric_arg or "cosine", document_count=0,
                               chunk_count=0)


def scores_of(metric: str, raw: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The contract's scores for raw values (cosine similarity, dot product or
    euclidean distance, by ``metric``)."""
    if metric == "cosine":
        return cosine_to_score(raw)
    if metric == "dot":
        return dot_to_score(raw)
    return euclidean_to_score(raw)


__all__ = ["IndexKind", "ServerStore", "scores_of"]

"""MilvusCollections: one knowledge base's two Milvus collections and its record.

The connection (``pymilvus.MilvusClient``, opened on first use), every call to it
(errors become :class:`~ragloom.errors.StoreError` naming the URI), and the
``#collection`` record in the documents collection (name, embedder, dimension,
metric, index), cached once read. The collections are created here when a write
first needs them. Reads (:mod:`ragloom.stores.milvus`) and writes
(:mod:`ragloom.stores.milvus_write`) both go through one object of this class.
"""

from __future__ import annotations

import threading
from typing import Any

from ragloom._optional import require
from ragloom.errors import StoreError
from ragloom.stores.milvus_schema import chunks_schema, collection_names, documents_schema

INFO_ID = "#collection"
#: Chunk rows a Milvus Lite collection holds in its in-memory table before they are
#: sealed (flushed) into an indexed segment: every Lite query and search scans the
#: in-memory table (and rebuilds its BM25 index), so a large one makes each call slow.
LITE_FLUSH_ROWS = 256
#: The documents collection's placeholder vector (Milvus needs one per collection).
NO_VECTOR = [0.0, 0.0]


def pymilvus_module() -> Any:
    return require("pymilvus", package="pymilvus", extra="milvus", purpose="the Milvus store")


class MilvusCollections:
    """Connection and bookkeeping of one knowledge base (see the module docstring).

    ``lock`` (re-entrant) serialises this object's use of the client: writes hold it
    across their several calls.
    """

    def __init__(self, uri: str, name: str, token: str, *, metric: str | None,
                 index: str, hnsw: tuple[int, int, int], lock: threading.RLock) -> None:
        self.uri = uri
        self.name = name
        self.token = token
        self.metric_arg = metric
        self.index = index
        self.hnsw = hnsw
        self.lock = lock
        self.chunks, self.documents = collection_names(name)
        self.client: Any = None
        self._info: dict[str, Any] | None = None
        self._chunks_exist = False
        # A file path, not a URL: Milvus Lite in process.
        self.lite = "://" not in uri
        self._unsealed: dict[str, int] = {}

    # ---------------------------------------------------------------- connection
    def connect(self) -> Any:
        with self.lock:
            if self.client is None:
                pymilvus = pymilvus_module()
                try:
                    self.client = pymilvus.MilvusClient(uri=self.uri, token=self.token)
                except Exception as exc:
                    raise StoreError(f"cannot reach Milvus at {self.uri}: {exc}") from exc
            return self.client

    def disconnect(self) -> None:
        with self.lock:
            if self.client is not None:
                try:
                    self.client.close()
                finally:
                    self.client = None
                    self.forget()

    def call(self, what: str, method: str, *args: Any, **kwargs: Any) -> Any:
        client = self.connect()
        try:
            return getattr(client, method)(*args, **kwargs)
        except Exception as exc:
            raise StoreError(f"Milvus {what} failed ({self.uri}): {exc}") from exc

    # ---------------------------------------------------------------- the record
    def forget(self) -> None:
        """Read the record and the collections' existence afresh next time."""
        self._info = None
        self._chunks_exist = False

    def info(self, *, fresh: bool = False) -> dict[str, Any] | None:
        """The knowledge base's record, or None if it does not exist yet."""
        if fresh:
            self.forget()
        if self._info is not None:
            return self._info
        if not self.call("listing collections", "has_collection", self.documents):
            return None
        self.call("loading", "load_collection", self.documents)
        rows = self.call("reading", "get", self.documents, ids=[INFO_ID],
                         output_fields=["data"])
        if not rows:
            return None
        info = dict(rows[0]["data"])
        self._info = info
        return info

    def save_info(self, info: dict[str, Any]) -> None:
        self.call("writing", "upsert", self.documents,
                  [{"id": INFO_ID, "source": "", "data": info, "v": NO_VECTOR}])
        self._info = info

    def dimension(self) -> int | None:
        info = self.info()
        return None if info is None or info["dimension"] is None else int(info["dimension"])

    def has_chunks(self) -> bool:
        """Whether the chunks collection exists (known once seen: only a drop, through
        this object, removes it)."""
        if not self._chunks_exist:
            info = self.info()
            self._chunks_exist = (
                info is not None and info["dimension"] is not None
                and bool(self.call("listing collections", "has_collection", self.chunks)))
            if self._chunks_exist:
                self.call("loading", "load_collection", self.chunks)
        return self._chunks_exist

    def ensure(self, dimension: int | None, metric: str) -> dict[str, Any]:
        """Create the documents collection (and, once the dimension is known, the chunks
        collection); returns the record."""
        info = self.info()
        pymilvus = pymilvus_module()
        if info is None:
            schema, params = documents_schema(pymilvus, self.connect())
            self.call("creating a collection", "create_collection", self.documents,
                      schema=schema, index_params=params, consistency_level="Strong")
            info = {"name": self.name, "embedder": None, "dimension": None,
                    "metric": metric, "index": self.index}
            self.save_info(info)
        if dimension is not None and info["dimension"] is None:
            info = {**info, "dimension": dimension}
            self.save_info(info)
        if info["dimension"] is not None and not self.has_chunks():
            schema, params = chunks_schema(
                pymilvus, self.connect(), dimension=int(info["dimension"]),
                metric=str(info["metric"]), index=self.index, hnsw=self.hnsw)
            self.call("creating a collection", "create_collection", self.chunks,
                      schema=schema, index_params=params, consistency_level="Strong")
            self._chunks_exist = True
        return info

    def wrote(self, collection: str, rows: int) -> None:
        """Count rows written to one of the two collections; on Milvus Lite, seal them
        into an indexed segment every :data:`LITE_FLUSH_ROWS` (a server seals segments
        itself)."""
        if not self.lite:
            return
        unsealed = self._unsealed.get(collection, 0) + rows
        if unsealed >= LITE_FLUSH_ROWS:
            self.call("flushing", "flush", collection)
            unsealed = 0
        self._unsealed[collection] = unsealed

    def drop(self) -> bool:
        existed = False
        for name in (self.chunks, self.documents):
            if self.call("listing collections", "has_collection", name):
                self.call("dropping a collection", "drop_collection", name)
                existed = True
        self.forget()
        return existed

    def count(self, expression: str = "") -> int:
        if not self.has_chunks():
            return 0
        rows = self.call("counting", "query", self.chunks, filter=expression,
                         output_fields=["count(*)"])
        return int(rows[0]["count(*)"]) if rows else 0


__all__ = ["INFO_ID", "LITE_FLUSH_ROWS", "NO_VECTOR", "MilvusCollections", "pymilvus_module"]

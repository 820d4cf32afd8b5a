"""Embedding caches, so re-ingesting unchanged text never calls the model again.

Entries are keyed by the embedder's name and the SHA-256 of the text, with the
document and query paths apart because asymmetric models embed them differently.
Only dense vectors are cached; sparse and hybrid embeddings pass through.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from ragloom.errors import InvalidInputError, StoreError
from ragloom.protocols import EmbeddingProvider
from ragloom.types import Embedding, FloatArray, Vector, text_hash


@runtime_checkable
class EmbeddingCache(Protocol):
    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, FloatArray]: ...

    def put_many(self, model: str, items: Mapping[str, FloatArray]) -> None: ...


class LRUEmbeddingCache:
    """An in-memory cache that forgets the least recently used entries first."""

    def __init__(self, max_entries: int = 100_000) -> None:
        if max_entries < 1:
            raise InvalidInputError("max_entries must be at least 1")
        self.max_entries = max_entries
        self._data: OrderedDict[tuple[str, str], FloatArray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._data)

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, FloatArray]:
        found: dict[str, FloatArray] = {}
        with self._lock:
            for key in keys:
                value = self._data.get((model, key))
                if value is not None:
                    self._data.move_to_end((model, key))
                    found[key] = value
        return found

    def put_many(self, model: str, items: Mapping[str, FloatArray]) -> None:
        with self._lock:
            for key, value in items.items():
                self._data[(model, key)] = value
                self._data.move_to_end((model, key))
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)


class SQLiteEmbeddingCache:
    """A cache in one SQLite file; vectors are float32 BLOBs. Opens on first use."""

    _BATCH = 500  # stays under SQLite's limit on bound parameters

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("CREATE TABLE IF NOT EXISTS embedding_cache (model TEXT NOT NULL, "
                             "key TEXT NOT NULL, vector BLOB NOT NULL, "
                             "PRIMARY KEY (model, key)) WITHOUT ROWID")
                conn.commit()
            except (sqlite3.Error, OSError) as exc:
                raise StoreError(f"cannot open the embedding cache {self.path}: {exc}") from exc
            self._conn = conn
        return self._conn

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, FloatArray]:
        found: dict[str, FloatArray] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            conn = self._connection()
            for start in range(0, len(unique), self._BATCH):
                batch = unique[start:start + self._BATCH]
                marks = ",".join("?" * len(batch))
                rows = conn.execute(
                    f"SELECT key, vector FROM embedding_cache WHERE model = ? AND key IN ({marks})",
                    [model, *batch])
                for key, blob in rows:
                    found[key] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
        return found

    def put_many(self, model: str, items: Mapping[str, FloatArray]) -> None:
        rows = [(model, key, np.asarray(value, dtype="<f4").tobytes())
                for key, value in items.items()]
        with self._lock:
            conn = self._connection()
            with conn:
                conn.executemany("INSERT OR REPLACE INTO embedding_cache (model, key, vector) "
                                 "VALUES (?, ?, ?)", rows)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class CachedEmbedder:
    """An embedder that asks its cache first and the model only for new texts."""

    def __init__(self, embedder: EmbeddingProvider, cache: EmbeddingCache | None = None) -> None:
        self.inner = embedder
        self.cache: EmbeddingCache = cache if cache is not None else LRUEmbeddingCache()
        self.hits = 0
        self.misses = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def _embed(self, kind: str, texts: Sequence[str]) -> list[Embedding]:
        keys = [f"{kind}:{text_hash(t)}" for t in texts]
        cached = self.cache.get_many(self.name, keys)
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in cached:
                missing.setdefault(key, text)
        self.hits += len(texts) - sum(1 for k in keys if k not in cached)
        self.misses += len(missing)
        fresh: dict[str, Embedding] = {}
        if missing:
            texts_out = list(missing.values())
            embedded = (self.inner.embed_documents(texts_out) if kind == "doc"
                        else [self.inner.embed_query(texts_out[0])])
            fresh = dict(zip(missing, embedded, strict=True))
            self.cache.put_many(self.name, {k: v.values for k, v in fresh.items()
                                            if isinstance(v, Vector)})
        return [Vector(cached[k]) if k in cached else fresh[k] for k in keys]

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        return self._embed("doc", texts)

    def embed_query(self, text: str) -> Embedding:
        return self._embed("query", [text])[0]

"""Knowledge bases per tenant: their records in the server database and one open
:class:`~ragloom.knowledge_base.VectorKnowledgeBase` per knowledge base, shared by the
searches and the ingestion worker (so the store's in-memory matrix and keyword index
stay current through its own writes instead of being reloaded after each one).

Each knowledge base is a collection of the store's SQLite file, named by its id;
the tenant and the name a user gave it live in the server database, so a name never
reaches SQL and two tenants may use the same name.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragloom.errors import ConfigurationError
from ragloom.knowledge_base import VectorKnowledgeBase, default_chunker
from ragloom.protocols import (
    Chunker,
    CollectionHandle,
    EmbeddingProvider,
    ModelProvider,
    TokenCounter,
)
from ragloom.server.auth import Tenant
from ragloom.server.db import ServerDatabase, new_id, now
from ragloom.server.errors import ApiError, bad_request, not_found
from ragloom.server.handles import DEFAULT_MAX_OPEN, HandleCache, close_handle
from ragloom.server.policy import ModelPolicy

_COLUMNS = "id, tenant_id, name, collection, embedder, chunking, metadata, created"
MAX_NAME = 200


@dataclass(frozen=True, kw_only=True)
class KbRecord:
    id: str
    tenant_id: str
    name: str
    collection: str
    embedder: str
    chunking: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    created: float = 0.0

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> KbRecord:
        return cls(id=row[0], tenant_id=row[1], name=row[2], collection=row[3],
                   embedder=row[4], chunking=json.loads(row[5]), metadata=json.loads(row[6]),
                   created=row[7])


class SharedModels:
    """One embedder per name and one chat model for the whole server: models load once.

    Construction loads nothing; :meth:`warm` loads the default embedder ahead of the
    first request. ``config`` (a :class:`ragloom.config.Settings`, resolved once at
    start-up) gives the providers' options; nothing is read from the working
    directory at request time.
    """

    def __init__(self, default_embedder: str, llm: str, fallback_llm: str | None,
                 config: Any = None) -> None:
        from ragloom.config import Settings

        self.default_embedder = default_embedder
        self.llm = llm
        self.fallback_llm = fallback_llm
        self.config: Settings = config if config is not None else Settings()
        self._embedders: dict[str, EmbeddingProvider] = {}
        self._model: tuple[ModelProvider | None] | None = None
        self._others: dict[str, ModelProvider | None] = {}
        self._lock = threading.Lock()

    def embedder(self, name: str | None = None) -> EmbeddingProvider:
        from dataclasses import replace

        from ragloom.config import build_embedder

        name = name or self.default_embedder
        with self._lock:
            if name not in self._embedders:
                self._embedders[name] = build_embedder(replace(self.config, embedder=name))
            return self._embedders[name]

    def model(self, name: str | None = None) -> ModelProvider | None:
        """The server's chat model, or another one by ``name`` (loaded once; an
        allow-listed model a tenant names)."""
        from dataclasses import replace

        from ragloom.config import build_model

        if name is not None and name != self.llm:
            with self._lock:
                if name not in self._others:
                    self._others[name] = build_model(replace(self.config, llm=name,
                                                             fallback_llm=None))
                return self._others[name]
        with self._lock:
            if self._model is None:
                self._model = (build_model(replace(
                    self.config, llm=self.llm, fallback_llm=self.fallback_llm)),)
            return self._model[0]

    def warm(self) -> None:
        """Load the default embedder now (one query embedded) and build the language
        model (a name no provider knows fails here, not at the first question)."""
        self.embedder().embed_query("warm up")
        self.model()


def make_chunker(chunking: dict[str, Any], embedder: EmbeddingProvider) -> Chunker:
    """The splitter a knowledge base's ``chunking`` settings name (default: recursive,
    sized in the embedder's tokens)."""
    from ragloom.chunking import RecursiveSplitter
    from ragloom.chunking.factory import make_splitter

    options = dict(chunking)
    name = str(options.pop("splitter", "recursive"))
    if not options and name == "recursive":
        return default_chunker(embedder)
    if name == "recursive" and isinstance(embedder, TokenCounter):
        try:
            return RecursiveSplitter(token_counter=embedder, **options)
        except (TypeError, ValueError) as exc:
            raise ConfigurationError(f"bad chunking settings: {exc}") from exc
    try:
        return make_splitter(name, **options)
    except ValueError as exc:
        raise ConfigurationError(f"bad chunking settings: {exc}") from exc


def check_chunking(chunking: dict[str, Any]) -> None:
    """Refuse settings no splitter accepts, before anything is stored."""
    from ragloom.chunking.factory import SPLITTERS

    name = chunking.get("splitter", "recursive")
    if name not in SPLITTERS:
        raise bad_request(f"unknown splitter {name!r}; choose one of: {', '.join(SPLITTERS)}",
                          "chunking")
    from ragloom.testing import HashingEmbedder

    try:
        make_chunker(chunking, HashingEmbedder())
    except (ConfigurationError, TypeError, ValueError) as exc:
        raise bad_request(str(exc), "chunking") from exc


class Catalog:
    """The knowledge bases of every tenant; each lookup is scoped to one tenant.

    Open knowledge bases live in :attr:`handles` (least recently used closed above
    ``max_open``; they reopen on use). On PostgreSQL (replicas) another process may
    delete a knowledge base this one has open: records are always read from the
    database, so it is a 404 here at once, and every ``prune_seconds`` the handles of
    deleted ones are closed (each holds a connection pool).
    """

    prune_seconds = 30.0

    def __init__(self, db: ServerDatabase, store_path: Path, models: SharedModels, *,
                 store_url: str | None = None, policy: ModelPolicy | None = None,
                 max_open: int = DEFAULT_MAX_OPEN) -> None:
        self.db = db
        self.policy = policy
        self.store_path = store_path
        self.store_url = store_url  # a PostgreSQL URL: PgVectorStore collections there
        self.models = models
        #: Every open collection of the server (knowledge bases here, vector stores of
        #: /v1 under "vs:..."), at most ``max_open``; see :mod:`ragloom.server.handles`.
        self.handles = HandleCache(max_open)
        #: Called inside the transaction that deletes a knowledge base's record, with
        #: that transaction and the record: the job system cancels its jobs and queues
        #: its delete job there (see :mod:`ragloom.server.jobs.deletes`).
        self.on_delete: list[Callable[[Any, KbRecord], object]] = []
        #: Called with the record once that transaction is committed.
        self.after_delete: list[Callable[[KbRecord], object]] = []
        self._pruned = time.monotonic()

    # ------------------------------------------------------------------ records
    def create(self, tenant: Tenant, name: str | None = None, *, embedder: str | None = None,
               chunking: dict[str, Any] | None = None,
               metadata: dict[str, Any] | None = None) -> KbRecord:
        kb_id = new_id("kb")
        name = kb_id if name is None else name
        if not name.strip() or len(name) > MAX_NAME:
            raise bad_request(f"a knowledge base name has 1 to {MAX_NAME} characters", "name")
        chunking = dict(chunking or {})
        check_chunking(chunking)
        embedder_name = embedder or self.models.default_embedder
        if embedder is not None and self.policy is not None:
            self.policy.check_embedder(tenant.name, embedder)
        try:
            from ragloom.registry import split_name

            split_name(embedder_name, "embedder")
        except ConfigurationError as exc:
            raise bad_request(str(exc), "embedder") from exc
        record = KbRecord(id=kb_id, tenant_id=tenant.id, name=name, collection=kb_id,
                          embedder=embedder_name, chunking=chunking,
                          metadata=dict(metadata or {}), created=now())
        with self.db.transaction() as conn:
            taken = conn.execute("SELECT 1 FROM knowledge_bases WHERE tenant_id = ? AND name = ?",
                                 (tenant.id, name)).fetchone()
            if taken:
                raise ApiError(409, f"a knowledge base named {name!r} exists already",
                               type="invalid_request_error", code="conflict", param="name")
            conn.execute(
                f"INSERT INTO knowledge_bases ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (record.id, record.tenant_id, record.name, record.collection, record.embedder,
                 json.dumps(record.chunking), json.dumps(record.metadata), record.created))
        return record

    def find(self, tenant: Tenant, ident: str) -> KbRecord | None:
        """By id, else by name, among the tenant's own knowledge bases."""
        row = self.db.one(f"SELECT {_COLUMNS} FROM knowledge_bases WHERE tenant_id = ? AND "
                          "(id = ? OR name = ?) ORDER BY id = ? DESC LIMIT 1",
                          (tenant.id, ident, ident, ident))
        return KbRecord.from_row(row) if row else None

    def by_id(self, kb_id: str) -> KbRecord | None:
        """Any tenant's knowledge base by id: for the worker, never for a request."""
        row = self.db.one(f"SELECT {_COLUMNS} FROM knowledge_bases WHERE id = ?", (kb_id,))
        return KbRecord.from_row(row) if row else None

    def get(self, tenant: Tenant, ident: str) -> KbRecord:
        record = self.find(tenant, ident)
        if record is None:
            raise not_found("knowledge base", ident)
        return record

    def list(self, tenant: Tenant, *, limit: int | None = None) -> list[KbRecord]:
        sql = (f"SELECT {_COLUMNS} FROM knowledge_bases WHERE tenant_id = ? "
               "ORDER BY created, id")
        params: tuple[Any, ...] = (tenant.id,)
        if limit is not None:
            sql, params = sql + " LIMIT ?", (tenant.id, limit)
        rows = self.db.all(sql, params)
        return [KbRecord.from_row(r) for r in rows]

    def delete(self, tenant: Tenant, ident: str) -> KbRecord:
        """Delete a knowledge base so that it stays deleted: its record goes at once (the
        worker and new requests no longer find it), in one transaction with its jobs
        cancelled and its delete job queued (:attr:`on_delete`); that job drains its
        jobs and drops its chunks, sidecar files and uploads (:meth:`drop`). Without a
        job system (no :attr:`on_delete`), they are dropped here."""
        record = self.get(tenant, ident)
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM knowledge_bases WHERE id = ?", (record.id,))
            for hook in self.on_delete:
                hook(conn, record)
            if not self.on_delete:
                conn.execute("UPDATE jobs SET status = 'cancelled', reason = 'cancelled', "
                             "message = 'the knowledge base was deleted', updated = ? "
                             "WHERE kb_id = ? AND status = 'in_progress'", (now(), record.id))
        for after in self.after_delete:
            after(record)
        if not self.on_delete:
            self.drop(record.id, record.collection)
        return record

    def drop(self, kb_id: str, collection: str) -> None:
        """Drop a deleted knowledge base's collection (chunks, sidecar files) and close
        its handle; doing it again is a no-op. Writes through any view of it afterwards
        raise ``CollectionDroppedError``: a store never creates it again."""
        handle = self.handles.pop(kb_id)
        store: Any = handle.store if handle is not None else self._open_collection(collection)
        try:
            if isinstance(store, CollectionHandle):
                store.drop()
        finally:
            if isinstance(store, CollectionHandle):
                store.close()

    # ------------------------------------------------------------------ handles
    def _open_store(self, record: KbRecord) -> Any:
        return self._open_collection(record.collection)

    def _open_collection(self, collection: str) -> Any:
        if self.store_url is not None:
            from ragloom.stores.factory import open_store

            return open_store(self.store_url, collection=collection,
                              database=self.handles.pg_database(self.store_url))
        from ragloom.stores.sqlite import SqliteVectorStore

        return SqliteVectorStore(self.store_path, collection=collection,
                                 database=self.handles.sqlite_database(self.store_path))

    def _make(self, record: KbRecord) -> VectorKnowledgeBase:
        from ragloom.stores.sqlite import SqliteVectorStore

        embedder = self.models.embedder(record.embedder)
        store = self._open_store(record)
        knowledge_base = VectorKnowledgeBase(
            store, embedder, make_chunker(record.chunking, embedder), name=record.name)
        if isinstance(store, SqliteVectorStore):
            from ragloom.graph import graph_step

            # Graph extraction as the knowledge base's saved setting says
            # (PUT .../graph); the graph lives in the SQLite store's file.
            knowledge_base.graph = graph_step(store, model=self.models.model)
        return knowledge_base

    def open(self, record: KbRecord) -> VectorKnowledgeBase:
        """The shared, open knowledge base of a record (the store file opens lazily);
        the least recently used ones above :attr:`max_open` are closed."""
        self._prune_deleted()
        knowledge_base: VectorKnowledgeBase = self.handles.get(
            record.id, lambda: self._make(record))
        return knowledge_base

    @property
    def max_open(self) -> int:
        return self.handles.limit

    def _prune_deleted(self) -> None:
        if self.store_url is None or time.monotonic() - self._pruned < self.prune_seconds:
            return
        self._pruned = time.monotonic()
        ids = [key for key in self.handles.names() if not key.startswith("vs:")]
        if not ids:
            return
        marks = ", ".join("?" * len(ids))
        alive = {row[0] for row in self.db.all(
            f"SELECT id FROM knowledge_bases WHERE id IN ({marks})", ids)}
        for kb_id in set(ids) - alive:
            close_handle(self.handles.pop(kb_id))

    def counts(self, record: KbRecord) -> tuple[int, int]:
        """(documents, chunks) of a knowledge base."""
        store = self.open(record).store
        if not isinstance(store, CollectionHandle):
            raise TypeError(f"{type(store).__name__} has no stats()")
        stats = store.stats()
        return int(stats.document_count), int(stats.chunk_count)

    def close(self) -> None:
        self.handles.close()

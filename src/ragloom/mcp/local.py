"""The backend of ``ragloom mcp --db DIR``: the knowledge bases of one local database,
opened as ``ragloom ask`` opens them, each once, with one embedder per model name
and the model built on first use (nothing heavy loads before a tool needs it)."""

from __future__ import annotations

import threading
from typing import Any

from ragloom.errors import KnowledgeBaseNotFoundError
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.mcp.tools import KnowledgeBaseInfo, ToolArgumentError
from ragloom.protocols import EmbeddingProvider, ModelProvider
from ragloom.rag import RagAnswer
from ragloom.types import ChatMessage


class LocalBackend:
    """``db`` (a folder, .db file or database URL; None: $RAGLOOM_DB or ./.ragloom),
    ``kb`` the knowledge base used when a tool names none."""

    def __init__(self, db: str | None, kb: str | None = None, *, embedder: str | None = None,
                 llm: str | None = None) -> None:
        self.db = db
        self.default_kb = kb
        self.embedder_name = embedder
        self.llm = llm
        self._bases: dict[str, VectorKnowledgeBase] = {}
        self._embedders: dict[str, EmbeddingProvider] = {}
        self._model: tuple[ModelProvider | None] | None = None
        self._sessions: Any = None
        self._where: Any = None
        self._default_name: str | None = None
        self._listing: Any = None  # a store handle that lists the knowledge bases
        self._lock = threading.RLock()

    def _location(self) -> Any:
        from ragloom.cli.common import resolve_location

        with self._lock:
            if self._where is None:
                self._where = resolve_location(self.db)
            return self._where

    def list_knowledge_bases(self) -> list[KnowledgeBaseInfo]:
        from ragloom.stores.factory import exists, open_store

        location = self._location()
        if not exists(location):
            return []
        with self._lock:
            if self._listing is None:
                self._listing = open_store(location, "default")
            collections = self._listing.list_collections()
        return [KnowledgeBaseInfo(name=c.name, documents=c.document_count,
                                  chunks=c.chunk_count, embedder=c.embedder)
                for c in collections]

    def knowledge_base(self, name: str | None, *, create: bool = False) -> VectorKnowledgeBase:
        from ragloom.cli.common import embedder_name, open_store, resolve_kb

        with self._lock:
            if name is None and self._default_name is None:
                self._default_name = resolve_kb(self.default_kb)
            resolved = name or str(self._default_name)
            base = self._bases.get(resolved)
            if base is not None:
                return base
            try:
                store = open_store(self._location(), resolved, create=create)
            except KnowledgeBaseNotFoundError as exc:
                raise ToolArgumentError("knowledge_base", str(exc)) from exc
            base = VectorKnowledgeBase(
                store, self._embedder(embedder_name(store, self.embedder_name)), name=resolved)
            if not create:
                base.check_embedder()
            self._bases[resolved] = base
            return base

    def _embedder(self, name: str) -> EmbeddingProvider:
        from ragloom.cli.common import settings_for
        from ragloom.config import build_embedder

        if name not in self._embedders:
            self._embedders[name] = build_embedder(settings_for(embedder=name))
        return self._embedders[name]

    def model(self) -> ModelProvider | None:
        from ragloom.cli.common import open_model

        with self._lock:
            if self._model is None:
                self._model = (open_model(self.llm, None),)
            return self._model[0]

    def _session_store(self) -> Any:
        from ragloom.cli.sessions_cmd import open_sessions

        with self._lock:
            if self._sessions is None:
                self._sessions = open_sessions(self.db)
            return self._sessions

    def history(self, session: str) -> list[ChatMessage]:
        history: list[ChatMessage] = self._session_store().history(session, limit=6)
        return history

    def remember(self, session: str, knowledge_base: str, answer: RagAnswer) -> None:
        store = self._session_store()
        store.append(session, "user", answer.question)
        store.append(session, "assistant", answer.answer, sources=answer.sources,
                     metadata={"knowledge_base": knowledge_base})

    def close(self) -> None:
        with self._lock:
            stores = [base.store for base in self._bases.values()] + [self._listing]
            for store in stores:
                close = getattr(store, "close", None)
                if callable(close):
                    close()
            self._bases.clear()
            self._listing = None

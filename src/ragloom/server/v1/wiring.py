""":class:`OpenAIDeps` from the server core's state: its tenants, knowledge bases,
shared models and thread pools.

The models stay unloaded until a request needs them: the embedder and chat model are
reached through thin proxies over the core's shared, load-once models.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ragloom.errors import ConfigurationError, KnowledgeBaseNotFoundError
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import EmbeddingProvider, ModelProvider, TokenCounter, TokenSpanner
from ragloom.server.v1.deps import OpenAIDeps
from ragloom.types import ChatDelta, ChatMessage, ChatResponse, Embedding, Tool

OPENAI_DB = "openai.sqlite"
OPENAI_VECTORS = "openai-vectors.sqlite"


class LazyEmbedder:
    """The core's shared embedder, loaded on first use."""

    def __init__(self, get: Callable[[], EmbeddingProvider]) -> None:
        self._get = get

    @property
    def name(self) -> str:
        return self._get().name

    @property
    def dimension(self) -> int:
        return self._get().dimension

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        return self._get().embed_documents(texts)

    def embed_query(self, text: str) -> Embedding:
        return self._get().embed_query(text)

    def count_tokens(self, text: str) -> int:
        real = self._get()
        if isinstance(real, TokenCounter):
            return real.count_tokens(text)
        return max(1, len(text.split()) * 4 // 3)

    def token_spans(self, text: str) -> Sequence[tuple[int, int]] | None:
        real = self._get()
        return real.token_spans(text) if isinstance(real, TokenSpanner) else None


class LazyModel:
    """The core's shared chat model under its configured name, loaded on first use."""

    def __init__(self, name: str, get: Callable[[], ModelProvider | None]) -> None:
        self._name = name
        self._get = get

    @property
    def name(self) -> str:
        return self._name

    def _model(self) -> ModelProvider:
        model = self._get()
        if model is None:
            raise ConfigurationError("the server runs without a language model")
        return model

    def chat(self, messages: str | ChatMessage | Sequence[ChatMessage], *,
             tools: Sequence[Tool] = (),
             stop: Sequence[str] | None = None, temperature: float | None = None,
             max_tokens: int | None = None) -> ChatResponse:
        return self._model().chat(messages, tools=tools, stop=stop, temperature=temperature,
                                  max_tokens=max_tokens)

    def stream(self, messages: str | ChatMessage | Sequence[ChatMessage], *,
               tools: Sequence[Tool] = (),
               stop: Sequence[str] | None = None, temperature: float | None = None,
               max_tokens: int | None = None) -> Iterator[ChatDelta]:
        return self._model().stream(messages, tools=tools, stop=stop,
                                    temperature=temperature, max_tokens=max_tokens)


def deps_from_state(state: Any) -> OpenAIDeps:
    """Everything the ``/v1`` routes need, from a ``ragloom.server.state.ServerState``."""
    from ragloom.server.auth import Tenant, current_tenant

    settings = state.settings
    folder = Path(settings.server_db).parent

    def open_knowledge_base(tenant_id: str, name: str, create: bool) -> VectorKnowledgeBase:
        tenant = Tenant(id=tenant_id, name=tenant_id)
        record = state.catalog.find(tenant, name)
        if record is None:
            if not create:
                raise KnowledgeBaseNotFoundError(f"no knowledge base named {name!r}")
            record = state.catalog.create(tenant, name)
        knowledge_base: VectorKnowledgeBase = state.catalog.open(record)
        return knowledge_base

    def delete_knowledge_base(tenant_id: str, name: str) -> None:
        state.catalog.delete(Tenant(id=tenant_id, name=tenant_id), name)

    llm = str(settings.llm)
    model = None if llm in ("", "none") else LazyModel(llm, state.models.model)
    return OpenAIDeps(
        tenant=current_tenant, embedder=LazyEmbedder(state.models.embedder), model=model,
        # One database: the /v1 tables beside the server's own (replicas: in the shared
        # PostgreSQL, with the vector stores' chunks); an older server's file moves in.
        db_path=settings.server_database, database=state.db,
        legacy_db_path=None if settings.database_url else str(folder / OPENAI_DB),
        job_queue=state.jobs, job_worker=state.worker,
        vectors_path=settings.database_url or str(folder / OPENAI_VECTORS),
        open_knowledge_base=open_knowledge_base, delete_knowledge_base=delete_knowledge_base,
        max_upload_bytes=int(settings.max_upload_bytes),
        run_cpu=state.run_cpu, run_model=state.run_model,
        allowed_models=lambda tenant: state.policy.llms_for(state.tenant_name(tenant)),
        model_for=lambda name: LazyModel(name, lambda: state.models.model(name)),
        lease_seconds=float(settings.job_lease_seconds), caches=state.caches,
        delete_wait=float(settings.delete_wait),
        handles=state.catalog.handles)

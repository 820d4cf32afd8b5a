"""What the OpenAI-compatible router needs from the server core, passed in whole.

The core's ``create_app`` builds one :class:`OpenAIDeps` and calls
:func:`ragloom.server.v1.build_router` with it; tests build one around
fakes. Nothing here loads a model or opens a file.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import EmbeddingProvider, ModelProvider

if TYPE_CHECKING:
    from ragloom.server.caches import ServerCaches

MIB = 1024 * 1024
T = TypeVar("T")
#: ``await run(function, *args)``: blocking work in a bounded thread pool.
Runner = Callable[..., Awaitable[Any]]

#: ``open_knowledge_base(tenant_id, name, create)``: a tenant's native knowledge base
#: (raises ``KnowledgeBaseNotFoundError`` when it does not exist and ``create`` is false).
OpenKnowledgeBase = Callable[[str, str, bool], VectorKnowledgeBase]
#: ``delete_knowledge_base(tenant_id, name)``: drop a tenant's native knowledge base.
DeleteKnowledgeBase = Callable[[str, str], Any]


@dataclass(frozen=True, kw_only=True)
class OpenAIDeps:
    """Collaborators of the ``/v1`` routes.

    ``tenant`` is a FastAPI dependency returning the caller's tenant (any object with
    an ``id``). ``db_path`` is the SQLite file for files, vector stores, their file
    links and stored responses; ``vectors_path`` holds the vector stores' chunks
    (default: beside ``db_path``). ``open_knowledge_base`` reaches the native
    knowledge bases the specification routes and chat completions answer from.
    """

    tenant: Callable[..., Any]
    embedder: EmbeddingProvider
    model: ModelProvider | None
    db_path: str
    vectors_path: str | None = None
    open_knowledge_base: OpenKnowledgeBase | None = None
    #: Llama Stack's ``vector_dbs.unregister`` (without it, the chunks are removed).
    delete_knowledge_base: DeleteKnowledgeBase | None = None
    max_upload_bytes: int = 100 * MIB
    poll_after_ms: int = 200
    max_answer_tokens: int = 512
    run_cpu: Runner | None = None
    run_model: Runner | None = None
    #: Replicas on PostgreSQL: how long a claim on a file being ingested holds.
    lease_seconds: float = 30.0
    #: Models besides ``model`` a tenant (by id) may name, and each one by name.
    allowed_models: Callable[[str], Sequence[str]] | None = None
    model_for: Callable[[str], ModelProvider] | None = None
    #: The server's open collections (shared with /api's knowledge bases), bounded;
    #: None: a cache of its own.
    handles: Any = None
    #: Unix time for vector stores' activity and expiry (tests pass a clock they set).
    clock: Callable[[], float] = time.time
    #: The server's query embedding and search result caches (None: no caching).
    caches: ServerCaches | None = None
    #: The server's one database (a ``ServerDatabase``): the ``/v1`` tables live in it;
    #: None: ``db_path`` is one of their own.
    database: Any = None
    #: The server's one job system (its ``JobQueue`` and ``JobWorker``): vector store
    #: files are ingested as its jobs; None: a router mounted alone runs its own.
    job_queue: Any = None
    job_worker: Any = None
    #: Seconds a Llama Stack insert (Vector IO, RAG tool) may run, as a job.
    insert_deadline: float = 300.0
    #: Seconds a delete waits for its job (the cleanup) before it answers anyway.
    delete_wait: float = 5.0
    #: An older server's file of these tables, moved into ``database`` at start-up.
    legacy_db_path: str | None = None

    def now(self) -> int:
        return int(self.clock())

    async def cpu(self, function: Callable[..., T], *args: Any) -> T:
        """Run blocking work (SQLite, search, parsing) off the event loop."""
        if self.run_cpu is None:
            from starlette.concurrency import run_in_threadpool

            return await run_in_threadpool(function, *args)
        result: T = await self.run_cpu(function, *args)
        return result

    async def slow(self, function: Callable[..., T], *args: Any) -> T:
        """Run a language model call in its own pool, so it never stalls searches."""
        if self.run_model is None:
            return await self.cpu(function, *args)
        result: T = await self.run_model(function, *args)
        return result

    @property
    def vector_file(self) -> str:
        if self.vectors_path:
            return self.vectors_path
        if self.db_path == ":memory:":
            return ":memory:"
        return f"{self.db_path.removesuffix('.sqlite').removesuffix('.db')}.vectors.sqlite"


@dataclass(frozen=True)
class Deps:
    """What the server core's generic wiring hands over: its shared state.

    :func:`ragloom.server.v1.build_router` turns it into
    :class:`OpenAIDeps` with :func:`ragloom.server.v1.wiring.deps_from_state`.
    """

    state: Any

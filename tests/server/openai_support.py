"""A real uvicorn on 127.0.0.1 serving the OpenAI-compatible router, for the tests.

The tenant comes from the API key (``key-<tenant>``), so two clients with different
keys are two tenants.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from fastapi import FastAPI, Header, HTTPException

from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import EmbeddingProvider, ModelProvider
from ragloom.server.v1 import OpenAIDeps, build_router
from ragloom.stores.sqlite import SqliteVectorStore
from tests.serving import free_port, start_uvicorn


def tenant_from_key(authorization: str | None = Header(None)) -> SimpleNamespace:
    key = (authorization or "").removeprefix("Bearer ").strip()
    if not key.startswith("key-"):
        raise HTTPException(401, "bad key")
    return SimpleNamespace(id=key.removeprefix("key-"))


def make_app(tmp_path: Path, embedder: EmbeddingProvider, model: ModelProvider | None,
             **options: Any) -> FastAPI:
    kb_path = tmp_path / "kbs.sqlite"

    def open_kb(tenant: str, name: str, create: bool) -> VectorKnowledgeBase:
        from ragloom.errors import KnowledgeBaseNotFoundError

        store = SqliteVectorStore(kb_path, collection=f"{tenant}/{name}")
        if not create and store.collection_info() is None:
            raise KnowledgeBaseNotFoundError(f"no knowledge base named {name!r}")
        return VectorKnowledgeBase(store, embedder, name=name)

    deps = OpenAIDeps(tenant=tenant_from_key, embedder=embedder, model=model,
                      db_path=str(tmp_path / "openai.sqlite"), open_knowledge_base=open_kb,
                      poll_after_ms=20, **options)
    app = FastAPI()
    router = build_router(deps)
    app.include_router(router)
    app.state.ragloom_ingestor = router.ragloom_ingestor  # type: ignore[attr-defined]
    return app


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Run ``app`` under uvicorn on a free port; yields the base URL."""
    port = free_port()
    server, thread = start_uvicorn(app, port, timeout=20, log_level="warning")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)

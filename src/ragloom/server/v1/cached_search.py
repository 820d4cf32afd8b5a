"""``/v1`` searches through the server's caches (:mod:`ragloom.server.caches`).

Each search reads the generations of the stores it searches first, then answers from
the search cache or searches with the tenant's cached query embeddings. A store that
fails is logged with the request's id and answered with a clean error. Without
caches (``OpenAIDeps.caches`` is None, as in tests built around fakes) the search
simply runs.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from contextlib import nullcontext
from typing import Any, TypeVar

from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import EmbeddingProvider
from ragloom.server.v1.deps import OpenAIDeps
from ragloom.server.v1.search import SearchRequest, page_json, search_files

T = TypeVar("T")


def _guard(deps: OpenAIDeps, where: str) -> Any:
    if deps.caches is None:
        return nullcontext()
    from ragloom.server.caches import store_failures_logged

    return store_failures_logged(where)


def embedder_for(deps: OpenAIDeps, tenant: str
                 ) -> Callable[[EmbeddingProvider], EmbeddingProvider] | None:
    caches = deps.caches
    if caches is None:
        return None
    return lambda embedder: caches.query_embedder(tenant, embedder)


def cached(deps: OpenAIDeps, tenant: str, kind: str, kbs: Sequence[VectorKnowledgeBase],
           parts: tuple[Hashable, ...], compute: Callable[[], tuple[T, bool]],
           size: Callable[[T], int]) -> T:
    """``compute()``'s value (kept when its flag says so), or the cached one."""
    caches = deps.caches
    where = ", ".join(kb.name for kb in kbs)
    with _guard(deps, where):
        if caches is None:
            return compute()[0]
        key = caches.search_key(tenant, kind, [kb.store for kb in kbs],
                                tuple(repr(kb.search_options) for kb in kbs), *parts)
        return caches.cached(tenant, key, compute, size)


def vector_store_page(deps: OpenAIDeps, tenant: str, kbs: Sequence[VectorKnowledgeBase],
                      request: SearchRequest) -> bytes:
    """The encoded search results page of ``vector_stores/{id}/search``."""

    def compute() -> tuple[bytes, bool]:
        found = search_files(kbs, request, embedder_for=embedder_for(deps, tenant))
        page = page_json(found.query, found.hits, degraded=found.degraded,
                         notice=found.notice)
        return page, not found.degraded

    return cached(deps, tenant, "v1.vector_store.search", kbs, (request.model_dump_json(),),
                  compute, len)

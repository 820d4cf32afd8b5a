"""Where ``/v1`` routes find knowledge: the caller's vector stores (``vs_…`` ids) and
the core's native knowledge bases (by name), searched together."""

from __future__ import annotations

from collections.abc import Sequence

from ragloom.answering.corpus import KnowledgeBaseCorpus
from ragloom.errors import NotFoundError
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.retrieval.multi import search_many
from ragloom.retrieval.options import SearchOptions
from ragloom.server.caches import matches_size
from ragloom.server.v1 import expiry
from ragloom.server.v1.cached_search import cached, embedder_for
from ragloom.server.v1.collections import VectorStoreCollections
from ragloom.server.v1.db import MetaDB
from ragloom.server.v1.deps import OpenAIDeps
from ragloom.server.v1.errors import not_found
from ragloom.server.v1.search import QueryOnce
from ragloom.types import QueryMatch


class Knowledge:
    def __init__(self, deps: OpenAIDeps, db: MetaDB,
                 collections: VectorStoreCollections) -> None:
        self.deps = deps
        self.db = db
        self.collections = collections

    def is_vector_store(self, tenant: str, ident: str) -> bool:
        return self.db.row("SELECT 1 FROM oai_vector_stores WHERE id = ? AND tenant = ?",
                           (ident, tenant)) is not None

    def resolve(self, tenant: str, ident: str, *, create: bool = False,
                param: str = "vector_db_id") -> VectorKnowledgeBase:
        """A vector store of the tenant, or its native knowledge base (404 if neither).
        Every caller uses what it resolves (search, insert): an expired vector store is
        refused, and a usable one is marked active (see :mod:`.expiry`)."""
        row = self.db.row("SELECT * FROM oai_vector_stores WHERE id = ? AND tenant = ?",
                          (ident, tenant))
        if row is not None:
            expiry.check_usable(row, self.deps.now())
            expiry.touch(self.db, row, self.deps.now())
            return self.collections.knowledge_base(ident)
        if ident.startswith("vs_") or self.deps.open_knowledge_base is None:
            raise not_found("vector store or knowledge base", ident, param)
        try:
            return self.deps.open_knowledge_base(tenant, ident, create)
        except NotFoundError as exc:
            raise not_found("knowledge base", ident, param) from exc

    def corpus(self, tenant: str, names: Sequence[str], vector_stores: Sequence[str]
               ) -> KnowledgeBaseCorpus:
        """What the answer engine may read beyond the passages: these knowledge bases."""
        kbs = [self.resolve(tenant, name, param="knowledge_bases")
               for name in dict.fromkeys(names)]
        kbs += [self.resolve(tenant, vs, param="vector_store_ids")
                for vs in dict.fromkeys(vector_stores)]
        return KnowledgeBaseCorpus(kbs)

    def search(self, tenant: str, names: Sequence[str], vector_stores: Sequence[str],
               query: str, top_k: int, options: SearchOptions | None = None
               ) -> list[QueryMatch]:
        kbs = [(name, self.resolve(tenant, name, param="knowledge_bases"))
               for name in dict.fromkeys(names)]
        kbs += [(vs, self.resolve(tenant, vs, param="vector_store_ids"))
                for vs in dict.fromkeys(vector_stores)]
        for _, kb in kbs:
            kb.check_embedder()
        options = (options or SearchOptions()).with_(top_k=top_k)
        wrap = embedder_for(self.deps, tenant) or (lambda embedder: embedder)

        def compute() -> tuple[list[QueryMatch], bool]:
            once: dict[int, QueryOnce] = {}  # knowledge bases sharing an embedder embed once
            targets = [(name, kb.store, once.setdefault(id(kb.embedder),
                                                        QueryOnce(wrap(kb.embedder))))
                       for name, kb in kbs]
            result = search_many(targets, query, options)
            return list(result.matches), not result.degraded

        # A copy: callers may change their list, never the cached one.
        found: list[QueryMatch] = cached(
            self.deps, tenant, "v1.knowledge", [kb for _, kb in kbs],
            (tuple(name for name, _ in kbs), repr(options), query), compute, matches_size)
        return list(found)

    def written(self, kb: VectorKnowledgeBase) -> None:
        """A write to ``kb`` was committed (Vector IO insert, RAG tool insert, clear):
        the server's cached searches of it end."""
        if self.deps.caches is not None:
            self.deps.caches.changed(kb.store)

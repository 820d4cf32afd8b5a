"""Wrappers that make any chat model or embedder sturdier.

They work around the protocols, not around providers, and compose::

    model = FallbackChain([Retrying(make_model("openai:gpt-4o-mini")),
                           Retrying(make_model("ollama:llama3.2"))])
    embedder = CachedEmbedder(Retrying(make_embedder("openai:text-embedding-3-small")),
                              SQLiteEmbeddingCache("cache.db"))

Every wait goes through an injectable ``sleep`` (and ``clock``), so tests count
calls and waits without sleeping. Timeouts are options of the providers
themselves (``timeout=``, default 60 s), passed to the SDK clients.
"""

from ragloom.resilience.cache import (
    CachedEmbedder,
    EmbeddingCache,
    LRUEmbeddingCache,
    SQLiteEmbeddingCache,
)
from ragloom.resilience.fallback import FallbackChain
from ragloom.resilience.ratelimit import (
    RateLimited,
    RateLimitedEmbedder,
    RateLimitedModel,
    TokenBucket,
)
from ragloom.resilience.retry import (
    Retrying,
    RetryingEmbedder,
    RetryingModel,
    RetryPolicy,
    is_retryable,
)

__all__ = [
    "CachedEmbedder",
    "EmbeddingCache",
    "FallbackChain",
    "LRUEmbeddingCache",
    "RateLimited",
    "RateLimitedEmbedder",
    "RateLimitedModel",
    "RetryPolicy",
    "Retrying",
    "RetryingEmbedder",
    "RetryingModel",
    "SQLiteEmbeddingCache",
    "TokenBucket",
    "is_retryable",
]

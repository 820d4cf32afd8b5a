"""``chunking_strategy``: OpenAI's auto/static shapes, checked and turned into a splitter.

``auto`` means ragloom's default splitter for the embedder (200 tokens with 30 of
overlap for MiniLM, whose window is 256 tokens) and is reported as that static
strategy, since that is what is done; OpenAI's 800/400 would be cut by the model.
"""

from __future__ import annotations

from typing import Any

from ragloom.chunking import RecursiveSplitter
from ragloom.chunking.recursive import DEFAULT_TOKEN_OVERLAP, DEFAULT_TOKEN_SIZE
from ragloom.protocols import Chunker, EmbeddingProvider, TokenCounter
from ragloom.server.v1.errors import bad_request

AUTO = {"type": "static", "static": {"max_chunk_size_tokens": DEFAULT_TOKEN_SIZE,
                                     "chunk_overlap_tokens": DEFAULT_TOKEN_OVERLAP}}


def resolve(strategy: Any, param: str = "chunking_strategy") -> dict[str, Any]:
    """The static strategy a request's ``chunking_strategy`` means (400 when invalid)."""
    if strategy is None:
        return AUTO
    if not isinstance(strategy, dict) or "type" not in strategy:
        raise bad_request("chunking_strategy must be {'type': 'auto'} or "
                          "{'type': 'static', 'static': {...}}", param)
    kind = strategy["type"]
    if kind == "auto":
        return AUTO
    if kind != "static":
        raise bad_request(f"chunking_strategy type {kind!r} is not supported; use 'auto' "
                          "or 'static'", f"{param}.type", code="unsupported_value")
    static = strategy.get("static")
    if not isinstance(static, dict):
        raise bad_request("a static chunking_strategy needs 'static': {max_chunk_size_tokens, "
                          "chunk_overlap_tokens}", f"{param}.static")
    size = static.get("max_chunk_size_tokens")
    overlap = static.get("chunk_overlap_tokens", 0)
    if not isinstance(size, int) or isinstance(size, bool) or not 100 <= size <= 4096:
        raise bad_request("max_chunk_size_tokens must be an integer from 100 to 4096",
                          f"{param}.static.max_chunk_size_tokens")
    if (not isinstance(overlap, int) or isinstance(overlap, bool) or overlap < 0
            or overlap > size // 2):
        raise bad_request("chunk_overlap_tokens must be an integer from 0 to half of "
                          "max_chunk_size_tokens", f"{param}.static.chunk_overlap_tokens")
    return {"type": "static", "static": {"max_chunk_size_tokens": size,
                                         "chunk_overlap_tokens": overlap}}


def chunker_for(strategy: dict[str, Any], embedder: EmbeddingProvider) -> Chunker:
    static = strategy["static"]
    counter = embedder if isinstance(embedder, TokenCounter) else None
    size = int(static["max_chunk_size_tokens"])
    overlap = int(static["chunk_overlap_tokens"])
    if counter is None:  # no tokenizer: about four characters a token
        return RecursiveSplitter(size * 4, overlap * 4)
    return RecursiveSplitter(size, overlap, token_counter=counter)

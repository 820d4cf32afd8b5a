from __future__ import annotations

import pytest

from ragloom.chunking.tokens import encoding_name_for, token_counter_for
from ragloom.knowledge_base import default_chunker


def test_openai_embedders_count_openai_tokens() -> None:
    pytest.importorskip("bpe_openai")
    counter = token_counter_for("openai:text-embedding-3-small")
    assert counter is not None and counter.encoding_name == "cl100k_base"
    assert counter.count_tokens("Frames carry a lifetime warranty for the original owner.") == 10
    assert token_counter_for("local:all-MiniLM-L6-v2") is None
    assert encoding_name_for("gpt-4o") == "o200k_base"


def test_default_chunker_for_a_hosted_embedder_is_sized_in_tokens() -> None:
    pytest.importorskip("bpe_openai")
    pytest.importorskip("openai")
    from ragloom.registry import make_embedder

    embedder = make_embedder("openai:text-embedding-3-small", base_url="http://127.0.0.1:9")
    chunker = default_chunker(embedder)
    assert getattr(chunker, "token_counter", None) is not None

"""Remote embedders (OpenAI-compatible and Ollama) against local wire-format servers."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeservers import FakeServer, Fault, ollama_api, openai_api
from fakeservers.openai_api import fake_vector
from ragloom.errors import AuthenticationError, BadResponseError, RateLimitError
from ragloom.registry import make_embedder
from ragloom.resilience import CachedEmbedder, Retrying, SQLiteEmbeddingCache
from ragloom.types import Vector

pytestmark = pytest.mark.integration
SECRET = "sk-embed-SECRET-9876"


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with FakeServer(openai_api.app) as server:
        yield server


@pytest.fixture
def ollama_server() -> Iterator[FakeServer]:
    with FakeServer(ollama_api.app) as server:
        yield server


def test_openai_embeds_in_batches(openai_server: FakeServer) -> None:
    embedder = make_embedder("openai:embed-test", base_url=openai_server.url + "/v1",
                             batch_size=2)
    texts = ["alpha", "beta", "gamma", "delta", "epsilon"]
    vectors = embedder.embed_documents(texts)
    assert [len(r.body["input"]) for r in openai_server.requests] == [2, 2, 1]
    assert all(r.path == "/v1/embeddings" and r.body["model"] == "embed-test"
               for r in openai_server.requests)
    assert openai_server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    for text, vector in zip(texts, vectors, strict=True):
        assert isinstance(vector, Vector)
        np.testing.assert_allclose(vector.values, fake_vector(text, 8), rtol=1e-5)
    assert embedder.dimension == 8
    assert embedder.name == "openai:embed-test"


def test_openai_dimension_known_without_a_call(openai_server: FakeServer) -> None:
    known = make_embedder("openai:text-embedding-3-small", base_url=openai_server.url + "/v1")
    assert known.dimension == 1536
    chosen = make_embedder("openai:embed-test", base_url=openai_server.url + "/v1",
                           dimensions=16)
    assert chosen.dimension == 16
    assert openai_server.requests == []
    vector = chosen.embed_query("hello")
    assert isinstance(vector, Vector) and vector.dimension == 16
    assert openai_server.requests[0].body["dimensions"] == 16


def test_dimension_probed_once_and_cached(ollama_server: FakeServer) -> None:
    embedder = make_embedder("ollama:nomic-test", host=ollama_server.url)
    assert embedder.dimension == 6
    assert embedder.dimension == 6
    assert len(ollama_server.requests) == 1


def test_ollama_embeds_in_batches(ollama_server: FakeServer) -> None:
    embedder = make_embedder("ollama:nomic-test", host=ollama_server.url, batch_size=3)
    texts = [f"text {i}" for i in range(7)]
    vectors = embedder.embed_documents(texts)
    assert [r.body["input"] for r in ollama_server.requests] == [texts[:3], texts[3:6], texts[6:]]
    assert all(r.path == "/api/embed" for r in ollama_server.requests)
    np.testing.assert_allclose(vectors[4].values, fake_vector("text 4", 6), rtol=1e-5)  # type: ignore[union-attr]


def test_embedding_errors_are_mapped(openai_server: FakeServer, ollama_server: FakeServer
                                     ) -> None:
    openai = make_embedder("openai:embed-test", base_url=openai_server.url + "/v1")
    openai_server.faults.append(Fault(401, body=f'{{"error": "{SECRET}"}}'.encode()))
    with pytest.raises(AuthenticationError, match="openai:embed-test") as info:
        openai.embed_query("x")
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)
    openai_server.faults.append(Fault(429, headers={"Retry-After": "2"}))
    with pytest.raises(RateLimitError) as limited:
        openai.embed_query("x")
    assert limited.value.retry_after == 2.0
    ollama = make_embedder("ollama:nomic-test", host=ollama_server.url)
    ollama_server.faults.append(Fault(200, body=b"{broken"))
    with pytest.raises(BadResponseError, match="ollama:nomic-test"):
        ollama.embed_documents(["x"])


def test_retry_and_cache_around_a_remote_embedder(openai_server: FakeServer,
                                                  tmp_path: Path) -> None:
    waits: list[float] = []
    inner = make_embedder("openai:embed-test", base_url=openai_server.url + "/v1")
    cache = SQLiteEmbeddingCache(tmp_path / "cache.db")
    embedder = CachedEmbedder(Retrying(inner, sleep=waits.append), cache)  # type: ignore[arg-type]
    openai_server.faults.append(Fault(503))
    first = embedder.embed_documents(["one", "two"])
    assert len(waits) == 1 and len(openai_server.requests) == 2
    again = CachedEmbedder(inner, SQLiteEmbeddingCache(tmp_path / "cache.db"))
    second = again.embed_documents(["one", "two"])
    assert len(openai_server.requests) == 2  # re-ingesting unchanged text calls nothing
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a.values, b.values)  # type: ignore[union-attr]
    cache.close()

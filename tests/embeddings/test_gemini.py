"""Gemini embeddings (``gemini:`` names) against a local server speaking Gemini's wire
format (``models/{model}:batchEmbedContents``): batches, task types, keys, base URL,
errors, a 429 retried by the same resilience wrapper as every hosted provider, and a
knowledge base that ingests and searches with them."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeservers import FakeServer, Fault, gemini_api
from fakeservers.openai_api import fake_vector
from ragloom.config import build_embedder, load_settings
from ragloom.errors import AuthenticationError, RateLimitError
from ragloom.registry import make_embedder
from ragloom.types import Vector

pytestmark = pytest.mark.integration
SECRET = "gm-embed-SECRET-4321"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_BASE_URL", raising=False)
    with FakeServer(gemini_api.app) as fake:
        yield fake


def test_batches_in_gemini_wire_format(server: FakeServer) -> None:
    embedder = make_embedder("gemini:gemini-embedding-001", base_url=server.url,
                             batch_size=2, dimensions=8)
    assert embedder.name == "gemini:gemini-embedding-001" and embedder.dimension == 8
    texts = ["alpha", "beta", "gamma"]
    vectors = embedder.embed_documents(texts)
    assert [r.path.rsplit("/", 1)[1] for r in server.requests] == [
        "gemini-embedding-001:batchEmbedContents"] * 2
    assert [len(r.body["requests"]) for r in server.requests] == [2, 1]
    first = server.requests[0]
    assert first.headers["x-goog-api-key"] == SECRET
    assert first.body["requests"][0]["taskType"] == "RETRIEVAL_DOCUMENT"
    assert first.body["requests"][0]["outputDimensionality"] == 8
    for text, vector in zip(texts, vectors, strict=True):
        assert isinstance(vector, Vector)
        np.testing.assert_allclose(vector.values, fake_vector(text, 8), rtol=1e-5)
    query = embedder.embed_query("alpha")
    assert server.requests[-1].body["requests"][0]["taskType"] == "RETRIEVAL_QUERY"
    np.testing.assert_allclose(query.values, fake_vector("alpha", 8), rtol=1e-5)  # type: ignore[union-attr]


def test_older_names_keys_and_base_url_from_the_environment(
        server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    known = make_embedder("gemini:text-embedding-004")
    assert known.dimension == 768  # known without a call
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    monkeypatch.setenv("GEMINI_BASE_URL", server.url)
    probed = make_embedder("gemini:text-embedding-004")
    probed.embed_documents(["x"])
    assert server.requests[-1].headers["x-goog-api-key"] == "google-key"
    assert server.requests[-1].path.endswith("/models/text-embedding-004:batchEmbedContents")
    monkeypatch.delenv("GOOGLE_API_KEY")
    with pytest.raises(AuthenticationError, match="GEMINI_API_KEY"):
        make_embedder("gemini:text-embedding-004").embed_query("x")


def test_errors_are_mapped_and_a_429_is_retried(server: FakeServer, tmp_path: Path) -> None:
    embedder = make_embedder("gemini:gemini-embedding-001", base_url=server.url, dimensions=8)
    server.faults.append(Fault(429, headers={"Retry-After": "3"}, body=(
        b'{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "quota"}}')))
    with pytest.raises(RateLimitError) as limited:
        embedder.embed_query("x")
    assert limited.value.retry_after == 3.0
    server.faults.append(Fault(401, body=f'{{"error": {{"code": 401, "message": '
                                         f'"bad key {SECRET}"}}}}'.encode()))
    with pytest.raises(AuthenticationError, match="gemini:gemini-embedding-001") as denied:
        embedder.embed_query("x")
    assert SECRET not in str(denied.value)

    # As configured for the CLI and the server: retried after the Retry-After wait.
    (tmp_path / "ragloom.toml").write_text(
        f'embedder = "gemini:gemini-embedding-001"\n[providers.gemini]\n'
        f'base_url = "{server.url}"\n')
    waits: list[float] = []
    configured = build_embedder(load_settings(cwd=tmp_path, env={}, user_config=tmp_path / "u"),
                                sleep=waits.append)
    server.faults.append(Fault(429, headers={"Retry-After": "1"}, body=(
        b'{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "quota"}}')))
    before = len(server.requests)
    vector = configured.embed_query("retry me")
    assert waits == [1.0] and len(server.requests) == before + 2
    np.testing.assert_allclose(vector.values, fake_vector("retry me", 8), rtol=1e-5)  # type: ignore[union-attr]


def test_a_knowledge_base_on_gemini_embeddings(server: FakeServer) -> None:
    from ragloom.knowledge_base import VectorKnowledgeBase
    from ragloom.retrieval.options import SearchOptions
    from ragloom.stores.memory import InMemoryVectorStore
    from ragloom.types import TextDocument

    embedder = make_embedder("gemini:gemini-embedding-001", base_url=server.url, dimensions=8)
    kb = VectorKnowledgeBase(InMemoryVectorStore(), embedder, name="g")
    kb.ingest([TextDocument.create("alpha", source="a"), TextDocument.create("beta",
                                                                             source="b")])
    found = kb.search("alpha", SearchOptions(mode="vector", top_k=1)).matches
    assert [m.chunk.text for m in found] == ["alpha"]  # the same text, the same vector

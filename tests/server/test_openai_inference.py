"""``models``, ``chat/completions`` (streamed and not, from knowledge) and ``embeddings``
(float and base64) through the official client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import openai
import pytest

from ragloom.testing import HashingEmbedder, ScriptedModel
from ragloom.types import ChatMessage
from tests.server.openai_support import make_app, serve


def echo_last(messages: list[ChatMessage]) -> str:
    return f"You said: {messages[-1].content}"


@pytest.fixture(scope="module")
def embedder() -> HashingEmbedder:
    return HashingEmbedder(32)


@pytest.fixture(scope="module")
def model() -> ScriptedModel:
    return ScriptedModel([echo_last], name="fake:echo")


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory, embedder: HashingEmbedder,
        model: ScriptedModel) -> Iterator[str]:
    with serve(make_app(tmp_path_factory.mktemp("inf"), embedder, model)) as base:
        yield base


@pytest.fixture(scope="module")
def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="key-alice", max_retries=0)


def test_models(client: openai.OpenAI, embedder: HashingEmbedder) -> None:
    ids = [m.id for m in client.models.list()]
    assert ids == ["fake:echo", embedder.name]
    assert client.models.retrieve(embedder.name).id == embedder.name
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("gpt-nothing")


def test_chat_completion(client: openai.OpenAI, model: ScriptedModel) -> None:
    completion = client.chat.completions.create(
        model="fake:echo", messages=[{"role": "system", "content": "Be brief."},
                                     {"role": "user", "content": "hello there"}])
    assert completion.choices[0].message.content == "You said: hello there"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == 4 and completion.usage.completion_tokens == 4
    assert completion.usage.total_tokens == 8
    assert [m.role for m in model.calls[-1]] == ["system", "user"]


def test_chat_completion_stream(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model="fake:echo", messages=[{"role": "user", "content": "one two three"}],
        stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "You said: one two three"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 5


def test_chat_from_a_vector_store(client: openai.OpenAI, model: ScriptedModel) -> None:
    vs = client.vector_stores.create(name="kb")
    fid = client.files.create(file=("otters.txt", b"Sea otters hold hands while sleeping."),
                              purpose="assistants").id
    client.vector_stores.files.create_and_poll(vector_store_id=vs.id, file_id=fid,
                                               poll_interval_ms=20)
    completion = client.chat.completions.create(
        model="fake:echo", messages=[{"role": "user", "content": "Do otters hold hands?"}],
        extra_body={"vector_store_ids": [vs.id]})
    assert "Sea otters hold hands while sleeping." in model.calls[-1][-1].content
    sources: Any = completion.model_extra["sources"]  # type: ignore[index]
    assert sources[0]["file_id"] == fid and 0 <= sources[0]["score"] <= 1
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(
            model="fake:echo", messages=[{"role": "user", "content": "x"}],
            extra_body={"knowledge_bases": ["nope"]})


def test_chat_errors(client: openai.OpenAI) -> None:
    # A model the operator did not allow: 400 naming the allowed ones (the edge policy).
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user",
                                                                  "content": "x"}])
    assert refused.value.body["code"] == "model_not_allowed"  # type: ignore[index]
    assert "'fake:echo'" in refused.value.body["message"]  # type: ignore[index]
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="fake:echo", n=2,
                                       messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="fake:echo", messages=[])


def test_embeddings_float_and_base64(client: openai.OpenAI,
                                     embedder: HashingEmbedder) -> None:
    texts = ["the cat sat", "on the mat"]
    default = client.embeddings.create(model=embedder.name, input=texts)  # base64 on wire
    floats = client.embeddings.create(model=embedder.name, input=texts,
                                      encoding_format="float")
    expected = [e.values for e in embedder.embed_documents(texts)]  # type: ignore[attr-defined]
    for result in (default, floats):
        assert [d.index for d in result.data] == [0, 1]
        for item, want in zip(result.data, expected, strict=True):
            np.testing.assert_allclose(item.embedding, want, rtol=1e-6)
        assert result.usage.prompt_tokens == 6
    with pytest.raises(openai.BadRequestError) as refused:
        client.embeddings.create(model="text-embedding-3-small", input="x")
    assert embedder.name in refused.value.body["message"]  # type: ignore[index]
    with pytest.raises(openai.BadRequestError):
        client.embeddings.create(model=embedder.name, input="x", dimensions=8)


def test_raw_base64_is_little_endian_float32(url: str, embedder: HashingEmbedder) -> None:
    import base64

    response = httpx.post(f"{url}/v1/embeddings", headers={"Authorization": "Bearer key-a"},
                          json={"model": embedder.name, "input": "cat",
                                "encoding_format": "base64"})
    raw = base64.b64decode(response.json()["data"][0]["embedding"])
    assert np.frombuffer(raw, dtype="<f4").shape == (32,)


def test_a_model_failure_midstream_is_reported_not_dropped(tmp_path: Path) -> None:
    from ragloom.errors import ProviderConnectionError

    def broken(messages: list[ChatMessage]) -> str:
        raise ProviderConnectionError("the model went away")

    with serve(make_app(tmp_path, HashingEmbedder(16),
                        ScriptedModel([broken], name="fake:broken"))) as base:
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="key-a", max_retries=0)
        with pytest.raises(openai.APIError, match="the model"):
            list(client.chat.completions.create(
                model="fake:broken", messages=[{"role": "user", "content": "hi"}],
                stream=True))
        events = list(client.responses.create(model="fake:broken", input="hi", stream=True))
        assert [e.type for e in events][-2:] == ["error", "response.failed"]
        with pytest.raises(openai.APIStatusError) as info:
            client.chat.completions.create(model="fake:broken",
                                           messages=[{"role": "user", "content": "hi"}])
        assert info.value.status_code == 502
        assert client.models.list().data  # the connection still serves

"""The findings of issue #24, through the official ``openai`` client against a real
server: token-array embedding input, ``vector_store.files_batch``, usage objects that
pass the client's own types, the served embedder under its upstream name, Llama
Stack's ``ranking_options`` shapes, and structured output (refused by the local model,
passed through to a hosted one)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import openai
import pytest
from openai.types import CreateEmbeddingResponse
from openai.types.chat import ChatCompletion
from openai.types.responses import Response as OpenAIResponse
from openai.types.vector_stores import VectorStoreFileBatch

from ragloom.testing import HashingEmbedder, ScriptedModel
from ragloom.types import ChatMessage
from tests.server.openai_support import make_app, serve

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the vendor fakes

UPSTREAM = "sentence-transformers/all-MiniLM-L6-v2"


class MiniLMNamed(HashingEmbedder):
    """A hashing embedder served under the bundled model's name (no weights loaded)."""

    @property
    def name(self) -> str:
        return "local:all-MiniLM-L6-v2"


def echo_last(messages: list[ChatMessage]) -> str:
    return f"You said: {messages[-1].content}"


@pytest.fixture(scope="module")
def embedder() -> MiniLMNamed:
    return MiniLMNamed(32)


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory, embedder: MiniLMNamed) -> Iterator[str]:
    model = ScriptedModel([echo_last], name="local:smollm2")
    with serve(make_app(tmp_path_factory.mktemp("dev"), embedder, model)) as base:
        yield base


@pytest.fixture(scope="module")
def client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="key-dev", max_retries=0)


def cl100k(text: str) -> list[int]:
    import bpe_openai

    return list(bpe_openai.get_encoding("cl100k_base").encode(text))


def test_token_arrays_are_decoded_and_embedded(client: openai.OpenAI,
                                               embedder: MiniLMNamed) -> None:
    texts = ["sea otters hold hands", "the quarterly tax deadline"]
    want = [e.values for e in embedder.embed_documents(texts)]  # type: ignore[attr-defined]
    nested = client.embeddings.create(model=embedder.name,
                                      input=[cl100k(t) for t in texts])  # LangChain's shape
    for item, expected in zip(nested.data, want, strict=True):
        np.testing.assert_allclose(item.embedding, expected, rtol=1e-6)
    flat = client.embeddings.create(model=embedder.name, input=cl100k(texts[0]))
    np.testing.assert_allclose(flat.data[0].embedding, want[0], rtol=1e-6)
    with pytest.raises(openai.BadRequestError, match="not a cl100k_base token"):
        client.embeddings.create(model=embedder.name, input=[[1, 2, 10**9]])
    with pytest.raises(openai.BadRequestError, match="not a mix"):
        client.embeddings.create(model=embedder.name, input=[[1, 2], "text"])  # type: ignore[list-item]


def test_the_served_embedder_answers_to_its_upstream_name(client: openai.OpenAI) -> None:
    for name in (UPSTREAM, "local:all-MiniLM-L6-v2", "all-minilm-l6-v2", "local:minilm"):
        result = client.embeddings.create(model=name, input="hello")
        assert len(result.data[0].embedding) == 32
    assert client.models.retrieve(UPSTREAM).id == "local:all-MiniLM-L6-v2"
    vs = client.vector_stores.create(name="named", extra_body={"embedding_model": UPSTREAM})
    assert vs.id.startswith("vs_")
    with pytest.raises(openai.BadRequestError, match="not allowed on this server"):
        client.vector_stores.create(name="x", extra_body={"embedding_model": "BAAI/bge-m3"})
    with pytest.raises(openai.BadRequestError, match="not allowed"):
        client.embeddings.create(model="text-embedding-3-small", input="x")
    chat = client.chat.completions.create(model="smollm2",
                                          messages=[{"role": "user", "content": "hi"}])
    assert chat.choices[0].message.content == "You said: hi"


def test_file_batches_are_files_batch_objects(client: openai.OpenAI) -> None:
    vs = client.vector_stores.create(name="batches")
    fid = client.files.create(file=("a.txt", b"Sea otters hold hands."),
                              purpose="assistants").id
    raw = client.vector_stores.file_batches.with_raw_response.create(
        vector_store_id=vs.id, file_ids=[fid])
    batch = VectorStoreFileBatch.model_validate(raw.http_response.json())
    assert batch.object == "vector_store.files_batch"
    done = client.vector_stores.file_batches.poll(batch.id, vector_store_id=vs.id,
                                                  poll_interval_ms=20)
    assert done.object == "vector_store.files_batch" and done.status == "completed"


def test_usage_objects_pass_the_clients_types(client: openai.OpenAI) -> None:
    """Validated (not constructed) with the client's models: every field it requires."""
    raw = client.chat.completions.with_raw_response.create(
        model="local:smollm2", messages=[{"role": "user", "content": "one two"}])
    chat = ChatCompletion.model_validate(raw.http_response.json())
    assert chat.usage is not None and chat.usage.prompt_tokens_details is not None
    assert chat.usage.prompt_tokens_details.cached_tokens == 0
    assert chat.usage.completion_tokens_details is not None
    assert chat.usage.completion_tokens_details.reasoning_tokens == 0

    response = client.responses.create(model="local:smollm2", input="one two three")
    assert response.usage is not None
    assert response.usage.input_tokens_details.cache_write_tokens == 0
    assert response.usage.input_tokens_details.cached_tokens == 0
    raw_resp = client.responses.with_raw_response.create(model="local:smollm2", input="x")
    strict = OpenAIResponse.model_validate(raw_resp.http_response.json())
    assert strict.usage is not None and strict.usage.total_tokens == (
        strict.usage.input_tokens + strict.usage.output_tokens)

    raw_emb = client.embeddings.with_raw_response.create(model=UPSTREAM, input="a b c",
                                                         encoding_format="float")
    emb = CreateEmbeddingResponse.model_validate(raw_emb.http_response.json())
    assert emb.usage.prompt_tokens == emb.usage.total_tokens > 0


def test_llama_stack_ranking_options_shapes(client: openai.OpenAI) -> None:
    vs = client.vector_stores.create(name="ranked")
    for name, text in (("otters.txt", b"Sea otters hold hands while sleeping."),
                       ("tax.txt", b"The quarterly tax filing deadline is in April.")):
        fid = client.files.create(file=(name, text), purpose="assistants").id
        client.vector_stores.files.create_and_poll(vector_store_id=vs.id, file_id=fid,
                                                   poll_interval_ms=20)
    for options in ({"ranker": "rrf", "impact_factor": 50},
                    {"ranker": "weighted", "alpha": 0.7}, {"alpha": 0.2},
                    {"ranker": "rrf", "score_normalization": "per_query"}):
        page = client.vector_stores.search(vs.id, query="do otters hold hands",
                                           ranking_options=options)  # type: ignore[arg-type]
        assert page.data[0].filename == "otters.txt", options
    per_query = client.vector_stores.search(vs.id, query="do otters hold hands",
                                            ranking_options={  # type: ignore[typeddict-unknown-key]
                                                "ranker": "rrf",
                                                "score_normalization": "per_query"})
    assert per_query.data[0].score == pytest.approx(1.0, abs=1e-6)  # rescaled on request
    for bad in ({"ranker": "weighted", "impact_factor": 50}, {"ranker": "rrf", "alpha": 0.5},
                {"ranker": "weighted", "alpha": 2}, {"score_normalization": "sometimes"}):
        with pytest.raises(openai.BadRequestError):
            client.vector_stores.search(vs.id, query="otters",
                                        ranking_options=bad)  # type: ignore[arg-type]


PERSON = {"type": "object", "properties": {"name": {"type": "string"},
                                           "age": {"type": "integer"}},
          "required": ["name", "age"], "additionalProperties": False}
SCHEMA_FORMAT = {"type": "json_schema",
                 "json_schema": {"name": "person", "schema": PERSON, "strict": True}}


def test_structured_output_is_refused_by_the_local_model(client: openai.OpenAI) -> None:
    for fmt in (SCHEMA_FORMAT, {"type": "json_object"}):
        with pytest.raises(openai.BadRequestError, match="cannot produce structured output"):
            client.chat.completions.create(model="local:smollm2", response_format=fmt,  # type: ignore[arg-type]
                                           messages=[{"role": "user", "content": "Ann, 31"}])
    with pytest.raises(openai.BadRequestError, match="cannot produce structured output"):
        client.responses.create(model="local:smollm2", input="Ann, 31", text={"format": {
            "type": "json_schema", "name": "person", "schema": PERSON}})
    with pytest.raises(openai.BadRequestError, match="needs a 'name'"):
        client.chat.completions.create(
            model="local:smollm2", messages=[{"role": "user", "content": "x"}],
            response_format={"type": "json_schema", "json_schema": {"schema": PERSON}})  # type: ignore[typeddict-item]
    plain = client.chat.completions.create(model="local:smollm2",
                                           response_format={"type": "text"},
                                           messages=[{"role": "user", "content": "hi"}])
    assert plain.choices[0].message.content == "You said: hi"


@pytest.fixture
def hosted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str]]:
    """ragloom serving a hosted OpenAI-compatible model (a fake upstream)."""
    from fakeservers import FakeServer, openai_api
    from ragloom.config import build_model, load_settings

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeServer(openai_api.app) as upstream:
        # Built as ragloom serve builds it: retries and a rate limit around the model.
        (tmp_path / "ragloom.toml").write_text(
            f'llm = "openai:gpt-4o-mini"\n[providers.openai]\nbase_url = '
            f'"{upstream.url}/v1"\nrequests_per_minute = 6000\n')
        model = build_model(load_settings(cwd=tmp_path, env={}, user_config=tmp_path / "u"))
        assert model is not None and type(model).__name__ == "RetryingModel"
        with serve(make_app(tmp_path, HashingEmbedder(16), model)) as base:
            yield upstream, base


def test_structured_output_passes_through_to_a_hosted_model(hosted: tuple[Any, str]) -> None:
    from fakeservers import Reply

    upstream, base = hosted
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="key-h", max_retries=0)
    upstream.replies.append(Reply(text='{"name": "Ann", "age": 31}'))
    completion = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Ann is 31"}],
        response_format=SCHEMA_FORMAT)  # type: ignore[arg-type]
    assert json.loads(completion.choices[0].message.content or "") == {"name": "Ann",
                                                                        "age": 31}
    sent = upstream.requests[-1].body
    assert sent["response_format"]["json_schema"]["schema"] == PERSON

    upstream.replies.append(Reply(text='{"name": "Bo", "age": 7}'))
    response = client.responses.create(model="openai:gpt-4o-mini", input="Bo is 7", text={
        "format": {"type": "json_schema", "name": "person", "schema": PERSON}})
    assert json.loads(response.output_text) == {"name": "Bo", "age": 7}
    assert response.text is not None and response.text.format.type == "json_schema"
    assert upstream.requests[-1].body["response_format"]["type"] == "json_schema"

    upstream.replies.append(Reply(text='{"name": "Cy"}'))  # breaks the schema
    with pytest.raises(openai.InternalServerError, match="does not match the schema"):
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Cy"}],
            response_format=SCHEMA_FORMAT)  # type: ignore[arg-type]


def test_structured_output_from_files_is_kept_verbatim(hosted: tuple[Any, str]) -> None:
    """JSON is not read for citation markers: ``[1]`` in it stays, no annotations."""
    from fakeservers import Reply

    upstream, base = hosted
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="key-h", max_retries=0)
    vs = client.vector_stores.create(name="facts")
    fid = client.files.create(file=("a.txt", b"Ann is 31 years old."), purpose="assistants").id
    client.vector_stores.files.create_and_poll(vector_store_id=vs.id, file_id=fid,
                                               poll_interval_ms=20)
    ids = {"type": "object", "properties": {"ids": {"type": "array",
                                                    "items": {"type": "integer"}}},
           "required": ["ids"]}
    fmt = {"format": {"type": "json_schema", "name": "ids", "schema": ids}}
    tools = [{"type": "file_search", "vector_store_ids": [vs.id]}]
    upstream.replies.append(Reply(text='{"ids": [1]}'))
    response = client.responses.create(model="gpt-4o-mini", input="Ann's age?",
                                       tools=tools, text=fmt)  # type: ignore[arg-type]
    assert response.output_text == '{"ids": [1]}'
    message = next(item for item in response.output if item.type == "message")
    assert message.content[0].annotations == []  # type: ignore[union-attr]
    upstream.replies.append(Reply(text='{"ids": [1, 2]}'))
    events = list(client.responses.create(model="gpt-4o-mini", input="Ann's age?",
                                          tools=tools, text=fmt, stream=True))  # type: ignore[arg-type]
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    done = next(e for e in events if e.type == "response.completed")
    assert json.loads(deltas) == {"ids": [1, 2]} == json.loads(done.response.output_text)

"""OpenTelemetry traces: one ``/v1/responses`` call with ``file_search`` on a real
server, with real OpenAI-wire providers (a fake upstream), makes one trace: the server
span, a retrieval span, an embeddings span and a chat span, linked parent to child, and
an incoming ``traceparent`` is their parent. Off, nothing is made."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from ragloom import tracing
from ragloom.server.tracing_middleware import TraceMiddleware
from tests.server.openai_support import make_app, serve

sdk = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the vendor fakes

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracing.configure(tracer_provider=provider, record_results=True)
    try:
        yield memory
    finally:
        tracing.shutdown()


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str]]:
    from fakeservers import FakeServer, Reply, openai_api
    from ragloom.embeddings.openai import OpenAIEmbedder
    from ragloom.models.openai import OpenAIChatModel

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeServer(openai_api.app) as upstream:
        upstream.default_reply = Reply(text="Otters hold hands [1].", input_tokens=42,
                                       output_tokens=5)
        embedder = OpenAIEmbedder("text-embedding-3-small", base_url=f"{upstream.url}/v1",
                                  dimensions=8)
        model = OpenAIChatModel("gpt-4o-mini", base_url=f"{upstream.url}/v1")
        app = make_app(tmp_path, embedder, model)
        app.add_middleware(TraceMiddleware)
        with serve(app) as base:
            yield upstream, base


def by_name(spans: Any, prefix: str) -> list[Any]:
    return [s for s in spans if s.name.startswith(prefix)]


def spans_once(exporter: InMemorySpanExporter, server_span: str) -> Any:
    """The finished spans once the server span has ended: it ends after the last byte
    is sent, which the client may have read a moment before."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        spans = exporter.get_finished_spans()
        if any(s.name == server_span for s in spans):
            return spans
        time.sleep(0.01)
    return exporter.get_finished_spans()


def test_one_responses_call_is_one_linked_trace(exporter: InMemorySpanExporter,
                                                served: tuple[Any, str]) -> None:
    _, base = served
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="key-t", max_retries=0)
    vs = client.vector_stores.create(name="otters")
    fid = client.files.create(file=("otters.txt", b"Sea otters hold hands while sleeping."),
                              purpose="assistants").id
    client.vector_stores.files.create_and_poll(vector_store_id=vs.id, file_id=fid,
                                               poll_interval_ms=20)
    exporter.clear()
    response = client.responses.create(
        model="gpt-4o-mini", input="Do otters hold hands?",
        tools=[{"type": "file_search", "vector_store_ids": [vs.id], "max_num_results": 3}],
        extra_headers={"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"})
    assert response.status == "completed"
    spans = spans_once(exporter, "POST /v1/responses")
    (server,) = [s for s in spans if s.name == "POST /v1/responses"]
    retrievals = by_name(spans, "retrieval ")
    embeddings = by_name(spans, "embeddings ")
    (chat,) = by_name(spans, "chat ")
    assert retrievals and embeddings
    # The incoming traceparent is the root: same trace, the server span its child.
    assert {s.context.trace_id for s in spans} == {int(TRACE_ID, 16)}
    assert server.parent is not None and server.parent.span_id == int(PARENT_ID, 16)
    assert server.attributes["http.response.status_code"] == 200
    ids = {s.context.span_id: s for s in spans}

    def ancestors(span: Any) -> list[str]:
        names = []
        while span.parent is not None and span.parent.span_id in ids:
            span = ids[span.parent.span_id]
            names.append(span.name)
        return names

    retrieval = retrievals[0]
    assert retrieval.name == f"retrieval {vs.id}"
    assert retrieval.attributes["gen_ai.operation.name"] == "retrieval"
    assert retrieval.attributes["gen_ai.data_source.id"] == vs.id
    assert retrieval.attributes["gen_ai.request.top_k"] >= 3
    assert "POST /v1/responses" in ancestors(retrieval)
    assert list(retrieval.attributes["ragloom.retrieval.scores"])  # recording was asked
    embedding = embeddings[0]
    assert embedding.name == "embeddings text-embedding-3-small"
    assert embedding.attributes["gen_ai.operation.name"] == "embeddings"
    assert ancestors(embedding)[-1] == "POST /v1/responses"
    assert chat.name == "chat gpt-4o-mini"
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "gpt-4o-mini"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 42
    assert chat.attributes["gen_ai.usage.output_tokens"] == 5
    assert ancestors(chat)[-1] == "POST /v1/responses"
    assert retrieval.end_time <= chat.start_time  # searched, then answered


def test_a_streamed_chat_gets_its_span_too(exporter: InMemorySpanExporter,
                                           served: tuple[Any, str]) -> None:
    _, base = served
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="key-t", max_retries=0)
    text = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], stream=True)
        if c.choices)
    assert text
    spans = spans_once(exporter, "POST /v1/chat/completions")
    (chat,) = by_name(spans, "chat ")
    (server,) = [s for s in spans if s.name == "POST /v1/chat/completions"]
    assert chat.context.trace_id == server.context.trace_id
    assert chat.attributes["gen_ai.usage.output_tokens"] == 5


def test_no_spans_and_no_opentelemetry_while_off(served: tuple[Any, str]) -> None:
    assert not tracing.enabled()
    assert tracing.span("x", a=1) is tracing.NOOP_SPAN
    assert tracing.retrieval_span("kb", 5, "hybrid") is tracing.NOOP_SPAN
    assert tracing.embeddings_span("local:m", 1) is tracing.NOOP_SPAN
    assert tracing.start_chat_span("local:m") is tracing.NOOP_SPAN
    with tracing.span("x") as current:
        current.set_attribute("k", "v")  # does nothing, raises nothing
    _, base = served
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="key-t", max_retries=0)
    assert client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]).choices


def test_create_app_and_the_cli_turn_tracing_on(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from ragloom.cli.serve_cmd import _otel_settings
    from ragloom.server.app import create_app
    from ragloom.server.settings import ServerSettings

    assert _otel_settings({"otel": True}, None, None)["otel"] is True
    assert _otel_settings({"otel": True}, False, None)["otel"] is False  # flag wins
    assert _otel_settings({}, True, "console")["otel_exporter"] == "console"
    try:
        app = create_app(ServerSettings(db=tmp_path / "kb" / "ragloom.db", otel=True,
                                        otel_exporter="none", embedder="fake:hashing-64",
                                        llm="fake:echo"))
        assert tracing.enabled()
        assert any(m.cls is TraceMiddleware for m in app.user_middleware)
    finally:
        tracing.shutdown()
    for name in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
                 "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    assert tracing.configure_from_env({}) is False
    assert tracing.configure_from_env({"OTEL_TRACES_EXPORTER": "console",
                                       "OTEL_SDK_DISABLED": "true"}) is False
    try:
        assert tracing.configure_from_env({"OTEL_TRACES_EXPORTER": "none"}) is True
        assert tracing.enabled() and not tracing.record_results()
    finally:
        tracing.shutdown()
    assert not tracing.enabled()

"""The remote chat providers against local servers that speak each vendor's wire format."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeservers import (
    FakeServer,
    Fault,
    Recorded,
    Reply,
    anthropic_api,
    gemini_api,
    ollama_api,
    openai_api,
)
from ragloom.errors import (
    AuthenticationError,
    BadResponseError,
    InvalidInputError,
    ModelNotFoundError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
)
from ragloom.registry import make_model
from ragloom.resilience import FallbackChain, Retrying
from ragloom.types import ChatMessage, Tool, ToolCall

pytestmark = pytest.mark.integration

SECRET = "sk-test-DO-NOT-LEAK-4242"
WEATHER = Tool(name="get_weather", description="Weather in a city",
               parameters={"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]})


def _openai_view(r: Recorded) -> dict[str, Any]:
    body = r.body
    return {"path_ok": r.path == "/v1/chat/completions", "model": body["model"],
            "texts": [m.get("content") for m in body["messages"]],
            "stop": body.get("stop"),
            "tools": [t["function"]["name"] for t in body.get("tools", [])],
            "auth": r.headers.get("authorization", "")}


def _anthropic_view(r: Recorded) -> dict[str, Any]:
    body = r.body
    texts = [body.get("system")] if body.get("system") else []
    for turn in body["messages"]:
        texts += [b.get("text") or b.get("content") for b in turn["content"]
                  if b["type"] in ("text", "tool_result")]
    return {"path_ok": r.path == "/v1/messages", "model": body["model"], "texts": texts,
            "stop": body.get("stop_sequences"), "tools": [t["name"] for t in body.get("tools", [])],
            "auth": r.headers.get("x-api-key", "") + r.headers.get("authorization", "")}


def _ollama_view(r: Recorded) -> dict[str, Any]:
    body = r.body
    return {"path_ok": r.path == "/api/chat", "model": body["model"],
            "texts": [m.get("content") for m in body["messages"]],
            "stop": (body.get("options") or {}).get("stop"),
            "tools": [t["function"]["name"] for t in body.get("tools") or []], "auth": SECRET}


def _gemini_view(r: Recorded) -> dict[str, Any]:
    body = r.body
    texts = [p["text"] for p in (body.get("systemInstruction") or {}).get("parts", [])]
    for content in body["contents"]:
        for part in content["parts"]:
            if "text" in part:
                texts.append(part["text"])
            if "functionResponse" in part:
                texts.append(part["functionResponse"]["response"]["result"])
    tools = [d["name"] for t in body.get("tools", []) for d in t["functionDeclarations"]]
    model = r.path.rpartition("/")[2].partition(":")[0]
    return {"path_ok": "/models/gemini-test:" in r.path, "model": model, "texts": texts,
            "stop": (body.get("generationConfig") or {}).get("stopSequences"), "tools": tools,
            "auth": r.headers.get("x-goog-api-key", "")}


@dataclass
class Vendor:
    name: str
    app: Any
    model_name: str
    key_env: str | None
    view: Callable[[Recorded], dict[str, Any]]
    url_suffix: str = ""
    option: str = "base_url"

    def make(self, url: str, timeout: float = 5.0) -> Any:
        return make_model(f"{self.name}:{self.model_name}",
                          **{self.option: url + self.url_suffix, "timeout": timeout})


VENDORS = {
    "openai": Vendor("openai", openai_api.app, "gpt-test", "OPENAI_API_KEY", _openai_view, "/v1"),
    "anthropic": Vendor("anthropic", anthropic_api.app, "claude-test", "ANTHROPIC_API_KEY",
                        _anthropic_view),
    "ollama": Vendor("ollama", ollama_api.app, "llama-test", None, _ollama_view, option="host"),
    "gemini": Vendor("gemini", gemini_api.app, "gemini-test", "GEMINI_API_KEY", _gemini_view),
}


@pytest.fixture(params=sorted(VENDORS))
def vendor(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
           ) -> Iterator[tuple[Vendor, FakeServer]]:
    spec = VENDORS[request.param]
    for env in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_HOST", "GEMINI_BASE_URL"):
        monkeypatch.delenv(env, raising=False)
    if spec.key_env:
        monkeypatch.setenv(spec.key_env, SECRET)
    with FakeServer(spec.app) as server:
        yield spec, server


def test_chat_sends_the_conversation_and_reads_text_and_usage(vendor: tuple[Vendor, FakeServer]
                                                              ) -> None:
    spec, server = vendor
    model = spec.make(server.url)
    response = model.chat([ChatMessage.system("Answer briefly."), ChatMessage.user("Hi there")],
                          stop=["fake"], temperature=0.1, max_tokens=20)
    assert response.text.strip() == "Hello from the"  # the server honoured the stop sequence
    assert response.usage.input_tokens == 11 and response.usage.output_tokens == 7
    assert response.usage.latency_s > 0
    assert response.model == f"{spec.name}:{spec.model_name}"
    seen = spec.view(server.requests[-1])
    assert seen["path_ok"] and seen["model"] == spec.model_name
    assert seen["texts"] == ["Answer briefly.", "Hi there"]
    assert seen["stop"] == ["fake"]
    assert SECRET in seen["auth"]


def test_stream_yields_text_then_the_full_response(vendor: tuple[Vendor, FakeServer]) -> None:
    spec, server = vendor
    deltas = list(spec.make(server.url).stream("Hi there"))
    assert len(deltas) >= 3
    final = deltas[-1].response
    assert final is not None and all(d.response is None for d in deltas[:-1])
    assert "".join(d.text for d in deltas).strip() == "Hello from the fake server."
    assert final.text.strip() == "Hello from the fake server."
    assert (final.usage.input_tokens, final.usage.output_tokens) == (11, 7)


@pytest.mark.parametrize("streaming", [False, True])
def test_tool_calls_round_trip(vendor: tuple[Vendor, FakeServer], streaming: bool) -> None:
    spec, server = vendor
    model = spec.make(server.url)
    server.replies.append(Reply(text="", tool_calls=[("get_weather", {"city": "Paris"})]))
    if streaming:
        response = list(model.stream("Weather in Paris?", tools=[WEATHER]))[-1].response
        assert response is not None
    else:
        response = model.chat("Weather in Paris?", tools=[WEATHER])
    assert spec.view(server.requests[-1])["tools"] == ["get_weather"]
    (call,) = response.message.tool_calls
    assert call.name == "get_weather" and dict(call.arguments) == {"city": "Paris"}
    # The tool's answer goes back in the vendor's shape and the model then answers.
    follow_up = [ChatMessage.user("Weather in Paris?"),
                 ChatMessage.assistant("", [ToolCall(id=call.id, name=call.name,
                                                     arguments=call.arguments)]),
                 ChatMessage.tool("18 C and sunny", call.id)]
    assert model.chat(follow_up, tools=[WEATHER]).text.startswith("Hello")
    assert "18 C and sunny" in spec.view(server.requests[-1])["texts"]


def test_rate_limit_is_retried_after_the_wait_the_server_asked_for(
        vendor: tuple[Vendor, FakeServer]) -> None:
    spec, server = vendor
    server.faults.append(Fault(429, headers={"Retry-After": "7"}))
    waits: list[float] = []
    model = Retrying(spec.make(server.url), max_attempts=3, sleep=waits.append)
    assert model.chat("Hi").text.startswith("Hello")
    assert len(server.requests) == 2
    if spec.name == "ollama":  # the ollama SDK drops response headers: plain backoff
        assert len(waits) == 1
    else:
        assert waits == [7.0]


def test_server_error_then_success(vendor: tuple[Vendor, FakeServer]) -> None:
    spec, server = vendor
    server.faults.append(Fault(500))
    waits: list[float] = []
    model = Retrying(spec.make(server.url), max_attempts=3, base_delay=0.2, jitter=0,
                     sleep=waits.append)
    assert model.chat("Hi").text.startswith("Hello")
    assert waits == [0.2] and len(server.requests) == 2


def test_errors_without_retrying_are_mapped(vendor: tuple[Vendor, FakeServer]) -> None:
    spec, server = vendor
    model = spec.make(server.url)
    server.faults.append(Fault(500))
    with pytest.raises(BadResponseError) as info:
        model.chat("Hi")
    assert info.value.retryable and info.value.__cause__ is not None
    server.faults.append(Fault(404, body=b'{"error": {"message": "model not found"}}'))
    with pytest.raises(ModelNotFoundError, match=f"{spec.name}:{spec.model_name}"):
        model.chat("Hi")
    server.faults.append(Fault(429, headers={"Retry-After": "3"}))
    with pytest.raises(RateLimitError):
        model.chat("Hi")


def test_a_hung_server_times_out(vendor: tuple[Vendor, FakeServer]) -> None:
    spec, server = vendor
    server.faults.append(Fault(hang=True))
    with pytest.raises(ProviderTimeoutError, match=spec.name) as info:
        spec.make(server.url, timeout=0.5).chat("Hi")
    assert info.value.retryable


@pytest.mark.parametrize("streaming", [False, True])
def test_a_malformed_body_is_a_bad_response(vendor: tuple[Vendor, FakeServer],
                                            streaming: bool) -> None:
    spec, server = vendor
    server.faults.append(Fault(200, body=b"this is {not json"))
    model = spec.make(server.url)
    with pytest.raises(BadResponseError, match=f"{spec.name}:{spec.model_name}") as info:
        if streaming:
            list(model.stream("Hi"))
        else:
            model.chat("Hi")
    assert not info.value.retryable


def test_refused_key_names_the_provider_and_never_the_key(vendor: tuple[Vendor, FakeServer]
                                                          ) -> None:
    spec, server = vendor
    server.faults.append(Fault(401, body=f'{{"error": {{"message": "bad key {SECRET}"}}}}'
                               .encode()))
    model = spec.make(server.url)
    with pytest.raises(AuthenticationError) as info:
        model.chat("Hi")
    error = info.value
    assert f"{spec.name}:{spec.model_name}" in str(error)
    assert SECRET not in str(error) and SECRET not in repr(error)
    assert SECRET not in repr(model)
    assert not error.retryable


def test_missing_key_is_an_authentication_error_before_any_request(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(AuthenticationError, match="ANTHROPIC_API_KEY"):
        make_model("anthropic:claude-test", base_url="http://127.0.0.1:9").chat("Hi")


def test_openai_compatible_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeServer(openai_api.app) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        assert make_model("openai:local-model").chat("Hi").text.startswith("Hello")  # type: ignore[union-attr]


def test_fallback_answers_when_the_first_server_is_down(
        vendor: tuple[Vendor, FakeServer]) -> None:
    spec, server = vendor
    with FakeServer(openai_api.app) as dead:
        dead_url = dead.url
    down = make_model("openai:gpt-down", base_url=dead_url + "/v1", timeout=2)
    chain = FallbackChain([down, spec.make(server.url)])  # type: ignore[list-item]
    response = chain.chat("Hi")
    assert response.text.startswith("Hello")
    assert response.model == f"{spec.name}:{spec.model_name}"
    assert isinstance(chain.failures[-1], ProviderConnectionError)
    deltas = list(chain.stream("Hi"))
    assert deltas[-1].response is not None and deltas[-1].response.model == response.model


@pytest.mark.parametrize("single", ["str", "user", "system"])
@pytest.mark.parametrize("streaming", [False, True])
def test_chat_takes_one_message_as_well_as_a_list(vendor: tuple[Vendor, FakeServer],
                                                  single: str, streaming: bool) -> None:
    """The specifications' ``chat(ChatUserMessage|ChatMessage[])``: one message alone
    reaches the server as a one-message conversation, in its own role."""
    spec, server = vendor
    model = spec.make(server.url)
    message: str | ChatMessage = {
        "str": "Just one question", "user": ChatMessage.user("Just one question"),
        "system": ChatMessage.system("Just one question")}[single]
    if single == "system" and spec.name in ("anthropic", "gemini"):
        with pytest.raises(InvalidInputError, match="no user or assistant message"):
            model.chat(message)
        assert not server.requests  # refused before anything was sent
        return
    if streaming:
        final = list(model.stream(message))[-1].response
        assert final is not None
        text = final.text
    else:
        text = model.chat(message).text
    assert "Hello from the" in text
    seen = spec.view(server.requests[-1])
    assert seen["texts"] == ["Just one question"]
    body = server.requests[-1].body
    if single == "system" and spec.name in ("openai", "ollama"):
        assert body["messages"][0]["role"] == "system"
    elif spec.name in ("openai", "ollama"):
        assert body["messages"][0]["role"] == "user"

"""The resilience wrappers hand ``response_format`` (structured output) to the model
they wrap, say whether it can honour it, and never send it to a model that cannot."""

from __future__ import annotations

from typing import Any

from ragloom.errors import ProviderError
from ragloom.resilience import FallbackChain, RateLimited, Retrying
from ragloom.testing import ScriptedModel
from ragloom.types import ChatMessage, ChatResponse

FORMAT = {"type": "json_object"}


class Structured(ScriptedModel):
    supports_response_format = True

    def __init__(self, fail: bool = False) -> None:
        super().__init__(['{"ok": true}'], name="fake:structured")
        self.formats: list[Any] = []
        self.fail = fail

    def chat(self, messages: Any, *, response_format: Any = None,  # type: ignore[override]
             **options: Any) -> ChatResponse:
        self.formats.append(response_format)
        if self.fail:
            raise ProviderError("down", provider="fake")
        return super().chat(messages, **options)


def test_wrappers_pass_the_format_on_and_report_support() -> None:
    down, up = Structured(fail=True), Structured()
    chain = FallbackChain([down, up])
    wrapped = Retrying(RateLimited(chain, requests_per_minute=6000), max_attempts=1)
    assert wrapped.supports_response_format is True  # type: ignore[union-attr]
    reply = wrapped.chat([ChatMessage.user("x")], response_format=FORMAT)  # type: ignore[call-arg]
    assert reply.text == '{"ok": true}'
    assert down.formats == [FORMAT] and up.formats == [FORMAT]


def test_a_model_without_structured_output_is_never_sent_the_field() -> None:
    plain = ScriptedModel(["hi"], name="fake:plain")  # chat() takes no response_format
    wrapped = Retrying(FallbackChain([Structured(), plain]), max_attempts=1)
    assert wrapped.supports_response_format is False  # type: ignore[union-attr]
    assert Retrying(plain).chat("x").text == "hi"  # no format: no keyword sent

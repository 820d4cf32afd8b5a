from __future__ import annotations

from ragloom.advanced import (
    CompressingQueryTransformer,
    DefaultQueryTransformer,
    ExpandingQueryTransformer,
    HypotheticalAnswerTransformer,
    Query,
)
from ragloom.errors import ProviderError
from ragloom.testing import ScriptedModel
from ragloom.types import ChatMessage

HISTORY = (ChatMessage.user("How long is the battery warranty?"),
           ChatMessage.assistant("Two years [1]."))


def test_default_passes_through() -> None:
    query = Query(text="hi")
    assert DefaultQueryTransformer().transform(query) == [query]


def test_compressing_uses_history_and_cleans_the_reply() -> None:
    model = ScriptedModel(['Standalone question: "How long is the warranty for the frame?"\n'
                           "Extra rambling line"])
    out = CompressingQueryTransformer(model).transform(
        Query(text="And for the frame?", history=HISTORY))
    assert [q.text for q in out] == ["How long is the warranty for the frame?"]
    assert out[0].metadata["compressed_by"] == "model"
    prompt = model.calls[0][-1].content
    assert "battery warranty" in prompt and "And for the frame?" in prompt
    assert out[0].history == HISTORY


def test_compressing_without_history_makes_no_call() -> None:
    model = ScriptedModel(["x"])
    query = Query(text="How long is the warranty?")
    assert CompressingQueryTransformer(model).transform(query) == [query]
    assert model.calls == []


def test_compressing_falls_back_to_joining_with_the_last_question() -> None:
    for reply in ["", "And for the frame?"]:
        out = CompressingQueryTransformer(ScriptedModel([reply])).transform(
            Query(text="And for the frame?", history=HISTORY))
        assert out[0].text == "How long is the battery warranty? And for the frame?"
        assert out[0].metadata["compressed_by"] == "fallback"


class _Failing(ScriptedModel):
    def chat(self, *args: object, **kwargs: object):  # type: ignore[no-untyped-def,override]
        raise ProviderError("down", provider="fake")


def test_compressing_survives_a_failing_model() -> None:
    out = CompressingQueryTransformer(_Failing()).transform(
        Query(text="And for the frame?", history=HISTORY))
    assert "battery warranty" in out[0].text


def test_expanding_keeps_original_and_dedupes() -> None:
    model = ScriptedModel(["1. frame warranty length\n- How long is the warranty?\n"
                           "frame warranty length\n\nlifetime cover for frames\nfourth one"])
    out = ExpandingQueryTransformer(model, n=2).transform(Query(text="How long is the warranty?"))
    assert [q.text for q in out] == ["How long is the warranty?", "frame warranty length",
                                     "lifetime cover for frames"]


def test_hyde_adds_a_hypothetical_passage() -> None:
    model = ScriptedModel(["Frames are guaranteed for life."])
    out = HypotheticalAnswerTransformer(model).transform(Query(text="frame warranty?"))
    assert [q.text for q in out] == ["frame warranty?", "Frames are guaranteed for life."]
    assert out[1].metadata["hypothetical"] is True
    only = HypotheticalAnswerTransformer(model, include_original=False).transform(
        Query(text="frame warranty?"))
    assert [q.text for q in only] == ["Frames are guaranteed for life."]


def test_compressing_rejects_a_rewrite_that_drops_the_follow_up_subject() -> None:
    model = ScriptedModel(["I could not find the battery warranty."])
    out = CompressingQueryTransformer(model).transform(
        Query(text="And for the frame?", history=HISTORY))
    assert out[0].metadata["compressed_by"] == "fallback"
    assert "frame" in out[0].text and "battery warranty" in out[0].text
    plural = CompressingQueryTransformer(ScriptedModel(["How long are frames covered?"]))
    assert plural.transform(Query(text="And for the frame?", history=HISTORY))[0].metadata[
        "compressed_by"] == "model"

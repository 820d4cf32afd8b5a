from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.advanced import (
    AnswerEvent,
    AugmentedRag,
    CompressingQueryTransformer,
    ErrorEvent,
    KnowledgeBaseContentRetriever,
    LanguageModelQueryRouter,
    RetrievalAugmentor,
    SourcesEvent,
    TokenEvent,
)
from ragloom.chat import MessageWindowMemory, SessionStore
from ragloom.errors import ProviderError
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.rag import NO_CONTEXT_ANSWER
from ragloom.testing import ScriptedModel

from .conftest import reply_by_prompt


def _rag(kb: VectorKnowledgeBase, model: ScriptedModel, tmp_path: Path) -> AugmentedRag:
    augmentor = RetrievalAugmentor([KnowledgeBaseContentRetriever(kb)],
                                   query_transformer=CompressingQueryTransformer(model))
    return AugmentedRag(augmentor, model, sessions=SessionStore(tmp_path),
                        memory=MessageWindowMemory(6))


def test_follow_up_is_compressed_and_history_reaches_the_model(
        kb: VectorKnowledgeBase, tmp_path: Path) -> None:
    model = ScriptedModel([reply_by_prompt(
        {"Standalone question": "How long is the warranty for the frame?",
         "battery warranty?": "Two years [1].",
         "frame?": "For life [1]."})])
    rag = _rag(kb, model, tmp_path)
    first = rag.query("How long is the battery warranty?", session="chat")
    assert first.queries == ("How long is the battery warranty?",)
    assert first.sources[0].chunk.source == "battery.txt"
    second = rag.query("And for the frame?", session="chat")
    assert second.queries == ("How long is the warranty for the frame?",)
    assert second.sources[0].chunk.source == "warranty.md"
    answer_call = model.calls[-1]
    assert [m.role for m in answer_call] == ["system", "user", "assistant", "user"]
    assert answer_call[1].content == "How long is the battery warranty?"
    assert answer_call[-1].content.endswith("Question: And for the frame?")
    assert second.answer == "For life [1]."
    stored = SessionStore(tmp_path).messages("chat")
    assert [m.role for m in stored] == ["user", "assistant"] * 2
    assert stored[3].metadata["queries"] == ["How long is the warranty for the frame?"]
    assert stored[3].sources[0]["document"] == "warranty.md"
    assert second.to_dict()["queries"] == ["How long is the warranty for the frame?"]


def test_stream_yields_sources_before_tokens_then_the_answer(
        kb: VectorKnowledgeBase, tmp_path: Path) -> None:
    rag = _rag(kb, ScriptedModel(["Frames have a lifetime warranty [1]."]), tmp_path)
    events = list(rag.stream("frame warranty", session="s"))
    assert isinstance(events[0], SourcesEvent)
    assert events[0].sources[0].chunk.source == "warranty.md"
    tokens = [e for e in events if isinstance(e, TokenEvent)]
    assert "".join(t.text for t in tokens) == "Frames have a lifetime warranty [1]."
    assert isinstance(events[-1], AnswerEvent)
    assert events[-1].answer.answer == "Frames have a lifetime warranty [1]."
    assert events.index(tokens[0]) == 1
    assert [e.to_dict()["type"] for e in events][:2] == ["sources", "token"]
    assert SessionStore(tmp_path).get("s").message_count == 2


class _Broken(ScriptedModel):
    def stream(self, *args: object, **kwargs: object):  # type: ignore[no-untyped-def,override]
        yield from ()
        raise ProviderError("the model went away", provider="fake")


def test_stream_errors_are_events(kb: VectorKnowledgeBase, tmp_path: Path) -> None:
    rag = _rag(kb, _Broken(), tmp_path)
    events = list(rag.stream("frame warranty"))
    assert isinstance(events[0], SourcesEvent)
    assert isinstance(events[-1], ErrorEvent)
    assert "went away" in events[-1].message and events[-1].kind == "ProviderError"
    bad = list(rag.stream("   "))  # an empty query fails in retrieval
    assert len(bad) == 1 and isinstance(bad[0], ErrorEvent)


def test_nothing_found_and_retrieval_only(tmp_path: Path) -> None:
    from .conftest import small_kb

    kb = small_kb()
    model = ScriptedModel(["should not be asked"])
    rag = AugmentedRag(RetrievalAugmentor([KnowledgeBaseContentRetriever(
        kb, options=kb.search_options.with_(mode="keyword"))]), model)
    assert rag.query("zzzz qqqq").answer == NO_CONTEXT_ANSWER
    assert model.calls == []
    only = AugmentedRag(RetrievalAugmentor([KnowledgeBaseContentRetriever(kb)]), None)
    result = only.query("frame warranty")
    assert result.answer == "" and result.sources


def test_router_skips_retrieval_for_a_greeting(kb: VectorKnowledgeBase) -> None:
    model = ScriptedModel([reply_by_prompt({"Decide where to look": "0"},
                                           "Hello! How can I help?")])
    router = LanguageModelQueryRouter(model, [KnowledgeBaseContentRetriever(
        kb, description="bicycle shop documents")])
    rag = AugmentedRag(RetrievalAugmentor(query_router=router), model)
    answer = rag.query("hi")
    assert answer.retrieval_skipped and answer.sources == []
    assert answer.answer == "Hello! How can I help?"
    assert model.calls[-1][-1].content == "hi"


@pytest.mark.parametrize("temperature", [0.3])
def test_temperature_and_tokens_reach_the_model(kb: VectorKnowledgeBase,
                                                temperature: float) -> None:
    seen: dict[str, object] = {}

    class Recording(ScriptedModel):
        def chat(self, messages, **kwargs):  # type: ignore[no-untyped-def,override]
            seen.update(kwargs)
            return super().chat(messages, **kwargs)

    rag = AugmentedRag(RetrievalAugmentor([KnowledgeBaseContentRetriever(kb)]), Recording(),
                       temperature=temperature, max_answer_tokens=42)
    rag.query("frame warranty")
    assert seen["temperature"] == temperature and seen["max_tokens"] == 42


def test_the_engine_answers_the_standalone_query(kb: VectorKnowledgeBase,
                                                tmp_path: Path) -> None:
    from ragloom.answering.engine import AnswerEngine

    model = ScriptedModel([reply_by_prompt(
        {"Standalone question": "How long is the frame warranty?"},
        "Frames carry a lifetime warranty [1].")])
    rag = _rag(kb, model, tmp_path)
    rag.engine = AnswerEngine(kb.embedder)
    rag.query("How long is the battery warranty?", session="g")
    answer = rag.query("And for the frame?", session="g")
    assert answer.queries == ("How long is the frame warranty?",)
    assert answer.origin in ("model", "quote", "extract")
    assert "lifetime" in answer.answer.lower()
    assert "How long is the frame warranty?" in model.calls[-1][-1].content
    events = list(rag.stream("frame warranty"))
    assert [type(e).__name__ for e in events] == ["SourcesEvent", "TokenEvent", "AnswerEvent"]

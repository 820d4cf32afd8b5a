from __future__ import annotations

from ragloom.chunking import LineSplitter
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.rag import NO_CONTEXT_ANSWER, NaiveRag, RagAnswer, augment_user_query
from ragloom.retrieval.options import SearchOptions
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.testing import HashingEmbedder, ScriptedModel
from ragloom.types import TextDocument


def build(model: ScriptedModel | None, *, grounded: bool = False) -> NaiveRag:
    kb = VectorKnowledgeBase(InMemoryVectorStore(), HashingEmbedder(64), LineSplitter(),
                             search=SearchOptions(mode="vector", top_k=2))
    kb.ingest([TextDocument.create("The unpaid lunch break is 30 minutes.\nParking is free.",
                                   source="policy.txt")])
    return NaiveRag(kb, model, grounded=grounded)


def test_model_sees_numbered_context_and_question() -> None:
    model = ScriptedModel(["It is 30 minutes [1]."])
    answer = build(model).query("How long is the unpaid lunch break?")
    assert answer.answer == "It is 30 minutes [1]."
    system, user = model.calls[0]
    assert system.role == "system" and "cite" in system.content.lower()
    assert "[1] The unpaid lunch break is 30 minutes." in user.content
    assert user.content.rstrip().endswith("Question: How long is the unpaid lunch break?")
    assert answer.sources[0].chunk.text == "The unpaid lunch break is 30 minutes."
    assert answer.to_dict()["sources"][0]["number"] == 1


def test_no_model_means_retrieval_only() -> None:
    answer = build(None).query("lunch break")
    assert answer.answer == "" and answer.sources


def test_nothing_found_is_said_without_asking_the_model() -> None:
    rag = build(ScriptedModel(["made up"]))
    rag.search_options = SearchOptions(mode="vector", score_threshold=0.99)
    answer = rag.query("quantum chromodynamics")
    assert answer.answer == NO_CONTEXT_ANSWER and not answer.sources
    assert rag.model.calls == []  # type: ignore[union-attr]


def test_streaming_ends_with_the_full_answer() -> None:
    pieces = list(build(ScriptedModel(["It is 30 minutes."])).stream("lunch?"))
    text = "".join(p for p in pieces if isinstance(p, str))
    assert text == "It is 30 minutes."
    assert pieces[-1].answer == "It is 30 minutes."  # type: ignore[union-attr]


def test_context_budget_leaves_out_whole_passages() -> None:
    doc = TextDocument.create("alpha " * 50 + "\n" + "beta " * 50, source="d")
    chunks = LineSplitter().split(doc)
    text = augment_user_query(chunks, "q?", max_tokens_in_context=80)
    assert "[1] alpha" in text and "[2]" not in text
    keyed = augment_user_query(chunks[:1], "q?", chunk_template="[{number}] ({source}) {text}",
                               metadata_keys=("source",))
    assert "(d)" in keyed


# ------------------------------------------------------------------ grounded (default)


def test_grounded_answers_carry_citations_and_quote() -> None:
    model = ScriptedModel(["The unpaid lunch break is 30 minutes."], name="hosted:scripted")
    rag = build(model, grounded=True)
    answer = rag.query("How long is the unpaid lunch break?")
    assert answer.origin == "model" and not answer.refused
    assert answer.answer.startswith("The unpaid lunch break is 30 minutes.")
    number = answer.citations[0]
    assert answer.sources[number - 1].chunk.text == "The unpaid lunch break is 30 minutes."
    assert answer.quote == "The unpaid lunch break is 30 minutes."
    data = answer.to_dict()
    assert data["quote"] == answer.quote and data["citations"] == [number]
    assert data["refused"] is False and data["origin"] == "model"


def test_a_small_local_model_is_not_asked_for_a_value_the_sentence_states() -> None:
    model = ScriptedModel(["It is 2 days."], name="local:scripted")  # a small local model
    answer = build(model, grounded=True).query("How long is the unpaid lunch break?")
    assert model.calls == [] and answer.origin == "extract"
    assert answer.answer.startswith("30 minutes [1]")


def test_grounded_is_the_default_and_an_invented_number_becomes_a_quote() -> None:
    kb = build(None).knowledge_base
    rag = NaiveRag(kb, ScriptedModel(["The lunch break is 2 days."]))
    answer = rag.query("How long is the unpaid lunch break?")
    # The invented number is replaced by the span of the supporting sentence, quoted.
    assert answer.origin == "extract" and answer.answer.startswith("30 minutes [1]")
    assert "30 minutes" in answer.answer and "2 days" not in answer.answer
    assert answer.quote == "The unpaid lunch break is 30 minutes."


def test_grounded_refusal_and_streaming() -> None:
    rag = build(ScriptedModel(["The password is hunter2."]), grounded=True)
    answer = rag.query("What is the wifi password of the office router?")
    assert answer.refused and answer.origin == "refusal" and not answer.citations
    assert rag.model.calls == []  # type: ignore[union-attr]
    pieces = list(build(ScriptedModel(["The unpaid lunch break is 30 minutes."]),
                        grounded=True).stream("How long is the unpaid lunch break?"))
    assert isinstance(pieces[-1], RagAnswer) and pieces[0] == pieces[-1].answer

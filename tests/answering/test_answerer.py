"""GroundedAnswerer: the model's answer when the evidence supports it, else a quote or a refusal."""

from __future__ import annotations

from ragloom.answering.answerer import NOT_FOUND, GroundedAnswerer, check_answer, clean_answer
from ragloom.answering.sentences import Sentence, SentenceRanker
from ragloom.testing import HashingEmbedder, ScriptedModel
from tests.answering.helpers import matches

HANDBOOK = ("Staff Handbook\nThe unpaid lunch break is 30 minutes. Staff also get two paid rest "
            "breaks of 10 minutes each. Holiday requests need two weeks' notice.")
PRICES = ("item: Flat white; size: large; price_gbp: 3.40\n"
          "item: Espresso; size: single; price_gbp: 2.20")


def answerer() -> GroundedAnswerer:
    return GroundedAnswerer(SentenceRanker(HashingEmbedder(256)))


def test_a_supported_answer_is_kept_with_its_citation_and_quote() -> None:
    model = ScriptedModel(["The unpaid lunch break is 30 minutes."])
    result = answerer().answer("How long is the unpaid lunch break?",
                               matches(PRICES, HANDBOOK), model)
    assert result.origin == "model" and not result.refused
    assert result.answer == "The unpaid lunch break is 30 minutes. [2]"
    assert result.citations == [2] and result.quote == "The unpaid lunch break is 30 minutes."
    _, user = model.calls[0]
    assert "The unpaid lunch break is 30 minutes." in user.content
    assert "Flat white" not in user.content  # only the best sentences reach the model
    assert user.content.rstrip().endswith("Question: How long is the unpaid lunch break?")


def test_a_changed_number_falls_back_to_quoting_the_evidence() -> None:
    for reply in ("The unpaid lunch break is 2 days.", "It is 10 minutes.",
                  "1000000000000000000000000000", "I don't know."):
        result = answerer().answer("How long is the unpaid lunch break?",
                                   matches(HANDBOOK), ScriptedModel([reply]))
        assert result.origin == "quote", reply
        assert result.answer == "The unpaid lunch break is 30 minutes. [1]"
        assert result.unsupported


def test_weak_evidence_is_refused_without_asking_the_model() -> None:
    model = ScriptedModel(["The pension contribution is 5%."])
    result = answerer().answer("How much does the company contribute to the pension scheme?",
                               matches(HANDBOOK, PRICES), model)
    assert result.refused and result.answer == NOT_FOUND and result.origin == "refusal"
    assert model.calls == [] and result.citations == []


def test_an_answer_of_the_wrong_kind_is_not_trusted() -> None:
    evidence = [Sentence("On 12-month contracts the installation fee is £60.", 1, 0)]
    question = "How much does installation cost on a 12-month contract?"
    assert check_answer("12.", question, evidence)
    assert check_answer("The installation fee is £60.", question, evidence) == []
    assert check_answer("It is a lovely shiny purple gadget.", question, evidence)


def test_generated_text_is_cleaned() -> None:
    assert clean_answer("The answer is: 30 minutes [1].\n\nQuestion: next", 300) == "30 minutes."
    assert clean_answer("x" * 500, 100).endswith("...")

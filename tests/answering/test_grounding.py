"""Claims, support and refusals: the checks every grounded answer goes through."""

from __future__ import annotations

from ragloom.answering.evidence import expected_kind, has_kind, missing_terms
from ragloom.answering.grounding import (
    cited_numbers,
    claims_in,
    is_refusal,
    number_value,
    strip_citations,
    unsupported_claims,
)

PASSAGE = ("Full-time staff receive 25 days of paid holiday a year. Requests go to Priya Shah "
           "at least two weeks in advance. A large flat white costs 3.40.")


def test_numbers_compare_by_value() -> None:
    assert number_value("3.40") == number_value("3.4") == "3.4"
    assert number_value("1,200") == "1200" and number_value("9:30") == "9:30"


def test_a_changed_number_is_unsupported_and_a_copied_one_is_not() -> None:
    assert unsupported_claims("Staff get 25 days [1].", [PASSAGE]) == []
    assert unsupported_claims("It costs 3.4.", [PASSAGE]) == []
    missing = unsupported_claims("Staff get 2 days of holiday.", [PASSAGE])
    assert [c.text for c in missing] == ["2"]
    runaway = unsupported_claims("The notice is 10000000000 weeks.", [PASSAGE])
    assert [c.kind for c in runaway] == ["number"]


def test_invented_names_are_unsupported_but_names_from_the_question_are_not() -> None:
    assert unsupported_claims("Ask Priya Shah.", [PASSAGE]) == []
    assert [c.text for c in unsupported_claims("Ask John Carter.", [PASSAGE])] == ["John Carter"]
    assert unsupported_claims("Lantern Loom staff get 25 days.", [PASSAGE],
                              question="How much holiday do Lantern Loom staff get?") == []


def test_citation_markers_are_not_claims() -> None:
    assert claims_in("It is 25 days [1, 2].") == [claims_in("25")[0]]
    assert cited_numbers("Yes [2]. Also [1, 2] and [3].") == [2, 1, 3]
    assert strip_citations("It is 25 days [1].") == "It is 25 days."


def test_refusals_are_recognised() -> None:
    assert is_refusal("I could not find the answer in the documents.")
    assert is_refusal("The context does not mention a password.")
    assert is_refusal("")
    assert not is_refusal("The unpaid lunch break is 30 minutes.")


def test_question_kinds_and_key_terms() -> None:
    assert expected_kind("How much does a large flat white cost?") == "money"
    assert expected_kind("What time should I arrive?") == "time"
    assert expected_kind("How often should the filter be cleaned?") == "frequency"
    assert expected_kind("Who keeps the waiting list?") == "person"
    assert expected_kind("Where is the password?") is None
    assert has_kind("It costs £60.", "money") and not has_kind("On 12-month contracts", "money")
    assert has_kind("Clean it once a week.", "frequency")
    assert missing_terms("How much is the company pension contribution?", [PASSAGE]) == [
        "company", "pension", "contribution"]
    assert missing_terms("How much does a large flat white cost?", [PASSAGE]) == []

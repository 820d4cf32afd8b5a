"""The engine's last check: no answer, of any kind, states a number or a name its
cited passages do not hold."""

from __future__ import annotations

import pytest

from ragloom.answering.engine import AnswerEngine
from ragloom.answering.grounding import unsupported_claims
from ragloom.answering.result import EngineAnswer
from ragloom.answering.settings import GenerationSettings
from ragloom.answering.verify import cited_texts, verified
from ragloom.testing import HashingEmbedder
from ragloom.types import QueryMatch
from tests.answering.helpers import matches

VENUES = "venue: Oakfield Hall; capacity: 120; hire per hour: £18.00"
SCOUTS = "venue: Harbour Scout Hut; capacity: 35; hire per hour: £9.50"
FEES = "A missed appointment costs £25. Cancel at least 24 hours ahead."


def answer(text: str, sources: list[QueryMatch], *, kind: str = "list",
           citations: list[int] | None = None) -> EngineAnswer:
    return EngineAnswer(answer=text, sources=sources, kind=kind, strategy=kind,
                        citations=citations or [], origin="extract")


def test_an_answer_its_passages_back_is_kept_as_it_is() -> None:
    sources = matches(VENUES, SCOUTS)
    given = answer("- Oakfield Hall: 120 [1]\n- Harbour Scout Hut: 35 [2]", sources)
    assert verified(given, "how many people fit in each venue", "strict") is given


def test_a_line_whose_number_its_passage_lacks_is_dropped_and_the_rest_kept() -> None:
    sources = matches(VENUES, SCOUTS)
    # The second item cites the first passage, which does not hold 35.
    given = answer("- Oakfield Hall: 120 [1]\n- Harbour Scout Hut: 35 [1]", sources)
    result = verified(given, "how many people fit in each venue", "strict")
    assert not result.refused
    assert result.answer == "- Oakfield Hall: 120 [1]"
    assert result.citations == [1]
    assert not unsupported_claims(result.answer, cited_texts(result.citations, result.answer,
                                                             sources))


def test_a_one_line_answer_with_an_invented_number_becomes_a_refusal_that_says_why() -> None:
    sources = matches(FEES)
    result = verified(answer("£30 [1]", sources, kind="number"), "missed appointment fee",
                      "strict")
    assert result.refused
    assert "30" in result.reason and "cited" in result.reason
    assert result.kind == "number"


def test_a_name_no_cited_passage_holds_is_refused_too() -> None:
    sources = matches(FEES)
    result = verified(answer("Dr Patel charges £25 [1]", sources, kind="lookup"),
                      "missed appointment fee", "strict")
    assert result.refused and "Patel" in result.reason


def test_check_mode_keeps_the_answer_and_flags_the_claim() -> None:
    sources = matches(FEES)
    result = verified(answer("£30 [1]", sources, kind="number"), "missed appointment fee",
                      "check")
    assert not result.refused and result.answer == "£30 [1]"
    assert result.unsupported == ["30"]
    assert verified(answer("£30 [1]", sources), "fee", "off").answer == "£30 [1]"


def test_a_difference_shown_with_its_arithmetic_is_supported() -> None:
    sources = matches(VENUES, SCOUTS)
    text = "Oakfield Hall: £18.00 [1]; Harbour Scout Hut: £9.50 [2]. Difference: £8.50"
    assert verified(answer(text, sources, kind="comparison"), "which is cheaper",
                    "strict").answer == text


def test_citations_given_as_a_list_choose_the_passages_checked() -> None:
    sources = matches(VENUES, FEES)
    # No markers in the text: the citation list says the answer rests on passage 2.
    result = verified(answer("120 people", sources, kind="number", citations=[2]),
                      "capacity", "strict")
    assert result.refused
    kept = verified(answer("120 people", sources, kind="number", citations=[1]),
                    "capacity", "strict")
    assert not kept.refused


def test_the_engine_verifies_what_any_strategy_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    import ragloom.answering.engine as engine_module

    sources = matches(VENUES, SCOUTS)

    def careless_summary(question: object, passages: list[QueryMatch], *args: object,
                         **kwargs: object) -> EngineAnswer:
        return answer("- Oakfield Hall seats 120 [1]\n- It opened in 1987 [1]", passages,
                      kind="summary")

    monkeypatch.setattr(engine_module, "summarise", careless_summary)
    engine = AnswerEngine(HashingEmbedder())
    strict = engine.answer("summarise the venues", sources, None)
    assert strict.kind == "summary" and not strict.refused
    assert strict.answer == "- Oakfield Hall seats 120 [1]"
    checked = engine.answer("summarise the venues", sources, None,
                            settings=GenerationSettings(grounding="check"))
    assert "1987" in checked.answer and checked.unsupported == ["1987"]

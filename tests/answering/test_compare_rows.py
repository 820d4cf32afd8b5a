"""Comparisons over table rows: the period a column names, the row that names a side
first, and a change stated inside one sentence."""

from __future__ import annotations

import pytest

from ragloom.answering.compare import _split_side
from ragloom.answering.grounding import unsupported_claims
from ragloom.answering.verify import cited_texts
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.types import TextDocument
from tests.answering.helpers import ask, knowledge_base

DOCS = {
    "fitness-club.md": """# Fernside fitness club memberships

| Membership | Monthly (direct debit) | Annual (paid in advance) | What it includes |
|---|---|---|---|
| Adult off-peak | £29.00 | £290 | Gym and pool before 4pm |
| Adult all inclusive | £45.00 | £450 | Gym, pool and all classes |
| Family | £99.00 | £990 | Everything in adult all inclusive for 2 adults and 3 children |
""",
    "choir-agm.md": """# Hillside choir AGM

The year in numbers

Concerts: 23 (17 the year before)

Members: 64
""",
}


@pytest.fixture(scope="module")
def kb() -> VectorKnowledgeBase:
    return knowledge_base(DOCS)


def test_a_side_ending_in_a_period_compares_that_periods_column() -> None:
    assert _split_side("all inclusive a month") == ("all inclusive", ["monthly"])
    assert _split_side("off peak per year") == ("off peak", ["annual"])
    assert _split_side("kx200") == ("kx200", [])


def test_a_monthly_comparison_reads_the_monthly_column_of_the_rows_named(
        kb: VectorKnowledgeBase) -> None:
    result = ask(kb, "how much cheaper is off peak than all inclusive a month")
    assert result.kind == "comparison" and not result.refused
    # The monthly prices (not the annual ones), and the all inclusive row, not the
    # family row that mentions "all inclusive" in its last column.
    assert "£29.00" in result.answer and "£45.00" in result.answer
    assert "£99.00" not in result.answer and "£290" not in result.answer
    assert "£16" in result.answer


def test_how_many_more_than_the_year_before_shows_its_arithmetic(
        kb: VectorKnowledgeBase) -> None:
    result = ask(kb, "how many more concerts did the choir give than the year before")
    assert not result.refused
    assert result.answer.startswith("6 (23 \u2212 17)")
    cited = cited_texts(result.citations, result.answer, result.sources)
    assert not unsupported_claims(result.answer, cited, question="concerts")


def test_a_bridge_with_a_model_code_leads_to_the_document_named_after_it() -> None:
    from ragloom.answering.twostep import _titled_by
    from ragloom.types import QueryMatch, TextChunk

    def passage(source: str) -> QueryMatch:
        document = TextDocument.create("Programme: Cotton; Max spin: 1400 rpm", source=source)
        chunk = TextChunk.create(document, document.text, index=0, start=0,
                                 end=len(document.text))
        return QueryMatch(chunk=chunk, score=1.0)

    assert _titled_by(passage("calder-wd814-washing-machine-manual.pdf"), "Calder WD814")
    # Another model's manual, or a bridge with no code, is not enough.
    assert not _titled_by(passage("calder-wd712-washing-machine.md"), "Calder WD814")
    assert not _titled_by(passage("calder-washing-machines.md"), "Calder")


def test_the_second_side_takes_the_row_labelled_like_the_first_side_s() -> None:
    from ragloom.answering.facts import _alike, row_label

    assert row_label("Ticket: Adult swim; Price: £5.40") == ["adult", "swim"]
    assert row_label("An adult swim costs £5.40.") == []
    like = row_label("Ticket: Adult swim; Price: £5.40")
    adult = _alike("Ticket: Adult; Price: £6.50", like)
    family = _alike("Ticket: Family (2 adults and 2 juniors); Price: £18.00", like)
    season = _alike("Ticket: Junior season ticket; Price: £55", like)
    assert adult > family > season == 0.0
    kb = knowledge_base({
        "fernmouth-pool.md": "# Fernmouth Leisure Pool\n\nPrices\n\n| Ticket | Price |\n|---|---|\n"
                             "| Adult swim | £5.40 |\n| Junior swim | £3.20 |\n",
        "porthkellis-lido.md": "# Porthkellis Lido\n\nSwim prices\n\n"
                               "| Ticket | Price |\n|---|---|\n"
                               "| Junior season ticket | £55 |\n"
                               "| Family (2 adults and 2 juniors) | £18.00 |\n"
                               "| Adult | £6.50 |\n",
    })
    answer = ask(kb, "is a swim cheaper at fernmouth or the lido")
    assert not answer.refused
    assert "£6.50" in answer.answer and "£5.40" in answer.answer
    assert "£1.10" in answer.answer  # pence keep two digits


def test_a_difference_of_prices_in_pence_keeps_two_digits() -> None:
    from ragloom.answering.values import difference, first_figure

    def diff(a: str, b: str) -> str:
        first, second = first_figure(a, ""), first_figure(b, "")
        assert first is not None and second is not None
        return difference(first, second)

    assert diff("£6.50", "£5.40") == "£1.10"
    assert diff("£1,540", "£745") == "£795"
    assert diff("3.5 kg", "1.25 kg") == "2.25 kg"

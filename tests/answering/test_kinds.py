"""Comparisons, lists and two-step bridges on small hand-made documents."""

from __future__ import annotations

import pytest

from ragloom.answering.facts import _value
from ragloom.answering.grounding import unsupported_claims
from ragloom.answering.question import classify
from ragloom.answering.twostep import names_bridge
from ragloom.answering.values import label_unit, with_label_unit
from ragloom.knowledge_base import VectorKnowledgeBase
from tests.answering.helpers import ask, knowledge_base

DOCS = {
    "northfield-bins.md": """# Northfield council bins

## Garden waste

Garden waste collection is a paid subscription. It costs £48 a year for one bin.

## Bulky waste

A bulky waste collection costs £25 for up to three items.
""",
    "southbury-bins.md": """# Southbury council bins

## Charges

- Garden waste subscription: £55 a year per bin.
- Bulky waste: £30 for up to four items.
""",
    "halls.md": """# Community halls

| hall | area | hire per hour | kitchen |
|---|---|---|---|
| Mill Hall | Millbrook | £18.00 | yes |
| Scout Hut | Quayside | £9.50 | no |
| Cricket Pavilion | Elmside | £20.00 | yes |
""",
    "library-charges.md": """# Library charges

| Service | Charge |
|---|---|
| Printing, black and white | £0.10 per page |
| Printing, colour | £0.50 per page |
""",
    "roof-minutes.md": """# Committee minutes

Three quotes were received: Slate Roofing £18,400, Pennant Building £21,950 and
Ridge Roofs £16,200. The committee accepted the Slate Roofing quote.
""",
    "zx9-kettle.md": """# Zephyr ZX9 kettle manual

## Specifications

| Feature | ZX9 |
|---|---|
| Capacity | 1.7 litres |
| Colours | brushed steel, slate grey, cream |
""",
    "zx8-kettle.md": """# Zephyr ZX8 kettle guide

The ZX9 replaces it.

## Specifications

| Feature | ZX8 |
|---|---|
| Colours | white, black |
""",
    "nova-7-laptop.md": """Nova 7 laptop

Ports

2 x USB-C
1 x HDMI 2.1
microSD card reader
3.5 mm headphone jack

In the box

Charger and cable.
""",
}


@pytest.fixture(scope="module")
def kb() -> VectorKnowledgeBase:
    return knowledge_base(DOCS)


def test_compared_to_with_a_comparative_is_a_comparison() -> None:
    assert classify("how much quicker does the zx9 boil a litre compared to the zx8") == \
        "comparison"
    assert classify("how long does it take compared to yesterday") == "lookup"


def test_a_column_label_gives_its_values_their_sign_or_unit() -> None:
    record = "sku: A1; model: City 3; price_gbp: 649; weight_kg: 11.2; gears: 9"
    assert with_label_unit(record, "649") == "\u00a3649"
    assert with_label_unit(record, "11.2") == "11.2 kg"
    assert with_label_unit(record, "9") == "9"
    assert label_unit("annual charge 2025/26 (\u00a3)") == ("\u00a3", "")
    assert label_unit("Weight (empty)") == ("", "")


def test_a_one_cell_line_gives_its_value_not_the_figure_in_its_label() -> None:
    line = "Boil time (1 litre): 2 minutes 30 seconds"
    assert _value(line, "zx9", ["time", "boil"], False) == "2 minutes 30 seconds"
    assert _value("Battery: 72 Wh, up to 14 hours of video", "nova 7", ["battery"],
                  False) == "72 Wh"


def test_a_number_with_a_thousands_comma_is_read_whole(kb: VectorKnowledgeBase) -> None:
    answer = ask(kb, "how much cheaper was the ridge roofs quote than slate")
    assert answer.kind == "comparison" and not answer.refused
    assert "\u00a316,200" in answer.answer and "\u00a318,400" in answer.answer
    assert "\u00a32,200" in answer.answer
    assert not unsupported_claims(answer.answer, [m.chunk.text for m in answer.sources])


def test_each_side_comes_from_a_passage_about_the_thing_measured(kb: VectorKnowledgeBase
                                                                 ) -> None:
    answer = ask(kb, "how much more does garden waste cost in southbury than in northfield")
    assert answer.kind == "comparison" and not answer.refused
    assert "\u00a355" in answer.answer and "\u00a348" in answer.answer
    assert "\u00a37" in answer.answer and "\u00a325" not in answer.answer


def test_a_superlative_reads_the_table_the_question_names(kb: VectorKnowledgeBase) -> None:
    answer = ask(kb, "cheapest hall to hire")
    assert answer.kind == "comparison" and not answer.refused
    assert answer.answer.startswith("Scout Hut: \u00a39.50")


def test_a_list_reads_a_two_column_row_of_the_document_named_for_the_model(
        kb: VectorKnowledgeBase) -> None:
    answer = ask(kb, "what colours does the zx9 come in")
    assert answer.kind == "list" and not answer.refused
    assert [p["text"] for p in answer.points] == ["brushed steel", "slate grey", "cream"]
    other = ask(kb, "what colours does the zx8 come in")
    assert "brushed steel" not in other.answer


def test_short_lines_under_a_heading_are_all_items(kb: VectorKnowledgeBase) -> None:
    answer = ask(kb, "what ports does the nova 7 have")
    assert answer.kind == "list" and not answer.refused
    texts = [p["text"] for p in answer.points]
    assert "microSD card reader" in texts and "3.5 mm headphone jack" in texts
    assert "Charger and cable." not in texts


def test_a_bridge_is_met_as_itself_not_inside_a_longer_name() -> None:
    assert names_bridge("Area: Millfield; Day: Tuesday", "Millfield")
    assert not names_bridge("Area: Millfield Green; Day: Thursday", "Millfield")
    assert names_bridge("In Millfield, bins go out on Tuesday.", "Millfield")
    assert not names_bridge("Bins in Old Millfield go out on Monday.", "Millfield")


def test_numbered_section_titles_are_not_the_steps_of_a_procedure() -> None:
    from ragloom.answering.steps import _steps

    manual = ("4. Cleaning the filter\n\nRinse the filter once a week.\n\n5. Child lock\n\n"
              "To switch the child lock on, hold Start and Delay for 3 seconds. A key "
              "symbol shows while the lock is on.\n\n6. Error codes\n\nE1: no water.")
    start = 3  # the sentence "To switch the child lock on, ..."
    steps = _steps(manual, start, ["switch", "child", "lock"])
    assert steps[0].startswith("To switch the child lock on")
    assert not any(s.startswith(("5. Child lock", "6. Error codes")) for s in steps)
    listed = "1. Fill the kettle\n2. Boil it twice\n3. Pour it away"
    assert _steps(listed, 0) == ["1. Fill the kettle", "2. Boil it twice", "3. Pour it away"]


def test_a_yes_no_comparison_says_yes_or_no_with_the_question_s_word(
        kb: VectorKnowledgeBase) -> None:
    cheaper = ask(kb, "is the scout hut cheaper than the cricket pavilion")
    assert cheaper.kind == "comparison" and not cheaper.refused
    assert cheaper.answer.startswith("Yes, scout hut is cheaper than cricket pavilion.")
    assert "\u00a39.50" in cheaper.answer and "\u00a320.00" in cheaper.answer
    dearer = ask(kb, "is the scout hut more expensive than the cricket pavilion")
    assert dearer.answer.startswith("No, scout hut is not more expensive than")
    either = ask(kb, "is hire cheaper at the scout hut or the cricket pavilion")
    assert not either.answer.startswith(("Yes", "No"))  # "A or B" is not a yes/no


def test_more_adjective_than_splits_the_two_sides() -> None:
    from ragloom.answering.compare import _comparative, sides_of

    assert sides_of("is the aero sl more expensive than the trailhawk 29") == (
        "aero sl", "trailhawk 29")
    assert _comparative("is the aero sl more expensive than the trailhawk 29") == \
        "more expensive"
    assert _comparative("is the orbis 14 thinner than the orbis 13") == "thinner"
    assert classify("is the orbis 14 thinner than the orbis 13") == "comparison"


def test_compounds_typed_as_one_word_are_held() -> None:
    from ragloom.answering.grounding import compound_words
    from ragloom.answering.sentences import lexical_scores

    assert "wifi" in compound_words("Wireless: Wi-Fi 7, Bluetooth 5.4")
    scores = lexical_scores("orbis wifi", ["Wireless: Wi-Fi 7", "Ports: 2 x USB-C"])
    assert scores[0] > scores[1]


def test_a_why_question_asks_for_a_reason_not_a_comparison() -> None:
    assert classify("why did the south miss its target") == "lookup"
    assert classify("why didnt they go with the cheapest roofer") == "lookup"
    assert classify("did the south hit its target") == "comparison"


def test_a_price_column_of_four_digits_is_a_price_not_a_year() -> None:
    from ragloom.answering.facts import _PRICE, _fits_measure, _value

    row = ("sku: PW-ASL; model: Aero SL; type: road bike; price_gbp: 1899; weight_kg: 8.1; "
           "gears: 22")
    assert _value(row, "aero sl", list(_PRICE), True, "trailhawk 29") == "1899"
    # A weight is not what "more expensive" compares, and a price is not a weight.
    assert not _fits_measure("8.1 kg", ["price"])
    assert _fits_measure("£1899", ["price"])
    assert not _fits_measure("£1899", ["weight"])
    assert _fits_measure("8.1 kg", ["weight"])


def test_prose_steps_are_the_rest_of_the_best_sentence_s_paragraph() -> None:
    from ragloom.answering.steps import _steps

    manual = ("Care and cleaning\n\nClean the drain pump filter every 2 months. Switch off "
              "and unplug the machine.\nOpen the small flap at the front. Unscrew the filter "
              "anticlockwise and rinse it.\n\nRun a Drum clean programme once a month.")
    steps = _steps(manual, 1, ["clean", "filter"])
    assert steps[0] == "Clean the drain pump filter every 2 months."
    assert "Switch off and unplug the machine." in steps
    assert steps[-1] == "Unscrew the filter anticlockwise and rinse it."
    assert not any("Drum clean" in s for s in steps)  # the next paragraph is another topic


def test_a_passage_starting_inside_a_table_reads_its_rows_with_the_header() -> None:
    from ragloom.answering.sentences import split_sentences
    from ragloom.answering.tables import with_table_header
    from ragloom.types import QueryMatch, TextChunk

    chunk = TextChunk(id="c2", document_id="d", index=1, start=90, end=140,
                      text="Wheal Rose | 8 | 4\nChapel Loft | 2 | 1",
                      metadata={"source": "cottages.html",
                                "table_header": "Cottage | Sleeps | Bedrooms"})
    match = with_table_header(QueryMatch(chunk=chunk, score=0.5))
    assert "Cottage: Wheal Rose; Sleeps: 8; Bedrooms: 4" in split_sentences(match.chunk.text)
    plain = QueryMatch(chunk=TextChunk(id="c3", document_id="d", index=2, start=0, end=5,
                                       text="Hello", metadata={}), score=0.5)
    assert with_table_header(plain) is plain


def test_which_with_a_plural_noun_is_a_list_and_a_negated_flag_keeps_the_no_rows() -> None:
    from ragloom.answering.gather import list_items
    from ragloom.answering.question import read_question
    from ragloom.answering.sentences import SentenceRanker
    from tests.answering.helpers import matches

    assert read_question("which plants at trelowen arent safe for pets").kind == "list"
    assert read_question("which zipmo goes further on a charge").kind != "list"
    rows = matches("name: Lavender; pet_safe: true\nname: Foxglove; pet_safe: false\n"
                   "name: Hosta; pet_safe: false")
    question = read_question("which plants at trelowen arent safe for pets")
    listed = list_items(question, rows, None, SentenceRanker(None), limit=10)
    assert not listed.refused
    assert "Foxglove" in listed.answer and "Hosta" in listed.answer
    assert "Lavender" not in listed.answer

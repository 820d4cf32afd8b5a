"""The answer span: the value asked for, inside the supporting sentence."""

from __future__ import annotations

import pytest

from ragloom.answering.spans import answer_span, value_kind


@pytest.mark.parametrize(("question", "sentence", "span"), [
    ("How much is the staff discount on bicycles?",
     "Staff receive a 30% discount on bicycles and a 40% discount on parts.", "30%"),
    ("When does the shop open?", "The shop is open from 9:00 to 18:00, Monday to Saturday.",
     "9:00 to 18:00"),
    ("tip opening hours in winter", "Winter (1 October to 31 March): 8am to 4pm every day.",
     "8am to 4pm"),
    ("what time does the bus leave", "The bus leaves at 08:15 from the station.", "08:15"),
    ("how long is the lunch break", "Lunch is 30 minutes, taken between 12:00 and 14:30.",
     "30 minutes"),
])
def test_the_span_is_the_whole_value_asked_for(question: str, sentence: str,
                                               span: str) -> None:
    assert answer_span(question, sentence) == span


def test_when_something_opens_or_closes_asks_for_a_time() -> None:
    assert value_kind("When does the shop open?") == "time"
    assert value_kind("when does millfield library shut on saturday") == "time"
    assert value_kind("when was the treaty signed") == "date"


def test_the_first_or_last_of_several_times_is_the_earliest_or_latest() -> None:
    row = ("stop: Quayside; journey 1: 07:10; journey 2: 07:58; journey 3: 12:40; "
           "journey 4: 17:51")
    assert answer_span("what time is the last bus from quayside", row) == "17:51"
    assert answer_span("what time is the first bus from quayside", row) == "07:10"
    assert answer_span("when does the last train leave",
                       "Trains leave at 9am, 1pm and 6pm.") == "6pm"


@pytest.mark.parametrize(("question", "sentence", "span"), [
    # A length of time is asked: never an amount of money, never a bare count.
    ("how long does the e bike take to charge",
     "The shelter costs £4,500 and charging takes 4.5 hours.", "4.5 hours"),
    ("how long does a repeat prescription take",
     "Please allow 3 working days for repeat prescriptions.", "3 working days"),
    ("how much notice do i need to give", "You must give one month of notice in writing.",
     "one month"),
    ("how many days in advance can members book", "Members can book up to 7 days ahead.",
     "up to 7 days"),
    ("how long does eco 40-60 take",
     "Programme: Eco 40-60; Max load: 8 kg; Time: 3 h 48 min", "3 h 48 min"),
    ("how long is the cable", "The cable is 1.5 m long.", "1.5 m"),
    # A price is money or a bare number, never "30 days".
    ("price of the 30 gig plan", "name: Go 30GB; data_gb: 30; monthly_price: 10.0", "10.0"),
    # A digit inside a word ("Q3") is not a number.
    ("How many new drivers were hired in Q3?", "40 new drivers hired in Q3", "40"),
])
def test_the_span_is_of_the_kind_of_value_asked(question: str, sentence: str,
                                                span: str) -> None:
    assert answer_span(question, sentence) == span


@pytest.mark.parametrize(("question", "sentence"), [
    ("how long does the e bike take to charge",
     "The committee agreed a 12-space bike shelter at a cost of no more than £4,500."),
    ("price of the 30 gig plan", "Rolling plans can change price with 30 days' notice."),
    ("how long does eco 40-60 take", "Energy use: 52 kWh per 100 cycles (Eco 40-60)"),
    ("how many days ahead can members book",
     "Membership: Adult; Annual (paid in advance): £310; classes before 4pm"),
])
def test_a_sentence_without_that_kind_of_value_has_no_span(question: str, sentence: str) -> None:
    assert answer_span(question, sentence) == ""
    assert value_kind(question) in {"duration", "money"}


def test_a_bare_count_in_a_row_is_a_price_only_under_a_price_or_named_column() -> None:
    cottage = ("Cottage: Chapel Loft; Sleeps: 2; Bedrooms: 1; Parking: none on site: park "
               "in Harbour Road car park")
    assert answer_span("how much is a weeks parking permit at chapel loft", cottage) == ""
    assert answer_span("how much salt does it hold", "Item: dishwasher; salt: 2; rinse: 1") \
        == "2"
    assert answer_span("how much is the s9", "model: S9; weight: 17 kg; price_gbp: 499") \
        == "499"
    # prose keeps its counts: "how much are they" -> "3 for 10"
    assert answer_span("how much is a bag of compost", "Compost bags are 3 for 10.") != ""


def test_a_question_asking_how_fast_something_is_done_is_answered_by_a_duration() -> None:
    from ragloom.answering.spans import measure_cue, states_measure

    cue = measure_cue("how fast do they fix emergency repairs")
    assert cue is not None and cue[0] == {"fast"}
    assert states_measure(cue[1], "Emergency repairs are fixed within 4 hours.")
    soon = measure_cue("how soon will i get my refund")
    assert soon is not None and states_measure(soon[1], "Refunds are paid in 5 working days.")
    speed = measure_cue("how fast does the s9 go")  # a vehicle's speed stays a speed
    assert speed is not None and not states_measure(speed[1], "It charges in 6 hours.")
    assert states_measure(speed[1], "Top speed: 25 km/h")

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

"""Supporting sentences: splitting passages of every format and ranking them."""

from __future__ import annotations

from ragloom.answering.sentences import SentenceRanker, is_heading, split_sentences
from ragloom.testing import HashingEmbedder
from ragloom.types import QueryMatch, TextChunk, TextDocument


def match(text: str, source: str = "doc.txt", score: float = 1.0) -> QueryMatch:
    document = TextDocument.create(text, source=source)
    chunk = TextChunk.create(document, text, index=0, start=0, end=len(text))
    return QueryMatch(chunk=chunk, score=score)


def test_wrapped_pdf_lines_are_joined_and_table_rows_kept_apart() -> None:
    pdf = ("Flights. Book economy class for flights shorter than 6 hours. Premium economy may be\n"
           "booked for flights of 6 hours or more.")
    assert split_sentences(pdf) == [
        "Flights. Book economy class for flights shorter than 6 hours.",
        "Premium economy may be booked for flights of 6 hours or more."]
    rows = ("item: Cinnamon bun; size: one; price_gbp: 2.75; allergens: gluten; milk; eggs\n"
            "item: Lentil soup; size: bowl; price_gbp: 4.80; allergens: celery")
    assert len(split_sentences(rows)) == 2
    slide = "Revenue\nQ3 revenue reached 12.4 million euros\nUp 8% on Q2"
    assert split_sentences(slide) == ["Revenue", "Q3 revenue reached 12.4 million euros",
                                      "Up 8% on Q2"]
    assert split_sentences("## Holidays\n\n- Staff get **25 days**.") == [
        "Holidays", "Staff get 25 days."]
    assert split_sentences("6. Error codes\n\nE4: water leak detected.") == [
        "Error codes", "E4: water leak detected."]


def test_headings_are_recognised() -> None:
    assert is_heading("Peak Form Gym — Membership Terms")
    assert not is_heading("Clean the filter once a week.")
    assert not is_heading("item: Espresso; size: single; price_gbp: 2.20")


def test_the_sentence_that_answers_ranks_first_with_its_passage_number() -> None:
    matches = [
        match("Parking is free for staff. The canteen opens at 8:00.", "a.txt"),
        match("Lunch Policy\nThe unpaid lunch break is 30 minutes. Breaks are agreed with the "
              "shift lead.", "b.txt", score=0.5),
    ]
    ranked = SentenceRanker(HashingEmbedder(256)).rank("How long is the unpaid lunch break?",
                                                       matches)
    assert ranked[0].text == "The unpaid lunch break is 30 minutes."
    assert ranked[0].number == 2 and ranked[0].source.endswith("b.txt")
    assert ranked[0].lexical > 0.5 and ranked[0].score > ranked[1].score
    words_only = SentenceRanker(None).rank("How long is the unpaid lunch break?", matches)
    assert words_only[0].text == "The unpaid lunch break is 30 minutes."

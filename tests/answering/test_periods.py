"""Editions of a document: an undated question is answered from the newest one, and a
table's header may name a year."""

from __future__ import annotations

from dataclasses import replace

from ragloom.answering.gate import on_subject
from ragloom.answering.periods import newest_first
from ragloom.answering.question import read_question
from ragloom.answering.sentences import Sentence, SentenceRanker
from ragloom.answering.tables import with_records
from ragloom.testing import HashingEmbedder
from ragloom.types import QueryMatch, TextChunk, TextDocument

OLD = "band: D; annual charge 2025/26 (£): 2,140.20; year: 2025/26"
NEW = ("Band | Property value (1 April 1991) | Annual charge 2026/27\n"
       "A | up to £40,000 | £1,498.20\nD | £68,001 to £88,000 | £2,247.30")


def match(text: str, source: str, score: float = 0.9) -> QueryMatch:
    document = TextDocument.create(text, source=source)
    chunk = TextChunk.create(document, text, index=0, start=0, end=len(text))
    return QueryMatch(chunk=chunk, score=score)


def test_a_header_that_names_a_year_is_still_the_header() -> None:
    rows = with_records(NEW).splitlines()
    assert rows[1] == ("Band: D; Property value (1 April 1991): £68,001 to £88,000; "
                       "Annual charge 2026/27: £2,247.30")
    assert not any(row.startswith("Band; ") for row in rows)
    # A first row of values is not a header.
    assert with_records("A | £1 | 2\nB | £3 | 4") == "A; £1; 2\nB; £3; 4"


def test_a_subject_named_only_by_a_table_header_and_row_is_on_subject() -> None:
    sources = [match(OLD, "council-tax-2025-26.csv"), match(NEW, "council-tax-2026-27.html")]
    question = read_question("band d council tax")
    evidence = SentenceRanker(HashingEmbedder()).rank(question.text, sources)
    kept, missing = on_subject(question, evidence, sources)
    assert not missing and {s.number for s in kept} == {1, 2}


def test_an_undated_question_is_answered_from_the_newest_edition() -> None:
    sources = [match(OLD, "council-tax-2025-26.csv"), match(NEW, "council-tax-2026-27.html")]
    old = Sentence(text=OLD, number=1, position=0, source="council-tax-2025-26.csv",
                   score=1.0)
    new = Sentence(text="Band: D; Annual charge 2026/27: £2,247.30", number=2, position=1,
                   source="council-tax-2026-27.html", score=0.95)
    assert newest_first("band d council tax", [old, new], sources) == [new, old]
    # A question that names a year, or looks back, keeps its order.
    assert newest_first("band d council tax in 2025/26", [old, new], sources)[0] is old
    assert newest_first("band d council tax last year", [old, new], sources)[0] is old
    # A far weaker sentence of the newer edition does not jump ahead.
    weak = replace(new, score=0.5)
    assert newest_first("band d council tax", [old, weak], sources)[0] is old


def test_documents_of_different_series_are_not_editions_of_each_other() -> None:
    sources = [match(OLD, "council-tax-2025-26.csv"),
               match("The 2027 ferry fares are here.", "ferry-fares-2027.md")]
    old = Sentence(text=OLD, number=1, position=0, source="council-tax-2025-26.csv",
                   score=1.0)
    other = Sentence(text="The 2027 ferry fares are here.", number=2, position=0,
                     source="ferry-fares-2027.md", score=0.99)
    assert newest_first("band d council tax", [old, other], sources)[0] is old

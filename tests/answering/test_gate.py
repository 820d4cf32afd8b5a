"""The gate's signals and the sentence ranker read a passage with its document's names."""

from __future__ import annotations

import re

from ragloom.answering.gate import idf_of, measure, on_subject
from ragloom.answering.question import read_question
from ragloom.answering.sentences import SentenceRanker, document_names, lexical_scores
from ragloom.testing import HashingEmbedder
from ragloom.types import QueryMatch, TextChunk, TextDocument


def match(text: str, source: str, score: float = 0.9, title: str = "") -> QueryMatch:
    metadata = {"title": title} if title else {}
    document = TextDocument.create(text, source=source, metadata=metadata)
    chunk = TextChunk.create(document, text, index=0, start=0, end=len(text))
    return QueryMatch(chunk=chunk, score=score)


REVIEW = ("Northstar Home Stores - Sales Review 2025\nBoard meeting, 29 January 2026\n"
          "Presented by Helen Marsh, Finance Director")


def test_document_names_are_file_stem_title_and_section() -> None:
    named = document_names(match("text", "/docs/northstar-sales_review-2025.pptx",
                                 title="Annual review"))
    assert "northstar sales review 2025" in named
    assert "Annual review" in named


def test_words_naming_the_document_count_for_each_of_its_sentences() -> None:
    sentences = ["Northstar Home Stores - Sales Review 2025", "Presented by Helen Marsh"]
    plain = lexical_scores("who presented the 2025 sales review", sentences)
    named = lexical_scores("who presented the 2025 sales review", sentences,
                           ["northstar sales review 2025"] * 2)
    assert plain[0] > plain[1]  # without the names the title line repeats the most words
    assert named[1] > named[0]  # with them, the word the question asks about decides


def test_the_ranker_prefers_the_sentence_with_what_is_asked() -> None:
    ranker = SentenceRanker(HashingEmbedder(dimension=64))
    ranked = ranker.rank("who presented the 2025 sales review",
                         [match(REVIEW, "northstar-sales-review-2025.pptx")])
    assert ranked[0].text.startswith("Presented by Helen Marsh")


def test_coverage_counts_words_found_in_the_document_name() -> None:
    text = "Emergency repairs are fixed within 4 hours of your call."
    question = read_question("how fast are emergency repairs fixed at harbour view")
    ranker = SentenceRanker(HashingEmbedder(dimension=64))
    for source, covered in (("harbour-view-tenant-handbook.txt", True),
                            ("tenant-handbook.txt", False)):
        matches = [match(text, source)]
        evidence = ranker.rank(question.text, matches)
        signals = measure(question, evidence, matches, idf_of(question, evidence))
        assert ("harbour" not in signals.missing) is covered
        assert ("view" not in signals.missing) is covered


def test_attribute_coverage_drops_when_what_is_asked_is_absent() -> None:
    record = ("sku: PW-VE5; model: Voltera E5; type: electric hybrid; price_gbp: 2150; "
              "battery: 500 Wh; range_km: 110")
    ranker = SentenceRanker(HashingEmbedder(dimension=64))
    matches = [match(record, "pedalworks-catalogue.json")]
    scores = {}
    for text in ("voltera e5 top speed", "voltera e5 battery"):
        question = read_question(text)
        evidence = ranker.rank(text, matches)
        scores[text] = measure(question, evidence, matches,
                               idf_of(question, evidence)).attribute_coverage
    assert scores["voltera e5 top speed"] == 0.0
    assert scores["voltera e5 battery"] == 1.0


def test_a_document_named_after_another_year_is_not_about_the_year_asked() -> None:
    question = read_question("northstar total sales 2025")
    old = match("Region: Total; Sales 2024: £7.15m. Prepared in January 2025.",
                "northstar-sales-review-2024.md")
    new = match("Total sales in 2025 were £7.70m.", "northstar-sales-review-2025.pptx")
    ranker = SentenceRanker(HashingEmbedder(dimension=64))
    evidence = ranker.rank(question.text, [old, new])
    kept, missing = on_subject(question, evidence, [old, new])
    assert missing == ()
    assert {s.number for s in kept} == {2}
    # A document named without a year still counts the year it mentions.
    plain = match("Total sales in 2025 were £7.70m.", "northstar-notes.md")
    kept, missing = on_subject(question, ranker.rank(question.text, [plain]), [plain])
    assert kept and missing == ()


def test_one_letter_labels_pick_the_row_and_the_subject() -> None:
    from ragloom.answering.question import holds_label, letter_labels

    assert letter_labels("band d council tax riverton") == ("band d",)
    assert letter_labels("I want a bin") == ()  # an article, not a label
    assert letter_labels("band A charge") == ("band a",)
    assert holds_label("band d", "band: D; annual charge: 2,140.20")
    assert not holds_label("band d", "band: C; annual charge: 1,902.40")
    rows = ("band: C; annual charge (£): 1,902.40\nband: D; annual charge (£): 2,140.20\n"
            "band: E; annual charge (£): 2,615.80")
    ranker = SentenceRanker(HashingEmbedder(dimension=64))
    ranked = ranker.rank("band d council tax", [match(rows, "council-tax.csv")])
    assert ranked[0].text.startswith("band: D")
    question = read_question("band d council tax")
    other = match("band: A; annual charge (£): 1,426.80", "other-tax.csv")
    kept, missing = on_subject(question, ranker.rank(question.text, [other]), [other])
    assert kept == [] and missing == ("band d",)


def test_a_value_stated_in_the_next_sentence_answers() -> None:
    from ragloom.answering.lookup import compose_extract

    text = ("Garden waste collection is a paid subscription. It costs £48 a year for one "
            "bin. The season runs from April to November.")
    question = read_question("how much is garden waste collection a year")
    matches = [match(text, "bins.html")]
    ranker = SentenceRanker(HashingEmbedder(dimension=64))
    evidence = ranker.rank(question.text, matches)
    first = next(s for s in evidence if s.position == 0)
    ordered = [first, *[s for s in evidence if s is not first]]
    answer = compose_extract(question, ordered, matches).answer
    assert answer.startswith("£48 [1]")
    assert "paid subscription. It costs £48" in answer


def test_a_small_model_is_not_asked_to_rewrite_a_table_row() -> None:
    from ragloom.answering.sentences import is_record

    assert is_record("band: D; annual charge (£): 2,140.20; year: 2025/26")
    assert not is_record("The deposit is five weeks' rent.")


def test_a_period_said_as_how_often_is_the_same_word() -> None:
    from ragloom.answering.gate import term_present
    from ragloom.retrieval.stemmer import porter_stem

    def present(term: str, text: str) -> bool:
        words = set(text.lower().split())
        return term_present(term, words, {porter_stem(w) for w in words})

    assert present("weeks", "weekly permit £35")
    assert present("weekly", "£35 a week")
    assert present("annual", "£48 a year")
    assert not present("month", "weekly permit £35")
    assert not present("early", "ear plugs")


def test_a_weekday_is_monday_to_friday_and_the_weekend_saturday_and_sunday() -> None:
    from ragloom.answering.gate import term_present
    from ragloom.retrieval.stemmer import porter_stem

    def present(term: str, text: str) -> bool:
        words = set(re.findall(r"[a-z]+", text.lower()))
        return term_present(term, words, {porter_stem(w) for w in words})

    assert present("weekday", "monday to friday: last ferry 19:20")
    assert present("weekends", "saturday and sunday: 9:00 to 17:00")
    assert present("saturdays", "weekends: 9:00 to 17:00")
    assert present("tuesday", "weekdays: 8:00 to 18:00")
    assert not present("weekday", "saturday and sunday only")
    assert not present("sunday", "weekdays: 8:00 to 18:00")

"""Two-step questions whose subject is named by a relative clause, and price columns."""

from __future__ import annotations

from ragloom.answering.spans import answer_span
from ragloom.answering.twostep import relative_clause
from tests.answering.helpers import ask, knowledge_base


def test_a_relative_clause_at_the_end_of_a_question_is_found() -> None:
    assert relative_clause("price of a junior swim at the pool where year 4 have lessons") \
        == ("pool", "year 4 have lessons")
    assert relative_clause("how much is a bag of the compost the allotment society "
                           "recommends") == ("compost", "the allotment society recommends")
    assert relative_clause("how much is a junior swim at fernmouth pool") is None
    assert relative_clause("what day are bins collected in harbourside") is None


def test_a_price_column_answers_how_much_not_a_figure_in_the_notes() -> None:
    row = "code: TR-0902; name: Peat-free compost; pot: 50 litre bag; price_gbp: 7.99; " \
          "offer: 3 for £20"
    assert answer_span("how much is a bag of the compost", row) == "7.99"
    offer_first = "name: Peat-free compost; offer: 3 for £20; price_gbp: 7.99"
    assert answer_span("how much is a bag of the compost", offer_first) == "7.99"
    no_price = "name: Peat-free compost; offer: 3 for £20"
    assert answer_span("how much is a bag of the compost", no_price) == "£20"


def test_the_clause_is_searched_first_and_its_name_leads_to_the_answer() -> None:
    kb = knowledge_base({
        "school-newsletter.md": "Swimming. Year 4 have swimming lessons at Fernmouth "
                                "Leisure Pool on Thursday afternoons.\n\nUniform. Green "
                                "sweatshirts are sold at the school office.",
        "fernmouth-leisure-pool.md": "Prices\n\nTicket | Price\nAdult swim | £5.40\n"
                                     "Family swim, two juniors | £14.50\nJunior swim | £3.20",
        "porthkellis-lido.md": "Prices\n\nTicket | Price\nAdult swim | £6.50\n"
                               "Junior swim | £3.80",
    })
    answer = ask(kb, "price of a junior swim at the pool where year 4 have lessons")
    assert not answer.refused
    assert answer.answer.startswith("£3.20")  # the Fernmouth pool's, not the lido's £3.80
    cited = {answer.sources[n - 1].chunk.source for n in answer.citations}
    assert cited == {"school-newsletter.md", "fernmouth-leisure-pool.md"}


def test_a_measure_question_takes_a_value_in_the_measure_s_units() -> None:
    from ragloom.answering.spans import value_kind

    warning = "Do not ride in heavy rain, through standing water deeper than 2 cm."
    assert answer_span("how heavy is the zipmo s9", warning) == ""  # 2 cm is no weight
    assert answer_span("how heavy is the zipmo s9", "Weight: 17.4 kg; depth 2 cm") == "17.4 kg"
    assert value_kind("how far can the s9 go on one charge") == "quantity"  # not money
    assert value_kind("what temp should i use for green tea") == "quantity"
    assert answer_span("what temp should i use for green tea", "Green tea: 70 C") == "70"
    assert value_kind("how far in advance should i book") == "duration"


def test_a_money_question_over_rows_without_a_price_is_refused() -> None:
    from ragloom.answering.gate import GatePolicy
    from ragloom.answering.lookup import lookup
    from ragloom.answering.question import read_question
    from ragloom.answering.sentences import SentenceRanker
    from tests.answering.helpers import matches

    spec = matches("Zipmo S9 Electric Scooter - User Manual. Model S9 (2025 edition).\n\n"
                   "Feature | Zipmo S9\nWeight | 17.4 kg\nTop speed | 25 km/h")
    question = read_question("how much does the zipmo s9 cost")
    ranked = SentenceRanker(None).rank(question.text, spec)
    answer = lookup(question, ranked, spec, None, policy=GatePolicy(refuse_below=0.0),
                    grounding="strict")
    assert answer.refused and "no money" in answer.reason  # 2025 is no price
    priced = matches("Feature | Zipmo S9\nWeight | 17.4 kg\nPrice | £499")
    ranked = SentenceRanker(None).rank(question.text, priced)
    answer = lookup(question, ranked, priced, None, policy=GatePolicy(refuse_below=0.0),
                    grounding="strict")
    assert not answer.refused and "£499" in answer.answer


def test_a_column_label_gives_a_measure_its_unit() -> None:
    row = "code: TR-0330; name: Japanese maple; height_cm: 500; spread_cm: 400"
    assert answer_span("how tall does the japanese maple grow", row) == "500 cm"


def test_a_word_naming_one_document_makes_it_the_subject() -> None:
    from ragloom.answering.gate import named_documents, on_subject
    from ragloom.answering.question import read_question
    from ragloom.answering.sentences import SentenceRanker
    from ragloom.types import QueryMatch, TextChunk, TextDocument

    def passage(source: str, text: str) -> QueryMatch:
        document = TextDocument.create(text, source=source)
        return QueryMatch(chunk=TextChunk.create(document, text, index=0, start=0,
                                                 end=len(text)), score=0.5)

    found = [passage("fernmouth-leisure-pool.xlsx", "Ticket: Swimming lesson; Price: £7.80"),
             passage("porthkellis-lido-2026.md", "The lido opens for swimming on 16 May.")]
    question = read_question("how much are swimming lessons at the lido")
    assert named_documents(question, found) == ("lido",)
    kept, _ = on_subject(question, SentenceRanker(None).rank(question.text, found), found)
    assert kept  # the lido's own passage stays
    assert all(found[s.number - 1].chunk.source.startswith("porthkellis") for s in kept)
    assert named_documents(read_question("swimming lesson price"), found) == ()


def test_a_sentence_stating_the_measure_asked_comes_first_and_its_unit_says_the_cue() -> None:
    from ragloom.answering.engine import measure_first
    from ragloom.answering.gate import measure as gate_signals
    from ragloom.answering.question import read_question
    from ragloom.answering.sentences import SentenceRanker
    from tests.answering.helpers import matches

    spec = matches("Feature | Zipmo S9\nCharging time | 6 to 7 hours\nTop speed | 25 km/h\n"
                   "Range | up to 45 km (28 miles)")
    question = read_question("how far can the s9 go on one charge")
    ranked = SentenceRanker(None).rank(question.text, spec)
    first = measure_first(question.text, ranked)[0]
    assert "45 km" in first.text  # not the charging time, not 25 km/h
    signals = gate_signals(question, [first], spec)
    assert "far" not in signals.missing  # "45 km" answers "how far"
    assert measure_first("what day is it", ranked) == ranked

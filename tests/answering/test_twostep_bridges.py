"""Two-step questions: which sentence is the first step and which of its names lead on."""

from __future__ import annotations

from ragloom.answering.engine import _first_steps
from ragloom.answering.question import read_question
from ragloom.answering.sentences import Sentence
from ragloom.answering.twostep import bridges
from tests.answering.helpers import ask, knowledge_base


def _sentence(text: str, score: float) -> Sentence:
    return Sentence(text=text, number=1, position=0, score=score)


def test_a_long_cell_is_a_phrase_whose_names_are_the_bridges() -> None:
    question = read_question("where do chapel loft guests park and what is the day charge")
    row = ("Cottage: Chapel Loft; Sleeps: 2; Parking: none on site: park in Harbour Road "
           "car park, Porthkellis; Nearest town: Porthkellis")
    found = bridges(question, row)
    assert "Harbour Road" in found
    assert not any(value.startswith("none on site") for value in found)
    assert "Sleeps" not in found and "Parking" not in found  # labels are never bridges


def test_a_bridge_the_question_s_words_describe_comes_first() -> None:
    question = read_question("how far can the trust wardens scooter go on a charge")
    first = ("Our warden now gets around the Penrose Marsh tracks on a Zipmo S9 e-scooter, "
             "bought with a grant from Fernmouth Rotary.")
    assert bridges(question, first)[0] == "Zipmo S9"


def test_the_first_step_holding_most_of_the_question_is_tried_first() -> None:
    question = read_question("what time does the vet nearest tregarth open on saturday")
    shop = _sentence("The nearest shop is the Spar in Porthkellis.", 0.58)
    vet = _sentence("Our nearest vet is Fernbrook Veterinary Centre on Quay Street.", 0.52)
    assert _first_steps(question, [shop, vet], [])[0] is vet


def test_a_runner_up_leads_to_the_answer_when_the_best_sentence_states_another_value() -> None:
    kb = knowledge_base({
        "tregarth-cottages.md": "Local information\n\nThe nearest shop is the Spar in "
                                "Porthkellis, open 7am to 10pm every day. Our nearest vet is "
                                "Fernbrook Veterinary Centre on Quay Street.",
        "fernbrook-vets.md": "Opening hours\n\nFernbrook Veterinary Centre is open Monday to "
                             "Friday 8:00 to 19:00 and on Saturday from 8:30 to 13:00.",
        "harbour-chandlery.md": "The chandlery on the quay sells rope, paint and charts.",
    })
    answer = ask(kb, "what time does the vet nearest tregarth open on saturday")
    assert not answer.refused
    assert answer.answer.startswith("8:30")
    cited = {answer.sources[n - 1].chunk.source for n in answer.citations}
    assert cited == {"tregarth-cottages.md", "fernbrook-vets.md"}


def test_a_measure_s_unit_holds_the_cue_word_in_the_second_step() -> None:
    kb = knowledge_base({
        "wildlife-trust-report.md": "Reserves\n\nOur warden gets around the marsh on a "
                                    "Zipmo S9 e-scooter, bought with a grant.",
        "zipmo-s9-manual.md": "Specification\n\nFeature | Zipmo S9\nRange | up to 45 km\n"
                              "Weight | 17.4 kg\nTop speed | 25 km/h",
    })
    answer = ask(kb, "how far can the trust wardens scooter go on a charge")
    assert not answer.refused
    assert answer.answer.startswith("up to 45 km")

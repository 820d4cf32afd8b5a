"""The answer engine by kind of question, on small knowledge bases with the fakes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from ragloom.answering.corpus import KnowledgeBaseCorpus
from ragloom.answering.engine import AnswerEngine
from ragloom.answering.grounding import unsupported_claims
from ragloom.answering.question import classify, read_question
from ragloom.answering.settings import GenerationSettings
from ragloom.answering.tables import with_records
from ragloom.errors import ConfigurationError
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.retrieval.options import SearchOptions
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.testing import HashingEmbedder, ScriptedModel
from ragloom.types import ChatMessage, ChatResponse, TextDocument, Usage

DOCS = {
    "kettle-kx200.md": """# Brightwell KX200 kettle

The KX200 boils a litre in 2 minutes 30 seconds.

## Specifications

| Feature | Value |
|---|---|
| Capacity | 1.7 litres |
| Weight | 1.1 kg |
| Colours | brushed steel, slate grey, cream |

## Descaling

1. Fill the kettle with water and vinegar.
2. Leave it to stand for 1 hour.
3. Boil clean water twice and pour it away.
""",
    "kettle-kx100.md": """# Brightwell KX100 kettle

The KX100 is the earlier model. It weighs 1.3 kg and holds 1.5 litres.
""",
    "venues.csv": """venue,area,capacity,kitchen
Oakfield Hall,Millfield,120,yes
Scout Hut,Harbourside,35,no
Rope Walk Studio,Harbourside,25,yes
""",
    "sales-2025.md": """# Northstar sales review 2025

North: £2.40m (target £2.20m).
South: £1.90m (target £2.10m).
Parking at the Harbourside depot adds 60 spaces.
""",
    "handbook.md": """# Staff handbook

## Hours

The shop is open from 9:00 to 18:00, Monday to Saturday.

## Holidays

Full-time staff receive 25 days of paid holiday a year.

## Safety

Safety glasses must be worn when using the grinder.

## Parking

Staff parking is behind the shop; visitors park on Station Road.
""",
}


@pytest.fixture(scope="module")
def kb() -> VectorKnowledgeBase:
    from ragloom.loaders import load_path  # noqa: F401  (the CSV parser is registered)

    base = VectorKnowledgeBase(InMemoryVectorStore(), HashingEmbedder(64),
                               search=SearchOptions(top_k=5))
    documents = []
    for name, text in DOCS.items():
        if name.endswith(".csv"):
            rows = text.strip().splitlines()
            header = rows[0].split(",")
            body = "\n".join("; ".join(f"{h}: {v}" for h, v in zip(header, row.split(","),
                                                                    strict=True))
                             for row in rows[1:])
            documents.append(TextDocument.create(body, source=name))
        else:
            documents.append(TextDocument.create(text, source=name))
    base.ingest(documents)
    return base


def ask(kb: VectorKnowledgeBase, question: str, model: Any = None,
        settings: GenerationSettings | None = None, history: Sequence[ChatMessage] = ()
        ) -> Any:
    matches = list(kb.search(question, SearchOptions(top_k=5)).matches)
    return AnswerEngine(kb.embedder).answer(question, matches, model,
                                            corpus=KnowledgeBaseCorpus([kb]),
                                            settings=settings, history=history)


@pytest.mark.parametrize("question,kind", [
    ("What are the main points of the staff handbook?", "summary"),
    ("summarise the minutes", "summary"),
    ("what was decided at the march meeting", "summary"),
    ("find all mentions of parking", "mentions"),
    ("everything about harbourside", "mentions"),
    ("how much lighter is the kx200 than the kx100", "comparison"),
    ("did the north region hit its target", "comparison"),
    ("cheapest venue to hire", "comparison"),
    ("which venues have a kitchen", "list"),
    ("what ports does it have", "list"),
    ("how do i descale the kettle", "procedure"),
    ("How long is the lunch break?", "lookup"),
    ("Who ruled Normandy?", "lookup"),
])
def test_the_kind_comes_from_the_question_form(question: str, kind: str) -> None:
    assert classify(question) == kind


def test_a_lookup_gives_the_span_and_the_sentence_it_comes_from(kb: VectorKnowledgeBase
                                                                 ) -> None:
    answer = ask(kb, "how long does the kx200 take to boil a litre")
    assert answer.answer.startswith("2 minutes 30 seconds [")
    assert "boils a litre in 2 minutes 30 seconds" in answer.answer
    assert not unsupported_claims(answer.answer, [m.chunk.text for m in answer.sources])


def test_a_table_row_is_read_with_its_header_and_never_the_header_row() -> None:
    rows = with_records("| Area | Day |\n|---|---|\n| Thornbury | Wednesday |")
    assert rows == "Area: Thornbury; Day: Wednesday"


def test_evidence_about_another_model_never_answers(kb: VectorKnowledgeBase) -> None:
    answer = ask(kb, "what colours does the kx300 come in")
    assert answer.refused and "kx300" in answer.reason


def test_a_list_reads_a_yes_no_column(kb: VectorKnowledgeBase) -> None:
    answer = ask(kb, "which venues have a kitchen")
    assert answer.kind == "list" and not answer.refused
    assert "Oakfield Hall" in answer.answer and "Rope Walk Studio" in answer.answer
    assert "Scout Hut" not in answer.answer


def test_a_comparison_shows_both_figures_and_the_difference(kb: VectorKnowledgeBase) -> None:
    answer = ask(kb, "how much lighter is the kx200 than the kx100")
    assert answer.kind == "comparison" and not answer.refused
    assert "1.1 kg" in answer.answer and "1.3 kg" in answer.answer
    assert "0.2 kg" in answer.answer
    assert len(answer.citations) == 2
    assert not unsupported_claims(answer.answer, [m.chunk.text for m in answer.sources])


def test_a_target_question_says_yes_or_no_with_the_figures(kb: VectorKnowledgeBase) -> None:
    answer = ask(kb, "did the south region hit its target")
    assert answer.answer.startswith("No:") and "£1.90m" in answer.answer
    assert "£2.10m" in answer.answer


def test_a_summary_reads_the_whole_document_in_order(kb: VectorKnowledgeBase) -> None:
    answer = ask(kb, "What are the main points of the staff handbook?")
    assert answer.kind == "summary" and not answer.refused
    assert answer.answer.startswith("Main points of handbook.md")
    points = [p["text"] for p in answer.points]
    assert len(points) >= 3
    order = [DOCS["handbook.md"].index(p) for p in points]
    assert order == sorted(order)
    assert all(f"[{p['citation']}]" in answer.answer for p in answer.points)


def test_mentions_are_every_passage_naming_the_term(kb: VectorKnowledgeBase) -> None:
    answer = ask(kb, "find all mentions of parking")
    sources = {m.chunk.source for m in answer.sources if m.chunk.source}
    assert {"handbook.md", "sales-2025.md"} <= sources
    assert all("parking" in p["text"].lower() or "park" in p["text"].lower()
               for p in answer.points)


def test_a_procedure_gives_the_steps_as_written(kb: VectorKnowledgeBase) -> None:
    answer = ask(kb, "how do i descale the kx200 kettle")
    assert answer.kind == "procedure"
    assert "1. Fill the kettle" in answer.answer and "3. Boil clean water" in answer.answer


class Recording(ScriptedModel):
    """A model that keeps the options of each call."""

    def __init__(self, reply: str) -> None:
        super().__init__([reply], name="openai:recording")
        self.options: list[dict[str, Any]] = []

    def chat(self, messages: Any, **options: Any) -> ChatResponse:  # type: ignore[override]
        self.options.append(options)
        response = super().chat(messages, stop=options.get("stop"))
        return ChatResponse(message=response.message, usage=Usage(input_tokens=3),
                            model=self.name)


def test_the_settings_and_the_history_reach_the_model(kb: VectorKnowledgeBase) -> None:
    model = Recording("The KX200 boils a litre in 2 minutes 30 seconds [1].")
    settings = GenerationSettings(temperature=0.7, max_tokens=99, system_prompt="Be brief.")
    history = [ChatMessage.user("tell me about kettles"), ChatMessage.assistant("Sure.")]
    answer = ask(kb, "how long does the kx200 take to boil a litre", model, settings, history)
    assert model.options[0]["temperature"] == 0.7 and model.options[0]["max_tokens"] == 99
    sent = model.calls[0]
    assert sent[0].role == "system" and sent[0].content == "Be brief."
    assert [m.content for m in sent[1:3]] == ["tell me about kettles", "Sure."]
    assert answer.origin == "model" and answer.citations


def test_check_grounding_keeps_the_answer_and_flags_what_the_passages_lack(
        kb: VectorKnowledgeBase) -> None:
    model = Recording("It boils a litre in 45 seconds [1].")
    answer = ask(kb, "how long does the kx200 take to boil a litre", model,
                 GenerationSettings(grounding="check"))
    assert "45 seconds" in answer.answer and answer.unsupported == ["45"]
    strict = ask(kb, "how long does the kx200 take to boil a litre", model)
    assert "45" not in strict.answer and "2 minutes 30 seconds" in strict.answer


def test_settings_refuse_what_cannot_work() -> None:
    with pytest.raises(ConfigurationError, match="grounding"):
        GenerationSettings(grounding="loose")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="question"):
        GenerationSettings(template="{context} only")


def test_the_subject_of_a_lowercase_question_comes_from_the_documents() -> None:
    question = read_question("how much is the 32gb orbis 14")
    assert "32gb" in question.subject


def test_a_procedure_the_first_passages_miss_is_read_from_the_knowledge_base(
        kb: VectorKnowledgeBase) -> None:
    question = "how do i descale the kx200 kettle"
    # Only a passage without the steps was retrieved; the corpus holds them.
    other = [m for m in kb.search(question, SearchOptions(top_k=10)).matches
             if "Descaling" not in m.chunk.text][:1]
    engine = AnswerEngine(kb.embedder)
    without = engine.answer(question, other, None)
    assert without.refused
    answer = engine.answer(question, other, None, corpus=KnowledgeBaseCorpus([kb]))
    assert not answer.refused
    assert "1. Fill the kettle" in answer.answer

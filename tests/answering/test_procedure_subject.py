"""A procedure is read from a passage about the question's subject, not a neighbour's."""

from __future__ import annotations

from ragloom.answering.corpus import KnowledgeBaseCorpus
from ragloom.answering.engine import AnswerEngine
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.retrieval.options import SearchOptions
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.types import TextDocument

DOCS = {
    "ashby-bins.md": """# Ashby District Council bins

## How do I order a new wheelie bin from the council

1. To order a new wheelie bin from the council, phone the Ashby contact centre.
2. Pay the £18 charge for the new wheelie bin by card.
3. The new wheelie bin is delivered within 15 working days.
""",
    "riverton-bins.md": """# Riverton Borough Council bins

## Ordering a new bin

To order a new or replacement wheelie bin, use the order form on the council website.
Enter your postcode and choose the bin. Pay the £22 charge online.
The bin arrives within 10 working days.
""",
}


def test_the_steps_come_from_the_council_the_question_names() -> None:
    kb = VectorKnowledgeBase(InMemoryVectorStore(), HashingEmbedder(64),
                             search=SearchOptions(top_k=5))
    kb.ingest([TextDocument.create(text, source=name) for name, text in DOCS.items()])
    question = "how do i order a new wheelie bin from riverton council"
    matches = list(kb.search(question, SearchOptions(top_k=5)).matches)
    result = AnswerEngine(kb.embedder).answer(question, matches, None,
                                              corpus=KnowledgeBaseCorpus([kb]))
    assert result.kind == "procedure" and not result.refused
    cited = {result.sources[n - 1].chunk.source for n in result.citations}
    assert cited == {"riverton-bins.md"}
    assert "order form" in result.answer and "Ashby" not in result.answer


def test_procedure_reads_the_evidence_it_is_given() -> None:
    from ragloom.answering.question import read_question
    from ragloom.answering.sentences import SentenceRanker
    from ragloom.answering.steps import procedure
    from ragloom.types import QueryMatch, TextChunk

    matches = []
    for name, text in DOCS.items():
        document = TextDocument.create(text, source=name)
        matches.append(QueryMatch(chunk=TextChunk.create(document, text, index=0, start=0,
                                                          end=len(text)), score=0.9))
    question = read_question("how do i order a new wheelie bin from the council")
    ranker = SentenceRanker(HashingEmbedder(64))
    ranked = ranker.rank(question.text, matches)
    riverton = [s for s in ranked if s.number == 2]
    chosen = procedure(question, matches, ranker, riverton)
    assert chosen.citations == [2] and "Ashby" not in chosen.answer
    unfiltered = procedure(question, matches, ranker)
    assert unfiltered.citations == [ranked[0].number]


def test_the_steps_come_from_the_passage_most_about_the_question() -> None:
    from ragloom.answering.question import read_question
    from ragloom.answering.sentences import SentenceRanker
    from ragloom.answering.steps import procedure
    from tests.answering.helpers import matches

    passages = matches(
        "Cottage | Sleeps | Book\nGull Cottage | 4 | online\nOld Dairy | 6 | online",
        "Members get 10% off with a membership card.\n\nThe allotments are on Penrose Lane.",
        "Penrose Lane allotment rules\n\n3. GETTING A PLOT\n\nHow to apply: fill in an "
        "application form and you are put on the waiting list. When a plot is offered, "
        "you view it and sign the tenancy agreement.")
    question = read_question("how do i get an allotment at penrose lane")
    ranked = SentenceRanker(None).rank(question.text, passages)
    answer = procedure(question, passages, SentenceRanker(None), ranked)
    assert "application form" in answer.answer  # under the heading naming "get"
    assert "Gull Cottage" not in answer.answer  # a table's rows are not steps

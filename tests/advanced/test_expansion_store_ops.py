from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragloom.advanced import ParentDocumentExpander, SentenceWindowExpander
from ragloom.chunking import RecursiveSplitter
from ragloom.chunking.markdown import MarkdownSplitter
from ragloom.filters import parse_filters
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.retrieval.options import SearchOptions
from ragloom.testing.fakes import HashingEmbedder
from ragloom.types import TextDocument

STORY = " ".join(f"Sentence number {i} talks about topic {i}." for i in range(1, 41))
GUIDE = ("# Guide\n\n## Brakes\n\n" + " ".join(f"Brake fact {i} is here." for i in range(12))
         + "\n\n## Tyres\n\n" + " ".join(f"Tyre fact {i} is here." for i in range(12)) + "\n")


def _kb(store: Any, chunker: Any, docs: list[TextDocument]) -> VectorKnowledgeBase:
    kb = VectorKnowledgeBase(store, HashingEmbedder(128), chunker,
                             search=SearchOptions(mode="keyword", top_k=3))
    kb.ingest(docs)
    return kb


def test_sentence_window_adds_neighbouring_sentences(any_store: Any) -> None:
    kb = _kb(any_store, RecursiveSplitter(120, 20), [TextDocument.create(STORY, source="s")])
    hit = kb.retrieve("topic 20")[0]
    assert "topic 20." in hit.chunk.text
    expanded = SentenceWindowExpander(any_store, sentences=2).rerank("q", [hit])[0]
    text = expanded.chunk.text
    assert hit.chunk.text.strip() in text
    assert len(text) > len(hit.chunk.text)
    first = hit.chunk.text.split(".")[0].split()[-1]  # number of the hit's first sentence
    assert f"Sentence number {int(first) - 1} " in text and f"{int(first) - 3} " not in text
    assert expanded.chunk.metadata["expanded"] == "sentence_window"
    assert expanded.chunk.id == hit.chunk.id and expanded.score == hit.score


def test_parent_document_gives_the_whole_section_once(any_store: Any) -> None:
    chunker = MarkdownSplitter(80, 10)
    kb = _kb(any_store, chunker, [TextDocument.create(GUIDE, source="guide.md")])
    hits = kb.retrieve("Brake fact")
    assert len(hits) >= 2
    out = ParentDocumentExpander(any_store).rerank("q", hits)
    assert len(out) == 1
    text = out[0].chunk.text
    assert "Brake fact 0 is here." in text and "Brake fact 11 is here." in text
    assert "Tyre" not in text
    whole = ParentDocumentExpander(any_store, level="document").rerank("q", hits[:1])[0]
    assert "Tyre fact 11" in whole.chunk.text
    capped = ParentDocumentExpander(any_store, level="document", max_chars=100).rerank(
        "q", hits[:1])[0]
    assert len(capped.chunk.text) <= 100


def test_delete_by_metadata_filter_and_clear(any_store: Any) -> None:
    docs = [TextDocument.create(f"text {i} about bikes", source=f"d{i}.md",
                                metadata={"year": 2020 + i}) for i in range(4)]
    kb = _kb(any_store, RecursiveSplitter(), docs)
    assert kb.delete_where(parse_filters({"key": "year", "op": ">=", "value": 2022})) == 2
    assert sorted(c.metadata["year"] for c in any_store.chunks()) == [2020, 2021]
    assert {d.source for d in any_store.list_documents()} == {"d0.md", "d1.md"}
    kb.ingest(docs)  # the removed documents come back: their records went with them
    assert any_store.count() == 4
    assert kb.clear() == 4
    assert any_store.count() == 0 and any_store.list_documents() == []
    assert kb.retrieve("bikes") == []


def test_delete_where_on_sqlite_survives_reopen(tmp_path: Path) -> None:
    from ragloom.stores.sqlite import SqliteVectorStore

    docs = [TextDocument.create("alpha bikes", source="a.md", metadata={"tag": "x"}),
            TextDocument.create("beta bikes", source="b.md", metadata={"tag": "y"})]
    with SqliteVectorStore(tmp_path / "kb.db") as store:
        kb = _kb(store, RecursiveSplitter(), docs)
        assert kb.delete_where(parse_filters({"tag": "x"})) == 1
        assert [m.chunk.source for m in kb.retrieve("bikes")] == ["b.md"]
    with SqliteVectorStore(tmp_path / "kb.db") as store:
        assert [d.source for d in store.list_documents()] == ["b.md"]
        assert store.keyword_query("alpha") == []


def test_expanders_need_a_store_that_lists_chunks() -> None:
    from ragloom.errors import StoreError

    with pytest.raises(StoreError):
        SentenceWindowExpander(object())

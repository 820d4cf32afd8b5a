from __future__ import annotations

from typing import Any

import pytest

from ragloom.chunking import LineSplitter
from ragloom.errors import EmbedderMismatchError
from ragloom.knowledge_base import IngestEvent, VectorKnowledgeBase
from ragloom.retrieval.options import SearchOptions
from ragloom.testing import HashingEmbedder
from ragloom.types import TextDocument


def docs(**texts: str) -> list[TextDocument]:
    return [TextDocument.create(text, source=f"{name}.txt") for name, text in texts.items()]


CORPUS = {
    "lunch": "The unpaid lunch break is 30 minutes.\nBreaks are agreed with the shift lead.",
    "holiday": "Full-time staff get 25 days of holiday.\nRequests need two weeks notice.",
    "warranty": "Frames have a lifetime warranty.\nComponents are covered for two years.",
}


def make_kb(store: Any, embedder: HashingEmbedder | None = None) -> VectorKnowledgeBase:
    return VectorKnowledgeBase(store, embedder or HashingEmbedder(64), LineSplitter(),
                               search=SearchOptions(mode="vector", top_k=3))


def test_ingest_twice_is_a_no_op(any_store: Any) -> None:
    embedder = HashingEmbedder(64)
    kb = make_kb(any_store, embedder)
    first = kb.ingest(docs(**CORPUS))
    assert sorted(first.new) == ["holiday.txt", "lunch.txt", "warranty.txt"]
    assert first.chunks_written == 6 and any_store.count() == 6
    calls_before = len(embedder.calls)
    second = kb.ingest(docs(**CORPUS))
    assert sorted(second.unchanged) == sorted(first.new)
    assert second.texts_embedded == 0 and len(embedder.calls) == calls_before
    assert any_store.count() == 6 and len(any_store.list_documents()) == 3


def test_editing_one_document_replaces_only_its_chunks(any_store: Any) -> None:
    kb = make_kb(any_store)
    kb.ingest(docs(**CORPUS))
    others = {s: any_store.find_document(s) for s in ("holiday.txt", "warranty.txt")}
    edited = dict(CORPUS, lunch="Lunch is now 45 minutes long.")
    report = kb.ingest(docs(**edited))
    assert report.replaced == ["lunch.txt"] and sorted(report.unchanged) == ["holiday.txt",
                                                                            "warranty.txt"]
    assert report.texts_embedded == 1
    assert any_store.count() == 5
    texts = [m.chunk.text for m in kb.retrieve("lunch minutes")]
    assert "Lunch is now 45 minutes long." in texts
    assert not any("30 minutes" in t for t in texts)
    assert {s: any_store.find_document(s) for s in others} == others


def test_delete_removes_chunks(any_store: Any) -> None:
    kb = make_kb(any_store)
    kb.ingest(docs(**CORPUS))
    doc_id = any_store.find_document("lunch.txt").id
    assert kb.delete([doc_id]) == 1
    assert any_store.count() == 4
    assert all(m.chunk.source != "lunch.txt" for m in kb.retrieve("lunch break minutes"))
    assert any_store.find_document("lunch.txt") is None


def test_other_embedder_is_refused_and_nothing_is_lost(any_store: Any) -> None:
    make_kb(any_store, HashingEmbedder(64)).ingest(docs(**CORPUS))
    other = make_kb(any_store, HashingEmbedder(32))
    with pytest.raises(EmbedderMismatchError, match="fake:hashing-64"):
        other.ingest(docs(extra="More text."))
    with pytest.raises(EmbedderMismatchError, match="built with fake:hashing-64"):
        other.retrieve("lunch")
    assert any_store.count() == 6


def test_empty_documents_are_skipped_with_a_reason(any_store: Any) -> None:
    events: list[IngestEvent] = []
    report = make_kb(any_store).ingest(docs(empty="   \n", lunch=CORPUS["lunch"]),
                                       progress=events.append)
    assert report.skipped == [("empty.txt", "no text (empty document)")]
    assert report.new == ["lunch.txt"]
    assert [e.outcome for e in events] == ["skipped", "new"]


def test_ready_made_chunks_can_be_ingested(any_store: Any) -> None:
    doc = docs(lunch=CORPUS["lunch"])[0]
    chunks = LineSplitter().split(doc)
    report = make_kb(any_store).ingest(chunks)
    assert report.chunks_written == len(chunks) == any_store.count()


def test_filters_apply_in_retrieve(any_store: Any) -> None:
    from ragloom.filters import parse_filters

    kb = make_kb(any_store)
    kb.ingest(docs(**CORPUS))
    hits = kb.retrieve("staff breaks warranty", parse_filters({"source": "holiday.txt"}))
    assert hits and {m.chunk.source for m in hits} == {"holiday.txt"}


def test_settings_key_keeps_its_format_and_the_pipeline_shares_it(any_store: Any) -> None:
    kb = make_kb(any_store)
    assert kb.settings_key() == f"{LineSplitter().settings_key()}|fake:hashing-64"
    assert kb.pipeline().settings == kb.settings_key()
    kb.ingest(docs(**CORPUS))
    stored = {d.source: d.settings for d in any_store.list_documents()}
    assert set(stored.values()) == {kb.settings_key()}


def test_ingest_accepts_a_generator_and_batches_across_documents(any_store: Any) -> None:
    embedder = HashingEmbedder(64)
    kb = VectorKnowledgeBase(any_store, embedder, LineSplitter(), batch_size=4)
    report = kb.ingest(d for d in docs(**CORPUS))
    assert len(report.new) == 3 and embedder.calls[0] == 4 and sum(embedder.calls) == 6

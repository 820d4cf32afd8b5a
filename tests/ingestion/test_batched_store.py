"""The pipeline stores each embedded batch with one ``replace_documents`` call where the
store has it (SQLite, PostgreSQL), one ``replace_document`` per document elsewhere:
same documents, same report, events in order and only after the commit."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragloom.chunking import LineSplitter
from ragloom.errors import DimensionMismatchError
from ragloom.ingestion import IngestEvent
from ragloom.ingestion.writer import BatchDocumentIndex
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.testing.store_conformance import versioned_document as _document
from ragloom.types import Document, TextDocument

_names = itertools.count()


@pytest.fixture(params=["sqlite", "pgvector"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Any]]:
    """Fresh stores of one kind that have ``replace_documents``."""
    opened: list[Any] = []

    def factory() -> Any:
        if request.param == "sqlite":
            store: Any = SqliteVectorStore(tmp_path / f"kb{next(_names)}.db")
        else:
            from ragloom.stores.pgvector import PgVectorStore

            store = PgVectorStore(request.getfixturevalue("pg_url"), f"batch{next(_names)}")
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


def _texts(count: int) -> list[TextDocument]:
    return [TextDocument.create("\n".join(f"Line {j} of document {i}, topic {i * 3 + j}."
                                          for j in range(1 + i % 3)), source=f"doc{i}")
            for i in range(count)]


def _calls(store: Any, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Record the store's write calls (name, documents) on the instance."""
    calls: list[tuple[str, int]] = []
    for name in ("replace_document", "replace_documents"):
        method = getattr(store, name, None)
        if method is None:
            continue

        def spy(*args: Any, _name: str = name, _method: Any = method, **kwargs: Any) -> Any:
            calls.append((_name, len(args[0]) if _name == "replace_documents" else 1))
            return _method(*args, **kwargs)

        monkeypatch.setattr(store, name, spy)
    return calls


def _state(store: Any) -> tuple[Any, ...]:
    documents = sorted((d.id, d.source, d.content_hash, d.chunk_count, d.settings)
                       for d in store.list_documents())
    return documents, sorted((c.id, c.document_id, c.text) for c in store.chunks())


def test_each_batch_is_one_store_call_with_events_after_its_commit(
        make_store: Callable[[], Any], monkeypatch: pytest.MonkeyPatch) -> None:
    store = make_store()
    assert isinstance(store, BatchDocumentIndex)
    calls = _calls(store, monkeypatch)
    seen: list[IngestEvent] = []

    def progress(event: IngestEvent) -> None:
        # The event follows the commit: the document is already there to be found.
        assert store.find_document(event.source) is not None
        seen.append(event)

    kb = VectorKnowledgeBase(store, HashingEmbedder(16), LineSplitter())
    documents = _texts(12)  # 24 chunks
    report = kb.pipeline(batch_size=8).run(documents, progress=progress, read_ahead=True)
    assert [e.source for e in seen] == [d.source for d in documents]
    assert report.new == [d.source for d in documents] and report.chunks_written == 24
    assert [name for name, _ in calls] == ["replace_documents"] * len(calls)
    assert 3 <= len(calls) <= 4 and sum(n for _, n in calls) == 12
    # Changed documents are replaced, unchanged ones not written again.
    changed = [TextDocument.create(d.text + "\nA new line.", source=d.source)
               if i % 4 == 0 else d for i, d in enumerate(documents)]
    calls.clear()
    again = kb.pipeline(batch_size=8).run(changed)
    assert again.replaced == ["doc0", "doc4", "doc8"] and len(again.unchanged) == 9
    assert sum(n for _, n in calls) == 3
    assert store.find_document("doc4").chunk_count == 3  # type: ignore[union-attr]


def test_the_same_documents_as_one_by_one(make_store: Callable[[], Any], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    batched, single = make_store(), InMemoryVectorStore()
    calls = _calls(single, monkeypatch)
    documents = _texts(9)
    for store in (batched, single):
        kb = VectorKnowledgeBase(store, HashingEmbedder(16), LineSplitter())
        kb.pipeline(batch_size=5).run(documents[:6])
        kb.pipeline(batch_size=5).run([TextDocument.create("Replaced.", source="doc1"),
                                       *documents[5:]])
    assert _state(batched) == _state(single)
    assert {name for name, _ in calls} == {"replace_document"}


def test_a_failed_batch_leaves_no_document_and_no_event(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "kb.db")

    def refuse(conn: Any, cid: int, document: Document) -> None:
        if document.source == "doc5":
            raise RuntimeError("the write failed")

    store.write_hooks.append(refuse)
    seen: list[str] = []
    kb = VectorKnowledgeBase(store, HashingEmbedder(16), LineSplitter())
    documents = _texts(9)  # batches of 4+ chunks: doc0-doc2, doc3-doc5, ...
    with pytest.raises(RuntimeError, match="the write failed"):
        kb.pipeline(batch_size=4).run(documents, progress=lambda e: seen.append(e.source))
    stored = sorted(d.source for d in store.list_documents())
    assert seen == stored == ["doc0", "doc1", "doc2"]
    store.close()


def test_sqlite_batch_keeps_its_loaded_vectors_and_keywords_in_step(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "kb.db", keyword_index="memory")
    store.replace_documents([_document("a", ["alpha", "beta"], 1), _document("b", ["gamma"], 2)])
    probe = _document("q", ["alpha"], 1)[1][0].embedding
    store.query(probe, top_k=1)  # the matrix is in memory from here on
    assert store.warm_keyword_index()
    store.replace_documents([_document("a", ["one"], 3), _document("a", ["alpha", "two"], 4),
                             _document("c", ["delta"], 5)])
    reopened = SqliteVectorStore(tmp_path / "kb.db")
    for query in (probe, _document("q", ["x"], 5)[1][0].embedding):
        assert ([m.chunk.id for m in store.query(query, top_k=10)]
                == [m.chunk.id for m in reopened.query(query, top_k=10)])
    assert [(d.source, d.chunk_count) for d in store.list_documents()] == [
        ("a", 2), ("b", 1), ("c", 1)]
    assert [m.chunk.id for m in store.keyword_query("alpha", top_k=5)] == ["id-a-2#0"]
    with pytest.raises(DimensionMismatchError):
        store.replace_documents([_document("d", ["zeta"], 6), _document("e", ["eta"], 7, 4)])
    assert store.find_document("d") is None and store.count() == 4
    store.close()
    reopened.close()

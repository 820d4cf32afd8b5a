from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.chat import SessionNotFoundError, SessionStore
from ragloom.errors import InvalidInputError
from ragloom.testing.threads import run_in_threads
from ragloom.types import QueryMatch, TextChunk, TextDocument


def _match() -> QueryMatch:
    doc = TextDocument.create("The frame has a ten year warranty.", source="warranty.md")
    chunk = TextChunk.create(doc, doc.text, index=0, start=0, end=len(doc.text))
    return QueryMatch(chunk=chunk, score=0.9, knowledge_base="default")


def test_constructor_touches_nothing(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "db")
    assert not (tmp_path / "db").exists()
    assert store.path == tmp_path / "db" / "ragloom.db"


def test_create_append_get_list_delete(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "ragloom.db")
    store.create("a")
    with pytest.raises(InvalidInputError):
        store.create("a")
    assert store.create("a", exist_ok=True).name == "a"
    store.append("a", "user", "How long is the frame warranty?")
    store.append("a", "assistant", "Ten years [1].", sources=[_match()],
                 metadata={"query": "frame warranty"})
    store.append("b", "user", "hi")  # created on first use
    names = [s.name for s in store.list()]
    assert names == ["b", "a"]  # most recently updated first
    assert store.get("a").message_count == 2
    messages = store.messages("a")
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[1].sources[0]["document"] == "warranty.md"
    assert messages[1].metadata == {"query": "frame warranty"}
    assert [m.content for m in store.messages("a", limit=1)] == ["Ten years [1]."]
    assert store.history("a")[0].content == "How long is the frame warranty?"
    assert store.history("missing") == []
    assert store.delete("a") is True
    assert store.delete("a") is False
    with pytest.raises(SessionNotFoundError):
        store.get("a")
    with pytest.raises(SessionNotFoundError):
        store.append("a", "user", "x", create=False)


def test_generated_names_are_unique_and_persisted(tmp_path: Path) -> None:
    first = SessionStore(tmp_path).create()
    second = SessionStore(tmp_path).create()
    assert first.name != second.name
    assert {s.name for s in SessionStore(tmp_path).list()} == {first.name, second.name}


def test_shares_the_file_with_a_vector_store(tmp_path: Path) -> None:
    from ragloom.stores.sqlite import SqliteVectorStore

    db = tmp_path / "ragloom.db"
    with SqliteVectorStore(db, collection="kb") as vs:
        vs.bind_embedder("fake:hash", 8)
    SessionStore(db).append("s", "user", "hello")
    with SqliteVectorStore(db, collection="kb") as vs:
        assert [c.name for c in vs.list_collections()] == ["kb"]
    assert SessionStore(db).get("s").message_count == 1


def test_threads_can_share_one_store(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)

    def worker(n: int) -> None:
        for i in range(10):
            store.append("shared", "user", f"{n}-{i}")

    run_in_threads(worker, 4)
    assert store.get("shared").message_count == 40


def test_bad_role_and_name(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    with pytest.raises(InvalidInputError):
        store.append("s", "robot", "x")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        store.create("  ")

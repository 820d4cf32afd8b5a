"""The Llama Stack objects' table, on SQLite and on PostgreSQL (replicas): replace keeps
one row, lists keep insertion order, and every lookup is by tenant."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.server.v1.db import MetaDB
from ragloom.server.v1.errors import OpenAIError
from ragloom.server.v1.llama_objects import LlamaObjects


def check(objects: LlamaObjects) -> None:
    objects.put("agent", "alice", "a1", {"agent_id": "a1", "v": 1})
    objects.put("agent", "alice", "a1", {"agent_id": "a1", "v": 2})  # replaced, not added
    objects.put("agent", "bob", "a1", {"agent_id": "a1", "v": 9})  # same id, other tenant
    for number in range(3):
        objects.put("session", "alice", f"s{number}", {"n": number}, parent="a1")
    assert objects.get("agent", "alice", "a1", "agent_id") == {"agent_id": "a1", "v": 2}
    assert objects.find("agent", "bob", "a1") == {"agent_id": "a1", "v": 9}
    assert [s["n"] for s in objects.children("session", "alice", "a1")] == [0, 1, 2]
    assert objects.children("session", "bob", "a1") == []
    with pytest.raises(OpenAIError) as caught:
        objects.get("session", "bob", "s1", "session_id")
    assert caught.value.status == 404
    assert objects.delete_children("session", "alice", "a1") == 3
    assert objects.delete("agent", "alice", "a1") and not objects.delete("agent", "alice", "a1")
    assert objects.find("agent", "bob", "a1") is not None


def test_on_sqlite_and_after_reopening(tmp_path: Path) -> None:
    path = str(tmp_path / "openai.sqlite")
    check(LlamaObjects(MetaDB(path)))
    LlamaObjects(MetaDB(path)).put("conversation", "alice", "c1", {"id": "c1"})
    assert LlamaObjects(MetaDB(path)).find("conversation", "alice", "c1") == {"id": "c1"}


def test_on_postgresql(pg_url: str) -> None:
    from tests.server.test_pg_schema_version import fresh_database

    db = MetaDB(fresh_database(pg_url, "llama_objects"))
    try:
        check(LlamaObjects(db))
    finally:
        db.close()

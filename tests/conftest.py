from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragloom.stores.memory import InMemoryVectorStore


@pytest.fixture(params=["memory", "sqlite"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """Each shipped store, fresh."""
    if request.param == "memory":
        yield InMemoryVectorStore()
        return
    from ragloom.stores.sqlite import SqliteVectorStore

    store = SqliteVectorStore(tmp_path / "kb.db", collection="default")
    yield store
    store.close()


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A PostgreSQL server with pgvector for this test session (pgserver)."""
    from tests.pg_server import postgres_server

    yield from postgres_server()

"""Fixtures shared by the store tests: every shipped store, built the same way.

PostgreSQL (with pgvector) is started once per test session by the ``pgserver``
package (the ``pg_url`` fixture of ``tests/conftest.py``, shared with the server
tests); Milvus Lite runs in process. Without their packages, their tests are
skipped with a reason naming what to install, never passed silently.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragloom.stores.memory import InMemoryVectorStore
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing.store_conformance import (
    StoreFactory,
    document_entries,
    entry,
    make_chunk,
)

__all__ = ["StoreFactory", "document_entries", "entry", "make_chunk"]

_names = itertools.count()


@pytest.fixture(params=["memory", "sqlite"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """A factory ``make_store(metric="cosine")`` for each embedded store kind."""
    opened: list[SqliteVectorStore] = []

    def factory(metric: str = "cosine") -> Any:
        if request.param == "memory":
            return InMemoryVectorStore(metric)  # type: ignore[arg-type]
        store = SqliteVectorStore(tmp_path / f"kb{len(opened)}.db", metric=metric)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


def unique_name(prefix: str) -> str:
    return f"{prefix}{next(_names)}"


def opened_stores(store_class: Any, location: str) -> Iterator[Callable[..., Any]]:
    """A factory of ``store_class(location, <a new collection>, metric, **options)``; every
    store it made is closed after the test."""
    opened: list[Any] = []

    def factory(metric: str = "cosine", **options: Any) -> Any:
        store = store_class(location, unique_name("kb"), metric, **options)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


@pytest.fixture
def make_pg_store(pg_url: str) -> Iterator[Callable[..., Any]]:
    from ragloom.stores.pgvector import PgVectorStore

    yield from opened_stores(PgVectorStore, pg_url)


@pytest.fixture(scope="session")
def milvus_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Milvus Lite database file for this test session."""
    try:
        import milvus_lite  # type: ignore[import-not-found]  # noqa: F401
        import pymilvus  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"Milvus tests need pymilvus and milvus-lite ({exc}); install them with: "
                    "pip install 'ragloom[milvus]'")
    return str(tmp_path_factory.mktemp("milvus") / "milvus.db")


@pytest.fixture
def make_milvus_store(milvus_file: str) -> Iterator[Callable[..., Any]]:
    from ragloom.stores.milvus import MilvusStore

    # The file is the session's: closing is enough, no need to drop collections.
    yield from opened_stores(MilvusStore, milvus_file)

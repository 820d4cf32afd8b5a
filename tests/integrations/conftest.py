"""Where the adapter suites run: a SQLite file and a real PostgreSQL (pgvector).

``kb_location`` gives ``(path, collection)`` for a fresh, empty knowledge base on each
ragloom store the adapters are checked on: what ``ragloom --db`` takes (a ``.db``
file, a ``postgresql://`` URL) and a collection name no other test uses. PostgreSQL
is the session's pgserver (``pg_url`` in ``tests/conftest.py``), skipped with a reason
when pgserver is not installed.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

STORES = ["sqlite", "pgvector"]
_names = itertools.count()
Location = tuple[str, str]


def new_location(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Location:
    name = f"it{next(_names)}"
    if kind == "pgvector":
        return str(request.getfixturevalue("pg_url")), name
    return str(tmp_path / f"{name}.db"), name


@pytest.fixture(params=STORES)
def kb_location(request: pytest.FixtureRequest, tmp_path: Path) -> Location:
    """``(path, collection)`` of a new knowledge base on each ragloom store."""
    return new_location(request.param, request, tmp_path)


@pytest.fixture
def closing() -> Iterator[Callable[[Any], Any]]:
    """``closing(store)`` closes the store (its connections) after the test."""
    opened: list[Any] = []

    def keep(store: Any) -> Any:
        opened.append(store)
        return store

    yield keep
    for store in opened:
        store.close()



@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: Any, name: str, obj: object) -> None:
    """The frameworks' suites have ``async def`` tests: run them on pytest-asyncio (the
    mark goes on before pytest-asyncio collects them)."""
    import inspect

    if (name.startswith("test") and inspect.iscoroutinefunction(obj)
            and not any(m.name == "asyncio" for m in getattr(obj, "pytestmark", []))):
        pytest.mark.asyncio(obj)

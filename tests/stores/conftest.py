"""Fixtures shared by the store tests: every shipped store, built the same way."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragloom.stores.memory import InMemoryVectorStore
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.types import TextChunk, TextDocument, Vector, VectorEntry

StoreFactory = Callable[..., Any]


@pytest.fixture(params=["memory", "sqlite"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """A factory ``make_store(metric="cosine")`` for each store kind."""
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


def make_chunk(
    chunk_id: str, text: str = "text", metadata: dict[str, Any] | None = None,
    document_id: str = "doc",
) -> TextChunk:
    return TextChunk(id=chunk_id, document_id=document_id, index=0, start=0, end=len(text),
                     text=text, metadata=metadata or {})


def entry(chunk: TextChunk, values: Any) -> VectorEntry:
    return VectorEntry(chunk=chunk, embedding=Vector(np.asarray(values, dtype=np.float32)))


def document_entries(
    source: str, texts: list[str], rng: np.random.Generator, dimension: int = 8,
    metadata: dict[str, Any] | None = None,
) -> tuple[TextDocument, list[VectorEntry]]:
    """A document and its embedded chunks (random vectors), built as ingestion does."""
    document = TextDocument.create(" ".join(texts), source=source, metadata=metadata)
    entries = []
    position = 0
    for index, text in enumerate(texts):
        chunk = TextChunk.create(document, text, index=index, start=position,
                                 end=position + len(text))
        position += len(text) + 1
        entries.append(entry(chunk, rng.standard_normal(dimension)))
    return document, entries

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragloom.chunking import LineSplitter
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing import HashingEmbedder


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteVectorStore]:
    with SqliteVectorStore(tmp_path / "kb.db", collection="default") as opened:
        yield opened


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder(64)


@pytest.fixture
def kb(store: SqliteVectorStore, embedder: HashingEmbedder) -> VectorKnowledgeBase:
    return VectorKnowledgeBase(store, embedder, LineSplitter(), batch_size=8)


def write_folder(root: Path, count: int = 6) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (root / f"doc{i}.txt").write_text(
            "\n".join(f"Line {j} of document {i} about topic {i * 7 + j}." for j in range(3)))
    return root


def write_jsonl(path: Path, count: int) -> None:
    path.write_text("\n".join(json.dumps({"id": i, "text": f"Record number {i} says hello."})
                              for i in range(count)) + "\n")


def chunk_ids_by_source(store: SqliteVectorStore) -> dict[str, list[str]]:
    by_document: dict[str, list[str]] = {}
    for chunk in store.chunks():
        by_document.setdefault(chunk.source, []).append(chunk.id)
    return {source: sorted(ids) for source, ids in sorted(by_document.items())}


def sources(report: Any, field: str) -> list[str]:
    return sorted(Path(s).name for s in getattr(report, field))

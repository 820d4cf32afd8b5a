"""The SQLite store's HNSW sidecar: taken over past the threshold, kept in step with
writes, reloaded by the next process, rebuilt when another process wrote."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("hnswlib", reason="hnswlib is not installed (pip install 'ragloom[ann]')")

from ragloom.filters import parse_filters
from ragloom.stores.ann import AnnSettings, sidecar_path
from ragloom.stores.ann_matrix import ApproximateMatrix
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.types import TextChunk, TextDocument, Vector, VectorEntry

DIM = 16
SETTINGS = AnnSettings(threshold=300, ef_search=200, exact_below=0.2)


def _entries(rng: np.random.Generator, start: int, count: int) -> list[VectorEntry]:
    out = []
    for n in range(start, start + count):
        doc = TextDocument.create(f"text {n}", source=f"doc{n}.txt",
                                  metadata={"group": n % 10})
        chunk = TextChunk.create(doc, f"text {n}", index=0, start=0, end=len(f"text {n}"))
        out.append(VectorEntry(chunk=chunk, embedding=Vector(
            rng.standard_normal(DIM).astype(np.float32).tolist())))
    return out


def _store(db: Path, ann: str = "auto") -> SqliteVectorStore:
    return SqliteVectorStore(db, ann=ann, ann_settings=SETTINGS)  # type: ignore[arg-type]


def _matrix(store: SqliteVectorStore) -> ApproximateMatrix:
    matrix = store._matrix
    assert isinstance(matrix, ApproximateMatrix)
    return matrix


def _ids(matches: list) -> list[str]:  # type: ignore[type-arg]
    return [m.chunk.id for m in matches]


@pytest.fixture()
def filled(tmp_path: Path) -> tuple[Path, list[VectorEntry]]:
    rng = np.random.default_rng(11)
    entries = _entries(rng, 0, 600)
    store = _store(tmp_path / "kb.db")
    store.bind_embedder("fake:random-16", DIM)
    store.add(entries)
    store.close()
    return tmp_path / "kb.db", entries


def test_sidecar_takes_over_and_agrees_with_exact(filled: tuple[Path, list[VectorEntry]]) -> None:
    db, entries = filled
    store, exact = _store(db), _store(db, ann="off")
    first = store.query(entries[0].embedding, top_k=10)
    assert _ids(first)[0] == entries[0].id  # exact answered while the build ran
    assert _matrix(store).wait_until_built(60)
    rng = np.random.default_rng(12)
    overlap = 0
    for _ in range(20):
        query = Vector(rng.standard_normal(DIM).astype(np.float32).tolist())
        got, want = store.query(query, top_k=10), exact.query(query, top_k=10)
        overlap += len(set(_ids(got)) & set(_ids(want)))
        for match in got:
            assert 0.0 <= match.score <= 1.0
    assert overlap / 200 >= 0.95
    same = store.query(entries[5].embedding, top_k=1)[0]
    assert same.chunk.id == entries[5].id and same.score == pytest.approx(1.0, abs=1e-4)
    store.close()
    exact.close()


def test_writes_reach_the_sidecar(filled: tuple[Path, list[VectorEntry]]) -> None:
    db, entries = filled
    store = _store(db)
    store.query(entries[0].embedding, top_k=1)
    assert _matrix(store).wait_until_built(60)
    store.delete([entries[0].id])
    assert entries[0].id not in _ids(store.query(entries[0].embedding, top_k=5))
    fresh = _entries(np.random.default_rng(13), 1000, 1)
    store.add(fresh)
    assert _ids(store.query(fresh[0].embedding, top_k=1)) == [fresh[0].id]
    store.close()


def test_filtered_queries_stay_correct(filled: tuple[Path, list[VectorEntry]]) -> None:
    db, entries = filled
    store = _store(db)
    store.query(entries[0].embedding, top_k=1)
    assert _matrix(store).wait_until_built(60)
    broad = parse_filters({"key": "group", "op": "!=", "value": 3})
    matches = store.query(entries[3].embedding, top_k=10, filters=broad)
    assert len(matches) == 10 and all(m.chunk.metadata["group"] != 3 for m in matches)
    selective = parse_filters({"key": "group", "op": "==", "value": 3})
    matches = store.query(entries[3].embedding, top_k=5, filters=selective)
    assert _ids(matches)[0] == entries[3].id
    assert all(m.chunk.metadata["group"] == 3 for m in matches)
    store.close()


def test_next_process_loads_it_and_a_foreign_write_makes_it_stale(
    filled: tuple[Path, list[VectorEntry]],
) -> None:
    db, entries = filled
    store = _store(db)
    store.query(entries[0].embedding, top_k=1)
    assert _matrix(store).wait_until_built(60)
    store.close()
    path = sidecar_path(str(db), "default")
    assert path is not None and path.is_file()

    reopened = _store(db)
    reopened.query(entries[1].embedding, top_k=1)
    assert _matrix(reopened).approximate  # loaded from disk, no build needed
    reopened.close()

    # Another writer (here: plain sqlite) moves the generation on.
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE collections SET generation = generation + 1")
    labels = path.with_name(path.name + ".labels.json")
    old_stamp = json.loads(labels.read_text())["stamp"]
    stale = _store(db)
    assert _ids(stale.query(entries[2].embedding, top_k=1)) == [entries[2].id]
    assert _matrix(stale).wait_until_built(60)
    # Not loaded (its stamp no longer matched): rebuilt and saved with the new one.
    new_stamp = json.loads(labels.read_text())["stamp"]
    assert new_stamp != old_stamp and new_stamp == _matrix(stale).stamp
    stale.close()


def test_off_stays_exact(filled: tuple[Path, list[VectorEntry]]) -> None:
    db, entries = filled
    store = _store(db, ann="off")
    store.query(entries[0].embedding, top_k=1)
    assert not isinstance(store._matrix, ApproximateMatrix)
    store.close()

"""The HNSW sidecar: recall against exact search, deletes, filters, persistence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("hnswlib", reason="hnswlib is not installed (pip install 'ragloom[ann]')")

from ragloom.stores.ann import AnnSettings, HnswSidecar, sidecar_path


def _unit(rng: np.random.Generator, n: int, dim: int = 32) -> np.ndarray:
    data = rng.standard_normal((n, dim)).astype(np.float32)
    return data / np.linalg.norm(data, axis=1, keepdims=True)


def _exact(data: np.ndarray, ids: list[str], query: np.ndarray, k: int) -> list[str]:
    order = np.argsort(-(data @ query))[:k]
    return [ids[i] for i in order]


@pytest.fixture()
def built() -> tuple[HnswSidecar, np.ndarray, list[str]]:
    rng = np.random.default_rng(7)
    data = _unit(rng, 2000)
    ids = [f"c{n}" for n in range(len(data))]
    sidecar = HnswSidecar(32, AnnSettings(ef_search=128))
    sidecar.build(ids, data, stamp="g1")
    return sidecar, data, ids


def test_recall_against_exact_search(built: tuple[HnswSidecar, np.ndarray, list[str]]) -> None:
    sidecar, data, ids = built
    rng = np.random.default_rng(8)
    hits = 0
    queries = _unit(rng, 50)
    for query in queries:
        found = sidecar.search(query, 10)
        assert found is not None
        hits += len({i for i, _ in found} & set(_exact(data, ids, query, 10)))
    assert hits / (10 * len(queries)) >= 0.95


def test_raw_scores_are_inner_products(built: tuple[HnswSidecar, np.ndarray, list[str]]) -> None:
    sidecar, data, ids = built
    found = sidecar.search(data[3], 3)
    assert found is not None and found[0][0] == "c3"
    assert found[0][1] == pytest.approx(1.0, abs=1e-4)
    position = {item: n for n, item in enumerate(ids)}
    for item, raw in found:
        assert raw == pytest.approx(float(data[position[item]] @ data[3]), abs=1e-4)


def test_removed_and_replaced_ids(built: tuple[HnswSidecar, np.ndarray, list[str]]) -> None:
    sidecar, data, _ = built
    assert sidecar.remove(["c3", "missing"]) == 1
    found = sidecar.search(data[3], 5)
    assert found is not None and "c3" not in {i for i, _ in found}
    sidecar.upsert([("c4", data[3])])
    found = sidecar.search(data[3], 1)
    assert found is not None and found[0][0] == "c4"
    assert len(sidecar) == 1999


def test_filters_stay_correct(built: tuple[HnswSidecar, np.ndarray, list[str]]) -> None:
    sidecar, data, ids = built
    broad = set(ids[::2])
    found = sidecar.search(data[1], 10, allowed=broad)
    assert found is not None and found and {i for i, _ in found} <= broad
    # A selective filter is handed back to exact search.
    assert sidecar.search(data[1], 10, allowed={"c1", "c2"}) is None


def test_save_and_load_checks_the_stamp(
    built: tuple[HnswSidecar, np.ndarray, list[str]], tmp_path: Path
) -> None:
    sidecar, data, _ = built
    sidecar.remove(["c5"])
    path = sidecar_path(str(tmp_path / "kb.db"), "my kb/x")
    assert path is not None and path.name == "kb.db.my_kb_x.hnsw"
    sidecar.save(path)
    stale = HnswSidecar(32)
    assert not stale.load(path, expected_stamp="g2")
    fresh = HnswSidecar(32)
    assert fresh.load(path, expected_stamp="g1")
    assert len(fresh) == 1999
    found = fresh.search(data[6], 1)
    assert found is not None and found[0][0] == "c6"
    assert sidecar_path(":memory:", "x") is None

"""The crash suite, short: ``kill -9`` trials of each kind (CLI ingestion, native
uploads, ``/v1`` files + batches, deletes, knowledge bases and vector stores deleted
during their ingestion) with recovery, then an I/O error and a full disk mid-write.
The full run is ``python bench/crash_suite.py`` (200 trials)."""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

ROOT = Path(__file__).resolve().parents[1]


def _suite() -> ModuleType:
    spec = importlib.util.spec_from_file_location("crash_suite", ROOT / "bench" /
                                                  "crash_suite.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["crash_suite"] = module
    spec.loader.exec_module(module)
    return module


def test_the_checks_catch_lost_duplicated_and_orphaned_documents(tmp_path: Path) -> None:
    suite = _suite()
    with sqlite3.connect(tmp_path / "kb.db") as conn:
        conn.execute("CREATE TABLE documents (collection_id, id, source, chunk_count)")
        conn.execute("CREATE TABLE chunks (collection_id, id, document_id)")
        conn.executemany("INSERT INTO documents VALUES (1, ?, ?, ?)",
                         [("d1", "a.txt", 2), ("d2", "b.txt", 1), ("d3", "gone.txt", 1)])
        conn.executemany("INSERT INTO chunks VALUES (1, ?, ?)",
                         [("c1", "d1"), ("c2", "d1"), ("c3", "d1"), ("c4", "d2"),
                          ("c5", "d3"), ("c6", "nobody")])
    check = suite.check_store(tmp_path, {"a.txt": 2, "b.txt": 1, "c.txt": 1},
                              must={"a.txt", "b.txt", "c.txt"}, may=set(), gone={"gone.txt"})
    assert check.lost == ["c.txt"]
    assert [d.split(":")[0] for d in check.duplicated] == ["a.txt"]  # 3 rows, not 2
    assert any("gone.txt" in o for o in check.orphaned)
    assert any("without a document" in o for o in check.orphaned)
    assert check.integrity == 1 and not check.integrity_failed and not check.ok


def test_kill_9_trials_and_faults_leave_every_store_exact(tmp_path: Path) -> None:
    suite = _suite()
    result = suite.run_suite(4, seed=1, workdir=tmp_path, files=6,
                             kinds=("cli", "native", "v1", "delete"))
    total = result["total"]
    assert total["trials"] == 4
    assert result["failures"] == []
    assert (total["lost"], total["duplicated"], total["orphaned"]) == (0, 0, 0)
    # One server database (the /v1 tables in server.db): a trial checks its store and,
    # for a server, server.db; at least one file each, every check passing.
    assert total["integrity_checks"] >= 4 and total["integrity_failed"] == 0
    assert {kind: row["trials"] for kind, row in result["by_kind"].items()} == {
        "cli": 1, "native": 1, "v1": 1, "delete": 1}
    cases = {case["case"]: case for case in result["faults"]}
    for name in ("io_error", "disk_full"):
        case = cases[name]
        assert case["job_status"] == "failed" and "disk" in case["reason"], case
        assert case["next_upload"] == "completed" and case["store_consistent"], case
        assert case["ok"], case


def test_kill_9_while_collections_and_files_are_deleted_leaves_nothing_of_them(
        tmp_path: Path) -> None:
    suite = _suite()
    # Two trials each of knowledge bases and vector stores deleted during their
    # ingestion (files detached, /v1 files deleted); a clean run of each plan first.
    result = suite.run_suite(4, seed=2, workdir=tmp_path, faults=False,
                             kinds=("kb_delete", "vs_delete"))
    assert result["failures"] == []
    assert {kind: row["trials"] for kind, row in result["by_kind"].items()} == {
        "kb_delete": 2, "vs_delete": 2}
    total = result["total"]
    assert (total["lost"], total["duplicated"], total["orphaned"]) == (0, 0, 0)
    # server.db and the store file of each: both checked in every trial.
    assert total["integrity_checks"] >= 8 and total["integrity_failed"] == 0


def test_the_delete_checks_catch_a_collection_left_behind(tmp_path: Path) -> None:
    suite = _suite()
    deletes = sys.modules["_crash_deletes"]
    with sqlite3.connect(tmp_path / "ragloom.db") as conn:
        conn.execute("CREATE TABLE collections (id, name)")
        conn.execute("CREATE TABLE documents (collection_id, id, source, chunk_count)")
        conn.execute("CREATE TABLE chunks (collection_id, id, document_id)")
        conn.executemany("INSERT INTO collections VALUES (?, ?)", [(1, "kb_a"), (2, "kb_b")])
        conn.executemany("INSERT INTO documents VALUES (?, ?, ?, ?)",
                         [(1, "d1", "a.txt", 1), (2, "d2", "a.txt", 1), (3, "d3", "x", 1)])
        conn.executemany("INSERT INTO chunks VALUES (?, ?, ?)",
                         [(1, "c1", "d1"), (2, "c2", "d2"), (3, "c3", "d3")])
    deletes.plant_sidecar(tmp_path, "ragloom.db", "kb_b")
    check = suite.Check()
    disk = deletes.read_disk(tmp_path, check)
    assert any("without a collection" in o for o in check.orphaned)  # collection 3
    deletes.check_gone_collection(check, disk, "kb_b", "kb_b")
    assert any("still stored" in o for o in check.orphaned)
    assert any("sidecar" in o for o in check.orphaned)
    deletes.check_content(check, "kb_a", disk.collections["kb_a"], {"a.txt": 2},
                          must={"a.txt", "b.txt"}, may=set())
    assert check.lost == ["kb_a/b.txt"] and check.duplicated  # 1 chunk, not 2

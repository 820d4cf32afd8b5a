"""``ragloom ingest`` killed at random points resumes without duplicates or losses;
re-runs and touched files embed nothing; --sync removes exactly the deleted files."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

FILES = 1500
EMBEDDER = ("--embedder", "fake:hashing-64")
WORDS = ["alpha", "beta", "gamma", "delta", "river", "stone", "cloud", "bike", "lunch"]


def make_corpus(root: Path, seed: int = 7) -> Path:
    rng = random.Random(seed)
    for i in range(FILES):
        folder = root / f"d{i % 15}"
        folder.mkdir(parents=True, exist_ok=True)
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 300)))
        (folder / f"f{i}.txt").write_text(f"File {i}.\n\n{words}\n")
    for j in range(5):
        (root / f"r{j}.jsonl").write_text("\n".join(
            json.dumps({"text": f"record {k} of file {j}"}) for k in range(20)) + "\n")
    return root


def command(db: Path, *args: str) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ, RAGLOOM_DB=str(db), NO_COLOR="1")
    return [sys.executable, "-m", "ragloom", "ingest", *args], env


def ingest(db: Path, *args: str) -> dict[str, object]:
    argv, env = command(db, *args, "--json")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def snapshot(db: Path) -> dict[str, list[str]]:
    """Chunk ids per source, straight from the database."""
    conn = sqlite3.connect(db / "ragloom.db")
    rows = conn.execute("SELECT d.source, c.id FROM chunks c JOIN documents d "
                        "ON d.collection_id = c.collection_id AND d.id = c.document_id")
    held: dict[str, list[str]] = {}
    for source, chunk_id in rows:
        held.setdefault(source, []).append(chunk_id)
    (chunks,) = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()
    (distinct,) = conn.execute("SELECT COUNT(DISTINCT id) FROM chunks").fetchone()
    conn.close()
    assert chunks == distinct == sum(len(ids) for ids in held.values())  # no duplicates
    return {source: sorted(ids) for source, ids in held.items()}


def has_chunks_table(db: Path) -> bool:
    """Whether the database exists and its schema holds the chunks table."""
    if not (db / "ragloom.db").exists():
        return False
    conn = sqlite3.connect(db / "ragloom.db")
    try:
        found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                             "AND name = 'chunks'").fetchone()
    finally:
        conn.close()
    return found is not None


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("corpus") / "docs")


@pytest.fixture(scope="module")
def clean(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    db = tmp_path_factory.mktemp("clean") / "db"
    report = ingest(db, str(corpus), *EMBEDDER)
    assert report["skipped"] == [] and len(report["new"]) == FILES + 100  # type: ignore[arg-type]
    return snapshot(db)


def test_killed_runs_resume_to_exactly_the_clean_result(
        corpus: Path, clean: dict[str, list[str]], tmp_path: Path) -> None:
    db = tmp_path / "db"
    rng = random.Random(2024)
    stored: list[int] = []
    for delay in (rng.uniform(0.6, 2.0) for _ in range(3)):
        argv, env = command(db, str(corpus), *EMBEDDER)
        process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        # A kill before the schema was written leaves at most an empty file: nothing.
        partial = snapshot(db) if has_chunks_table(db) else {}
        assert all(clean[source] == ids for source, ids in partial.items())
        stored.append(len(partial))
    assert stored == sorted(stored) and stored[0] < len(clean)  # the kills interrupted runs
    final = ingest(db, str(corpus), *EMBEDDER)
    assert snapshot(db) == clean
    unchanged = final["unchanged"]
    assert isinstance(unchanged, list) and len(unchanged) == len(partial)
    again = ingest(db, str(corpus))
    assert again["texts_embedded"] == 0 and again["chunks_written"] == 0


def test_rerun_touch_and_sync(corpus: Path, clean: dict[str, list[str]],
                              tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    make_corpus(folder)
    db = tmp_path / "db"
    ingest(db, str(folder), *EMBEDDER)
    for name in ("d0/f0.txt", "d3/f3.txt"):
        stamp = time.time() + 50
        os.utime(folder / name, (stamp, stamp))
    touched = ingest(db, str(folder))
    assert touched["texts_embedded"] == 0 and touched["new"] == touched["replaced"] == []
    gone = [folder / "d1/f1.txt", folder / "d2/f17.txt", folder / "r1.jsonl"]
    for path in gone:
        path.unlink()
    synced = ingest(db, str(folder), "--sync")
    expected = {str(gone[0]), str(gone[1])} | {f"{gone[2]}#{k}" for k in range(20)}
    assert set(synced["removed"]) == expected  # type: ignore[arg-type]
    held = snapshot(db)
    renamed = {s.replace(str(folder), str(corpus)): ids for s, ids in held.items()}
    assert renamed.keys() == clean.keys() - {s.replace(str(folder), str(corpus))
                                             for s in expected}
    assert all(len(ids) == len(clean[s]) for s, ids in renamed.items())


def test_jsonl_shrink_and_sync_from_the_cli(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    records = folder / "r.jsonl"
    records.write_text("\n".join(json.dumps({"text": f"row {i} text"}) for i in range(6)))
    db = tmp_path / "db"
    ingest(db, str(folder), *EMBEDDER)
    records.write_text("\n".join(json.dumps({"text": f"row {i} text"}) for i in range(2)))
    report = ingest(db, str(folder), "--sync")
    assert sorted(report["removed"]) == [f"{records}#{i}" for i in range(2, 6)]  # type: ignore
    assert sorted(snapshot(db)) == [f"{records}#0", f"{records}#1"]
    assert report["texts_embedded"] == 0  # the kept rows came from the embedding cache

"""The graph commands through the real ``ragloom`` entry point (fake embedder, offline
extractor), on the bundled samples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"


def run(db: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, RAGLOOM_DB=str(db), COLUMNS="200", NO_COLOR="1",
               RAGLOOM_EMBEDDER="fake:hashing-64")
    result = subprocess.run([sys.executable, "-m", "ragloom", *args], capture_output=True,
                            text=True, env=env, timeout=300)
    if check and result.returncode != 0:
        raise AssertionError(f"ragloom {' '.join(args)}: {result.stdout}\n{result.stderr}")
    return result


def as_json(db: Path, *args: str) -> Any:
    return json.loads(run(db, *args, "--json").stdout)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("graphcli") / "db"
    report = as_json(path, "ingest", str(SAMPLES), "--kb", "shop", "--graph")
    assert report["graph"]["documents"] == 3 and report["graph"]["failures"] == []
    return path


def test_graph_show_lists_recognisable_entities_with_evidence(db: Path) -> None:
    data = as_json(db, "graph", "show", "shop")
    assert data == as_json(db, "graph", "show", "--kb", "shop")
    assert data["settings"] == {"extractor": "offline"}
    names = {e["name"] for e in data["entities"]}
    assert {"Priya Shah", "Lantern & Loom Bicycle Shop", "warranty"} <= names
    assert all(r["evidence"] for r in data["relations"])
    assert all(e["mentions"] >= 1 for e in data["entities"])


def test_neighbours_and_graph_search(db: Path) -> None:
    data = as_json(db, "graph", "neighbours", "priya shah", "--kb", "shop")
    assert data["entity"]["name"] == "Priya Shah"
    assert "store manager" in data["mentions"][0]["evidence"]
    assert "Lantern & Loom Bicycle Shop" in {n["name"] for n in data["neighbours"]}
    missing = run(db, "graph", "neighbours", "Nobody Here", "--kb", "shop", check=False)
    assert missing.returncode != 0 and "no entity named" in missing.stderr
    found = as_json(db, "search", "What does Priya Shah do?", "--kb", "shop", "--graph")
    assert found["matches"][0]["metadata"]["file_name"] == "staff-handbook.md"


def test_setting_is_kept_and_switching_off_reingests(db: Path) -> None:
    again = as_json(db, "ingest", str(SAMPLES), "--kb", "shop")
    assert len(again["unchanged"]) == 3 and again["graph"]["documents"] == 0
    off = as_json(db, "ingest", str(SAMPLES), "--kb", "shop", "--no-graph")
    assert len(off["replaced"]) == 3 and "graph" not in off
    assert as_json(db, "graph", "show", "shop")["entities"] == []
    on = as_json(db, "ingest", str(SAMPLES), "--kb", "shop", "--graph")
    assert len(on["replaced"]) == 3 and on["graph"]["entities"] > 0

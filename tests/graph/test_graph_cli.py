"""The graph commands of the ``ragloom`` app (in process, fake embedder, offline
extractor) on the bundled samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from ragloom.cli.app import app

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"


def run(db: Path, *args: str, code: int = 0) -> Any:
    env = {"RAGLOOM_DB": str(db), "RAGLOOM_EMBEDDER": "fake:hashing-64", "COLUMNS": "200",
           "NO_COLOR": "1"}
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exit_code == code, (args, result.output)
    return json.loads(result.stdout) if "--json" in args and code == 0 else result


def test_graph_commands_on_the_samples(tmp_path: Path) -> None:
    db = tmp_path / "db"
    report = run(db, "ingest", str(SAMPLES), "--kb", "shop", "--graph", "--json")
    assert report["graph"]["documents"] == 3 and report["graph"]["failures"] == []

    data = run(db, "graph", "show", "shop", "--json")
    assert data["settings"] == {"extractor": "offline"}
    names = {e["name"] for e in data["entities"]}
    assert {"Priya Shah", "Lantern & Loom Bicycle Shop", "warranty"} <= names
    assert all(r["evidence"] for r in data["relations"])

    near = run(db, "graph", "neighbours", "priya shah", "--kb", "shop", "--json")
    assert near["entity"]["name"] == "Priya Shah"
    assert "store manager" in near["mentions"][0]["evidence"]
    assert "Lantern & Loom Bicycle Shop" in {n["name"] for n in near["neighbours"]}
    missing = run(db, "graph", "neighbours", "Nobody Here", "--kb", "shop", code=1)
    assert "no entity named" in missing.output

    found = run(db, "search", "What does Priya Shah do?", "--kb", "shop", "--graph", "--json")
    assert found["matches"][0]["metadata"]["file_name"] == "staff-handbook.md"

    # The setting is kept: a run without flags is unchanged; --no-graph re-ingests.
    off = run(db, "ingest", str(SAMPLES), "--kb", "shop", "--no-graph", "--json")
    assert len(off["replaced"]) == 3 and "graph" not in off
    assert run(db, "graph", "show", "--kb", "shop", "--json")["entities"] == []

"""``ragloom search`` takes its defaults from ``[retrieval]`` in ragloom.toml."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import FAKE, SAMPLES


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, RAGLOOM_DB=str(cwd / "db"), COLUMNS="200", NO_COLOR="1")
    env.pop("RAGLOOM_CONFIG", None)
    result = subprocess.run([sys.executable, "-m", "ragloom", *args], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return result


def test_search_defaults_come_from_the_retrieval_table(tmp_path: Path) -> None:
    _run(tmp_path, "ingest", str(SAMPLES), *FAKE)
    query = "the shop lunch break"
    found = json.loads(_run(tmp_path, "search", query, "--json").stdout)["matches"]
    assert len(found) > 2  # the built-in default asks for 5
    (tmp_path / "ragloom.toml").write_text('[retrieval]\nmode = "keyword"\ntop_k = 2\n')
    found = json.loads(_run(tmp_path, "search", query, "--json").stdout)["matches"]
    assert len(found) == 2
    assert "lunch" in found[0]["text"].lower()
    keyword_scores = [m["raw_score"] for m in found]
    # Flags still win over the file.
    found = json.loads(_run(tmp_path, "search", query, "--mode", "vector", "--top-k", "3",
                            "--json").stdout)["matches"]
    assert len(found) == 3
    assert [m["raw_score"] for m in found[:2]] != keyword_scores

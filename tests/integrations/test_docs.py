"""docs/integrations.md's examples run as written (each a script in a fresh process),
offline, with the bundled embedder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BLOCKS = dict(zip(("langchain", "haystack", "llama_index"), re.findall(
    r"```python\n(.*?)```", (REPO / "docs" / "integrations.md").read_text(encoding="utf-8"),
    re.S), strict=True))


@pytest.mark.parametrize("framework", list(BLOCKS))
def test_example_runs(framework: str, tmp_path: Path) -> None:
    pytest.importorskip({"langchain": "langchain_core", "haystack": "haystack",
                         "llama_index": "llama_index.core"}[framework])
    code = BLOCKS[framework]
    assert f"ragloom.integrations.{framework}" in code and "assert " in code
    (tmp_path / "example.py").write_text(code, encoding="utf-8")
    path = os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, env=dict(os.environ, PYTHONPATH=path))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "kb.db").exists()  # a real SQLite file was written

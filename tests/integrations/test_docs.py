"""docs/integrations.md's examples run as written, offline, with the bundled embedder:
one script in a fresh process (they share kb.db, each with its own collection)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("haystack")
pytest.importorskip("llama_index.core")

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def test_examples_run(tmp_path: Path) -> None:
    text = (REPO / "docs" / "integrations.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 3
    for block, framework in zip(blocks, ("langchain", "haystack", "llama_index"), strict=True):
        assert f"ragloom.integrations.{framework}" in block and "assert " in block
    (tmp_path / "examples.py").write_text("\n".join(blocks) + "\nprint('all ran')\n",
                                          encoding="utf-8")
    path = os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "examples.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, env=dict(os.environ, PYTHONPATH=path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("all ran")
    assert (tmp_path / "kb.db").exists()  # a real SQLite file, three collections in it
    from ragloom.stores.sqlite import SqliteVectorStore

    store = SqliteVectorStore(tmp_path / "kb.db")
    assert {c.name for c in store.list_collections()} == {"notes", "handbook", "llama"}
    store.close()

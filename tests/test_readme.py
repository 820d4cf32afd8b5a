"""The README's CLI tour runs as written (with the real bundled models)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.integration


def tour_commands() -> list[list[str]]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n\. \.venv/bin/activate\n(.*?)```", readme, re.S)
    assert block, "the README lost its CLI tour"
    commands = []
    for line in block.group(1).splitlines():
        words = shlex.split(line, comments=True)
        if words:
            commands.append(words)
    return commands


def test_readme_tour_runs(tmp_path: Path) -> None:
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    from tests.evaluation.test_runner import write_beir

    beir = write_beir(tmp_path / "beir")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGLOOM_DB")}
    ran = 0
    for words in tour_commands():
        assert words[0] == "ragloom"
        if words[1] == "eval":
            # The tour points at a user's BEIR folder; a tiny one stands in for it.
            words = ["ragloom", "eval", str(beir), "--embedder", "fake:hashing-64"]
        result = subprocess.run([sys.executable, "-m", "ragloom", *words[1:]], cwd=tmp_path,
                                capture_output=True, text=True, env=env, timeout=600)
        assert result.returncode == 0, (words, result.stdout, result.stderr)
        ran += 1
    assert ran >= 6

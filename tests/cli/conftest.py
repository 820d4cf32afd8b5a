from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"


class Cli:
    """Runs the real ``ragloom`` entry point in a subprocess against a temp database."""

    def __init__(self, db: Path) -> None:
        self.db = db

    def __call__(self, *args: str, stdin: str | None = None,
                 check: bool | None = True) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, RAGLOOM_DB=str(self.db), COLUMNS="200", NO_COLOR="1")
        result = subprocess.run(
            [sys.executable, "-m", "ragloom", *args], input=stdin, capture_output=True,
            text=True, env=env, timeout=600,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"ragloom {' '.join(args)} failed ({result.returncode}):\n"
                                 f"{result.stdout}\n{result.stderr}")
        return result

    def json(self, *args: str) -> object:
        return json.loads(self(*args, "--json").stdout)


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "db")


@pytest.fixture
def sample_dir(tmp_path: Path) -> Path:
    target = tmp_path / "samples"
    shutil.copytree(SAMPLES, target)
    return target


FAKE = ("--embedder", "fake:hashing-256")
Runner = Callable[..., subprocess.CompletedProcess[str]]

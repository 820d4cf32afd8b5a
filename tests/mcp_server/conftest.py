"""Knowledge bases for the tests of ragloom.mcp (a folder not named mcp, which would
shadow the SDK), and helpers to drive a server with the SDK's own ``Client`` from
synchronous tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"
FAKE_EMBEDDER = "fake:hashing-256"
FAKE_LLM = "fake:echo"
T = TypeVar("T")


def ragloom(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real ``ragloom`` command, checked."""
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    result = subprocess.run([sys.executable, "-m", "ragloom", *args], capture_output=True,
                            text=True, env=env, cwd=cwd, timeout=600)
    assert result.returncode == 0, f"ragloom {args} failed:\n{result.stdout}\n{result.stderr}"
    return result


def ingest_samples(tmp: Path, *options: str) -> Path:
    """``ragloom ingest`` of a copy of samples/ into ``tmp/db``; the database folder."""
    folder = tmp / "samples"
    shutil.copytree(SAMPLES, folder)
    ragloom("ingest", str(folder), "--db", str(tmp / "db"), *options)
    return tmp / "db"


@pytest.fixture(scope="module")
def fake_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """samples/ ingested with the hashing embedder (fast, deterministic)."""
    return ingest_samples(tmp_path_factory.mktemp("mcp"), "--embedder", FAKE_EMBEDDER)


def run(function: Callable[..., Awaitable[T]], *args: Any) -> T:
    return anyio.run(function, *args)


def payload(result: Any) -> dict[str, Any]:
    """A successful tool result's JSON."""
    assert not result.is_error, result.content[0].text
    data: dict[str, Any] = json.loads(result.content[0].text)
    assert result.structured_content == data
    return data


def error_text(result: Any) -> str:
    assert result.is_error, result.content[0].text
    text: str = result.content[0].text
    return text


def files(passages: list[dict[str, Any]]) -> list[str]:
    return [p["file"] for p in passages]

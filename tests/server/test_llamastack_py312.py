"""Llama Stack's clients that need Python >= 3.12, against the real app.

* 0.7.5 (current): Vector IO by ``vector_store_id``, vector store search with
  ``ranking_options``, and the ``Agent`` (Responses + Conversations) with
  ``file_search`` and with the specification's ``builtin::rag`` tool group, streamed
  and not (``llamastack_07_script.py``).
* 0.2.23 (the specification's era): vector dbs, Vector IO, the RAG tool, tool groups,
  the agent with ``EventLogger``, agents and sessions lists, and an OpenAI-style call
  under ``/v1/openai/v1`` (``llamastack_02_script.py``).

Each test builds (once, cached under ``~/.cache/ragloom-tests`` or
``$RAGLOOM_TEST_CACHE``) a small venv with its client from the first ``python3.12``+
it finds, and runs its script through it; without such a Python it is skipped,
saying why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import LiveServer, start_server

# Builds venvs of Python >= 3.12 with the 0.2.23 and 0.7.5 clients (about 2 minutes
# the first time on a machine): `make test-slow`.
pytestmark = pytest.mark.slow

VERSION, VERSION_02 = "0.7.5", "0.2.23"
HERE = Path(__file__).parent
CANDIDATES = ("/root/.pyenv/versions/3.12.1/bin/python", "python3.13", "python3.12")
LUNCH = "Lunch policy. The unpaid lunch break is 30 minutes, between noon and two."
VPN = "Connect to the VPN before opening the payroll system."


def python312() -> str | None:
    for candidate in (os.environ.get("RAGLOOM_PY312", ""), *CANDIDATES):
        found = shutil.which(candidate) if candidate else None
        if found:
            return found
    return None


def client_venv(python: str, cache: Path, version: str) -> Path:
    """A venv with llama-stack-client ``version``, built once under ``cache``."""
    venv = cache / f"llama-stack-client-{version}"
    interpreter = venv / "bin" / "python"
    if (venv / ".ready").exists():
        return interpreter
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)
    install = subprocess.run([str(interpreter), "-m", "pip", "install", "-q",
                              f"llama-stack-client=={version}"],
                             capture_output=True, text=True, timeout=600)
    if install.returncode != 0:
        pytest.skip(f"could not install llama-stack-client {version}: "
                    f"{install.stderr[-500:]}")
    (venv / ".ready").write_text(version)
    return interpreter


def interpreter(request: pytest.FixtureRequest, version: str) -> str:
    python = python312()
    if python is None:
        pytest.skip(f"llama-stack-client {version} needs Python >= 3.12; none found "
                    f"(tried {', '.join(CANDIDATES)} and $RAGLOOM_PY312)")
    # Under the home folder, so fresh clones (CI) on the same machine reuse it.
    cache = Path(os.environ.get("RAGLOOM_TEST_CACHE", Path.home() / ".cache" /
                                "ragloom-tests"))
    cache.mkdir(parents=True, exist_ok=True)
    return str(client_venv(python, cache, version))


def run_script(python: str, script: str, *args: str) -> dict[str, Any]:
    run = subprocess.run([python, str(HERE / script), *args], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    version = subprocess.run([python, "--version"], capture_output=True, text=True)
    print(f"\n{script} ran on {version.stdout.strip()} ({python})")
    found: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return found


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, str, str]]:
    from ragloom.server.auth import KeyStore
    from ragloom.server.db import ServerDatabase

    db = tmp_path_factory.mktemp("llamastack07") / "ragloom.db"
    database = ServerDatabase(db.parent / "server.db")
    key = KeyStore(database).create_key("alice").key
    database.close()
    server = start_server(db, rate_limit=0)
    http = server.client(key)
    vs = http.post("/v1/vector_stores", json={"name": "handbook"}).json()["id"]
    for name, text in (("lunch.txt", LUNCH), ("vpn.txt", VPN)):
        file_id = http.post("/v1/files", data={"purpose": "assistants"},
                            files={"file": (name, text.encode())}).json()["id"]
        http.post(f"/v1/vector_stores/{vs}/files", json={"file_id": file_id})
    wait_files(http, vs)
    http.post("/v1/vector-dbs", json={"vector_db_id": "kb", "embedding_model": "m"})
    http.post("/v1/tool-runtime/rag-tool/insert", json={
        "vector_db_id": "kb", "chunk_size_in_tokens": 128, "documents": [
            {"document_id": "leave.md", "content": "Annual leave is 25 days a year."},
            {"document_id": "lunch.md", "content": LUNCH}]})
    yield server, key, vs
    server.stop()


def wait_files(http: httpx.Client, vs: str) -> None:
    import time

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        counts = http.get(f"/v1/vector_stores/{vs}").json()["file_counts"]
        if counts["completed"] == 2:
            return
        time.sleep(0.05)
    raise AssertionError(f"files not ingested: {counts}")


def test_the_07_client_end_to_end(request: pytest.FixtureRequest,
                                  served: tuple[LiveServer, str, str]) -> None:
    python = interpreter(request, VERSION)
    server, key, vs = served
    out = run_script(python, "llamastack_07_script.py", server.url, key, "fake:echo", vs,
                     "kb")

    assert out["vector_io_kb"] == {"document_id": "parking.md", "chunk_id": "parking-1",
                                   "model": "fake:hashing-64", "dimension": 64}
    assert any("30 minutes" in text for text in out["vector_io_vs"])
    assert out["search"] and out["search"][0] == "lunch.txt"
    assert out["session_is_conversation"] is True
    stream = out["stream"]
    assert stream["steps"][:3] == ["inference", "tool_execution", "inference"], stream
    assert stream["events"][0] == "TurnStarted" and stream["events"][-1] == "TurnCompleted"
    assert "30 minutes" in stream["text"]
    assert "VPN" in out["whole"]
    assert out["conversation_items"] >= 6  # two turns: question, search, answer each
    rag = out["rag_stream"]
    assert "tool_execution" in rag["steps"] and "25 days" in rag["text"], rag



def test_the_0_2_23_client_end_to_end(request: pytest.FixtureRequest,
                                      tmp_path: Path) -> None:
    python = interpreter(request, VERSION_02)
    from ragloom.server.auth import KeyStore
    from ragloom.server.db import ServerDatabase

    database = ServerDatabase(tmp_path / "server.db")
    key = KeyStore(database).create_key("carol").key
    database.close()
    server = start_server(tmp_path / "ragloom.db", rate_limit=0)
    try:
        out = run_script(python, "llamastack_02_script.py", server.url, key, "fake:echo")
    finally:
        server.stop()
    assert out["registered"] == ["handbook", "Handbook"]
    assert out["vector_io"] == ["parking.md", "p1"]
    assert out["rag_query"] == ["leave.md"]
    assert out["toolgroups"] == ["builtin::rag"] and out["invoke"] == "lunch.md"
    log = out["log"]
    assert "tool_execution> Tool:knowledge_search Args:" in log and "lunch.md" in log
    assert "inference> " in log and "30 minutes" in log
    assert out["agents"] == 1 and out["sessions"] == 1
    assert out["vector_store"].startswith("vs_")

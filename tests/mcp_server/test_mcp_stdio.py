"""``ragloom mcp`` as a real subprocess over stdio, as Claude Desktop starts it."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver")

from mcp import Client, StdioServerParameters

from tests.mcp_server.conftest import (
    FAKE_EMBEDDER,
    FAKE_LLM,
    REPO,
    error_text,
    files,
    payload,
    run,
)


def params(db: Path, *options: str) -> StdioServerParameters:
    path = os.pathsep.join(p for p in (str(REPO / "src"), str(REPO),
                                       os.environ.get("PYTHONPATH", "")) if p)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragloom", "mcp", "--db", str(db), "--embedder", FAKE_EMBEDDER,
              "--llm", FAKE_LLM, *options],
        env={"PYTHONPATH": path}, cwd=str(db.parent))


async def _session(server: StdioServerParameters,
                   calls: list[tuple[str, dict[str, Any]]]) -> tuple[set[str], list[Any]]:
    async with Client(server) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        return names, [await client.call_tool(name, args) for name, args in calls]


def test_stdio_read_only(fake_db: Path) -> None:
    names, (found, bad, answer) = run(_session, params(fake_db), [
        ("search", {"query": "unpaid lunch break", "mode": "keyword", "top_k": 3}),
        ("search", {"query": "lunch", "top_k": -5}),
        ("ask", {"question": "How long is the unpaid lunch break?"}),
    ])
    assert names == {"search", "ask", "list_knowledge_bases"}
    assert files(payload(found)["passages"])[0] == "staff-handbook.md"
    assert "top_k" in error_text(bad)
    assert payload(answer)["citations"]


def test_stdio_with_writes(tmp_path: Path) -> None:
    db = tmp_path / "db"
    names, (added, found) = run(_session, params(db, "--allow-writes", "--kb", "notes"), [
        ("ingest_text", {"text": "Gate code: 4711.", "source": "gate.txt"}),
        ("search", {"query": "gate code", "mode": "keyword"}),
    ])
    assert {"ingest_text", "delete_document"} <= names
    assert payload(added)["knowledge_base"] == "notes"
    assert files(payload(found)["passages"]) == ["gate.txt"]
    assert (db / "ragloom.db").exists()

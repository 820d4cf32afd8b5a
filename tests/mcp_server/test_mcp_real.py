"""The MCP tools with the real bundled models: MiniLM for search, SmolLM2 for ask."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver")

from mcp import Client

from ragloom.mcp.local import LocalBackend
from ragloom.mcp.server import build_server
from tests.mcp_server.conftest import files, ingest_samples, payload, run

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def bundled_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """samples/ ingested with the default (bundled) embedder."""
    return ingest_samples(tmp_path_factory.mktemp("mcp-real"))


async def _calls(backend: LocalBackend, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async with Client(build_server(lambda: backend)) as client:
        return [await client.call_tool(name, args) for name, args in calls]


def test_search_with_the_bundled_embedder(bundled_db: Path) -> None:
    backend = LocalBackend(str(bundled_db))
    results = run(_calls, backend, [
        ("search", {"query": "battery storage over winter", "mode": mode, "top_k": 2})
        for mode in ("vector", "keyword", "hybrid")])
    for mode, result in zip(("vector", "keyword", "hybrid"), results, strict=True):
        assert files(payload(result)["passages"])[0] == "e-bike-care.txt", mode
    embedder = next(iter(backend._embedders))
    assert embedder.startswith("local:")


def test_ask_with_the_bundled_model(bundled_db: Path) -> None:
    backend = LocalBackend(str(bundled_db))
    answer = payload(run(_calls, backend, [
        ("ask", {"question": "How long is the unpaid lunch break?"})])[0])
    assert "30" in answer["answer"]
    assert answer["citations"]
    cited = answer["sources"][answer["citations"][0]["number"] - 1]
    assert cited["file"] == "staff-handbook.md" and "30 minutes" in cited["text"]
    assert answer["model"] and "smollm2" in answer["model"].lower()


def test_stdio_with_the_bundled_embedder(bundled_db: Path) -> None:
    """``ragloom mcp`` as Claude Desktop starts it, loading the real embedder (the SDK
    keeps the protocol's standard output apart from anything the models print)."""
    import os
    import sys

    from mcp import StdioServerParameters

    from tests.mcp_server.conftest import REPO

    server = StdioServerParameters(
        command=sys.executable, args=["-m", "ragloom", "mcp", "--db", str(bundled_db)],
        env={"PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])})

    async def calls() -> list[Any]:
        async with Client(server) as client:
            return [await client.call_tool("search", {"query": "battery storage over winter"}),
                    await client.call_tool("search", {"query": "unpaid lunch break",
                                                      "mode": "vector"})]

    winter, lunch = run(calls)
    assert files(payload(winter)["passages"])[0] == "e-bike-care.txt"
    assert files(payload(lunch)["passages"])[0] == "staff-handbook.md"

"""The MCP server in memory, driven by the SDK's ``Client``, over a local database
built with the fake embedder and answered by the echo model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver")

from mcp import Client

from ragloom.mcp.local import LocalBackend
from ragloom.mcp.server import KNOWLEDGE_BASES_URI, build_server
from tests.mcp_server.conftest import (
    FAKE_EMBEDDER,
    FAKE_LLM,
    error_text,
    files,
    payload,
    run,
)

READ_TOOLS = {"search", "ask", "list_knowledge_bases"}
WRITE_TOOLS = {"ingest_text", "delete_document"}


def server(db: Path, *, allow_writes: bool = False, kb: str | None = None) -> Any:
    backend = LocalBackend(str(db), kb, embedder=FAKE_EMBEDDER, llm=FAKE_LLM)
    return build_server(lambda: backend, allow_writes=allow_writes)


async def _calls(mcp_server: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async with Client(mcp_server) as client:
        return [await client.call_tool(name, args) for name, args in calls]


def call(mcp_server: Any, name: str, **args: Any) -> Any:
    return run(_calls, mcp_server, [(name, args)])[0]


async def _tool_names(mcp_server: Any) -> set[str]:
    async with Client(mcp_server) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


def test_write_tools_only_when_allowed(fake_db: Path) -> None:
    assert run(_tool_names, server(fake_db)) == READ_TOOLS
    assert run(_tool_names, server(fake_db, allow_writes=True)) == READ_TOOLS | WRITE_TOOLS


def test_search_finds_the_right_file_with_its_location(fake_db: Path) -> None:
    found = payload(call(server(fake_db), "search", query="unpaid lunch break",
                         mode="keyword", top_k=2))
    passages = found["passages"]
    assert files(passages)[0] == "staff-handbook.md"
    assert len(passages) <= 2 and found["mode"] == "keyword"
    first = passages[0]
    assert "lunch" in first["text"].lower()
    assert Path(first["source"]).name == "staff-handbook.md"
    assert first["location"].startswith("staff-handbook.md")
    assert 0.0 <= first["score"] <= 1.0
    assert [p["number"] for p in passages] == list(range(1, len(passages) + 1))


def test_filters_in_ragloom_filter_json(fake_db: Path) -> None:
    mcp_server = server(fake_db)
    for filters in ('{"file_name": "product-faq.md"}',
                    {"key": "file_name", "op": "==", "value": "product-faq.md"}):
        found = payload(call(mcp_server, "search", query="battery warranty", filters=filters))
        assert found["passages"] and set(files(found["passages"])) == {"product-faq.md"}


@pytest.mark.parametrize(("args", "argument"), [
    ({"top_k": -5}, "top_k"),
    ({"top_k": 0}, "top_k"),
    ({"top_k": "many"}, "top_k"),
    ({"mode": "fuzzy"}, "mode"),
    ({"filters": "{not json"}, "filters"),
    ({"filters": '{"key": "year", "op": "~", "value": 1}'}, "filters"),
    ({"filters": '{"no_such_key": 1}'}, "filters"),
    ({"knowledge_base": "nope"}, "knowledge_base"),
    ({"query": "   "}, "query"),
])
def test_bad_search_arguments_are_tool_errors_naming_them(
        fake_db: Path, args: dict[str, Any], argument: str) -> None:
    text = error_text(call(server(fake_db), "search", **{"query": "battery", **args}))
    assert argument in text
    assert text.strip() != "Error executing tool search"


def test_unknown_knowledge_base_lists_the_known_ones(fake_db: Path) -> None:
    text = error_text(call(server(fake_db), "ask", question="why?", knowledge_base="nope"))
    assert "knowledge_base" in text and "'nope'" in text and "default" in text


def test_ask_answers_with_citations_and_keeps_a_session(fake_db: Path) -> None:
    from ragloom.chat import SessionStore

    first, second = run(_calls, server(fake_db), [
        ("ask", {"question": "How long is the unpaid lunch break?", "session": "chat-1"}),
        ("ask", {"question": "And is it paid?", "session": "chat-1"}),
    ])
    answer = payload(first)
    assert answer["answer"] and answer["citations"]
    cited = answer["citations"][0]
    assert 1 <= cited["number"] <= len(answer["sources"])
    assert cited["source"] == answer["sources"][cited["number"] - 1]["source"]
    assert answer["quotes"] and answer["quotes"][0]["text"] in answer["answer"]
    assert payload(second)["session"] == "chat-1"
    stored = SessionStore(fake_db / "ragloom.db").messages("chat-1")
    assert [m.role for m in stored] == ["user", "assistant", "user", "assistant"]
    assert stored[0].content == "How long is the unpaid lunch break?"


def test_list_knowledge_bases_tool_and_resource(fake_db: Path) -> None:
    async def read(mcp_server: Any) -> tuple[Any, Any, Any]:
        async with Client(mcp_server) as client:
            listed = await client.list_resources()
            content = await client.read_resource(KNOWLEDGE_BASES_URI)
            return listed, content, await client.call_tool("list_knowledge_bases", {})

    import json

    listed, content, tool = run(read, server(fake_db))
    assert [str(r.uri) for r in listed.resources] == [KNOWLEDGE_BASES_URI]
    bases = json.loads(content.contents[0].text)["knowledge_bases"]
    assert bases == payload(tool)["knowledge_bases"]
    assert [(b["name"], b["documents"]) for b in bases] == [("default", 3)]
    assert bases[0]["chunks"] >= 3 and bases[0]["embedder"] == FAKE_EMBEDDER


def test_ingest_text_then_search_then_delete(tmp_path: Path) -> None:
    db = tmp_path / "db"
    mcp_server = server(db, allow_writes=True, kb="notes")
    added, found, deleted, gone, again = run(_calls, mcp_server, [
        ("ingest_text", {"text": "The spare key is under the blue flowerpot.",
                         "source": "key.txt", "metadata": {"topic": "house"}}),
        ("search", {"query": "blue flowerpot spare key", "mode": "keyword"}),
        ("delete_document", {"document_id": "key.txt"}),
        ("list_knowledge_bases", {}),
        ("delete_document", {"document_id": "key.txt"}),
    ])
    document = payload(added)
    assert document["knowledge_base"] == "notes" and document["chunks"] >= 1
    passages = payload(found)["passages"]
    assert passages[0]["source"] == "key.txt" and passages[0]["document_id"] == document[
        "document_id"]
    assert payload(deleted)["deleted"] == "key.txt"
    assert payload(gone)["knowledge_bases"][0]["documents"] == 0
    assert "document_id" in error_text(again)


def test_bad_write_arguments(tmp_path: Path) -> None:
    mcp_server = server(tmp_path / "db", allow_writes=True)
    empty, not_object = run(_calls, mcp_server, [
        ("ingest_text", {"text": "  "}),
        ("ingest_text", {"text": "x", "metadata": "topic=house"}),
    ])
    assert "text" in error_text(empty)
    assert "metadata" in error_text(not_object)


def test_empty_database_lists_nothing_and_says_why_search_fails(tmp_path: Path) -> None:
    mcp_server = server(tmp_path / "none")
    assert payload(call(mcp_server, "list_knowledge_bases"))["knowledge_bases"] == []
    text = error_text(call(mcp_server, "search", query="anything"))
    assert "knowledge_base" in text and "ragloom ingest" in text


def test_nothing_heavy_loads_before_a_tool_needs_it(fake_db: Path) -> None:
    backend = LocalBackend(str(fake_db), llm=FAKE_LLM)
    build_server(lambda: backend, allow_writes=True)
    payload(run(_calls, build_server(lambda: backend), [("list_knowledge_bases", {})])[0])
    assert backend._model is None and backend._bases == {} and backend._embedders == {}


def test_import_ragloom_does_not_import_the_sdk() -> None:
    code = ("import sys, ragloom, ragloom.mcp, ragloom.mcp.tools, ragloom.mcp.local, "
            "ragloom.cli.app; print([m for m in sys.modules if m == 'mcp' or "
            "m.startswith('mcp.')])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


def test_missing_extra_names_the_pip_command(monkeypatch: pytest.MonkeyPatch,
                                             fake_db: Path) -> None:
    from typer.testing import CliRunner

    from ragloom.cli.app import app
    from ragloom.errors import MissingDependencyError
    from ragloom.mcp.server import require_mcp

    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragloom\[mcp\]'"):
        require_mcp()
    result = CliRunner().invoke(app, ["mcp", "--db", str(fake_db)])
    assert result.exit_code == 2
    assert "pip install 'ragloom[mcp]'" in result.output.replace("\n", "")


def test_building_the_server_leaves_logging_alone(fake_db: Path) -> None:
    import logging

    root = logging.getLogger()
    before = (root.handlers[:], root.level)
    server(fake_db)
    assert (root.handlers[:], root.level) == before


def test_help_lists_the_options() -> None:
    from typer.testing import CliRunner

    from ragloom.cli.app import app

    result = CliRunner().invoke(app, ["mcp", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for option in ("--db", "--kb", "--transport", "--host", "--port", "--allow-writes"):
        assert option in result.output, option


def test_unknown_transport_is_refused(fake_db: Path) -> None:
    from typer.testing import CliRunner

    from ragloom.cli.app import app

    result = CliRunner().invoke(app, ["mcp", "--db", str(fake_db), "--transport", "sse"])
    assert result.exit_code == 2 and "--transport" in result.output

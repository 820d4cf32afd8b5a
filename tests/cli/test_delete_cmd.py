"""``ragloom delete``: documents by id or source; an unknown one is reported, exit 1."""

from __future__ import annotations

from pathlib import Path

from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing.fakes import HashingEmbedder
from ragloom.types import TextDocument

from .conftest import FAKE, Cli


def _ingested(cli: Cli, tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "rivers.txt").write_text("Rivers carry water to the sea.", encoding="utf-8")
    (folder / "deserts.txt").write_text("Deserts get little rain.", encoding="utf-8")
    cli("ingest", str(folder), *FAKE)
    return folder


def _sources(cli: Cli) -> set[str]:
    store = SqliteVectorStore(cli.db / "ragloom.db", "default")
    try:
        assert store.count() == len(store.list_documents())  # one chunk each, none orphaned
        return {Path(d.source).name for d in store.list_documents()}
    finally:
        store.close()


def test_delete_by_id_and_by_source(cli: Cli, tmp_path: Path) -> None:
    folder = _ingested(cli, tmp_path)
    found = cli.json("search", "rivers", *FAKE, "--mode", "keyword")
    assert isinstance(found, dict)
    rivers_id = found["matches"][0]["document_id"]
    result = cli("delete", rivers_id)
    assert "deleted" in result.stdout and "rivers.txt" in result.stdout
    assert _sources(cli) == {"deserts.txt"}
    report = cli.json("delete", str(folder / "deserts.txt"))
    assert isinstance(report, dict) and report["not_found"] == []
    assert [Path(d["source"]).name for d in report["deleted"]] == ["deserts.txt"]
    assert _sources(cli) == set()


def test_an_unknown_id_is_reported_and_exits_1(cli: Cli, tmp_path: Path) -> None:
    _ingested(cli, tmp_path)
    result = cli("delete", "no-such-document", check=False)
    assert result.returncode == 1
    assert "not found" in result.stderr and "no-such-document" in result.stderr
    assert _sources(cli) == {"rivers.txt", "deserts.txt"}  # nothing else was touched
    both = cli("delete", "no-such-document", str(tmp_path / "docs" / "rivers.txt"), "--json",
               check=False)
    assert both.returncode == 1
    assert '"not_found": [\n    "no-such-document"\n  ]' in both.stdout
    assert _sources(cli) == {"deserts.txt"}  # the known one went, the unknown one is named


def test_knowledge_base_delete_counts_only_what_it_removed() -> None:
    base = VectorKnowledgeBase(InMemoryVectorStore(), HashingEmbedder(32))
    document = TextDocument.create("Rivers carry water.", source="rivers.txt")
    base.ingest([document])
    assert base.delete(["unknown-id"]) == 0
    assert base.delete([document.id, "unknown-id"]) == 1
    assert base.delete([document.id]) == 0

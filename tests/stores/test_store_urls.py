"""Stores by URL (ragloom.stores.factory), every CLI command on every store, and
``ragloom migrate`` from SQLite to PostgreSQL and back, vectors and all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from ragloom.cli.app import app
from ragloom.errors import ConfigurationError
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.stores.factory import parse_location, redact
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.testing.store_conformance import entry, make_chunk
from ragloom.types import TextDocument

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
EMBEDDER = "fake:hashing-32"


def test_paths_stay_sqlite(tmp_path: Path) -> None:
    assert parse_location(str(tmp_path)).target == str(tmp_path / "ragloom.db")
    assert parse_location(str(tmp_path / "x.db")).target == str(tmp_path / "x.db")
    assert parse_location("sqlite:///tmp/a/kb.db").target == "/tmp/a/kb.db"
    assert parse_location("sqlite:rel/kb.db").kind == "sqlite"


def test_urls_name_their_store() -> None:
    pg = parse_location("postgresql://me:secret@db.example:5432/rag?index=hnsw&sslmode=require")
    assert (pg.kind, pg.options) == ("postgresql", {"index": "hnsw"})
    assert pg.target == "postgresql://me:secret@db.example:5432/rag?sslmode=require"
    assert "secret" not in pg.display()
    assert parse_location("postgres://h/db").kind == "postgresql"
    server = parse_location("milvus://milvus.internal:19530")
    assert (server.kind, server.target, server.is_file) == (
        "milvus", "http://milvus.internal:19530", False)
    lite = parse_location("milvus:///data/kb/milvus.db")
    assert (lite.kind, lite.target, lite.is_file) == ("milvus", "/data/kb/milvus.db", True)
    assert redact("postgresql://u:pw@h/db") == "postgresql://u:***@h/db"


@pytest.mark.parametrize("value", ["mysql://h/db", "redis://localhost", "s3://bucket/kb",
                                   "qdrant://localhost:6333", "http://example.org/db"])
def test_unknown_schemes_are_errors_never_folders(value: str) -> None:
    with pytest.raises(ConfigurationError, match="unknown database URL scheme"):
        parse_location(value)


def test_cli_refuses_an_unknown_scheme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["status", "--db", "postgresq://localhost/db"])
    assert result.exit_code == 2
    assert "unknown database URL scheme" in result.output
    result = CliRunner().invoke(app, ["ingest", str(SAMPLES), "--db", "postgresql:",
                                      "--embedder", EMBEDDER])
    assert result.exit_code != 0
    assert not any(tmp_path.iterdir())  # no folder named "postgresql:" or anything else


def _run(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("store", ["postgresql", "milvus"])
def test_every_command_on_a_server_store(
    store: str, request: pytest.FixtureRequest, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    if store == "postgresql":
        db = request.getfixturevalue("pg_url") + ""
        kb = f"cli{tmp_path.name[-6:]}".replace("-", "_")
    else:
        db = f"milvus://{tmp_path / 'milvus.db'}"  # milvus:///abs/path: Milvus Lite
        request.getfixturevalue("milvus_file")  # skips without pymilvus / milvus-lite
        kb = "default"
    samples = tmp_path / "samples"
    shutil.copytree(SAMPLES, samples)
    first = json.loads(_run("ingest", str(samples), "--db", db, "--kb", kb, "--embedder",
                            EMBEDDER, "--json").stdout)
    assert first["new"] and not first["skipped"]
    again = json.loads(_run("ingest", str(samples), "--db", db, "--kb", kb, "--json").stdout)
    assert not again["new"] and again["unchanged"]
    found = json.loads(_run("search", "unpaid lunch break", "--db", db, "--kb", kb,
                            "--json").stdout)
    matches = found["matches"] if isinstance(found, dict) else found
    assert matches and "lunch" in json.dumps(matches).lower()
    status = json.loads(_run("status", "--db", db, "--json").stdout)
    assert kb in [row["name"] for row in status["knowledge_bases"]]
    assert not (tmp_path / "postgresql:").exists()


def _kb_contents(store: Any) -> dict[str, Any]:
    entries = {e.id: e for batch in store.export_entries(7) for e in batch}
    return {
        "chunks": {cid: (e.chunk.text, e.chunk.document_id, e.chunk.index, e.chunk.start,
                         e.chunk.end, e.chunk.page, json.dumps(e.chunk.metadata, sort_keys=True),
                         e.embedding.values.astype(np.float32).tobytes())
                   for cid, e in entries.items()},
        "documents": [(d.id, d.source, d.content_hash, d.chunk_count, d.settings,
                       json.dumps(d.metadata, sort_keys=True)) for d in store.list_documents()],
        "info": store.collection_info(),
    }


def test_migrate_sqlite_to_pgvector_and_back(pg_url: str, tmp_path: Path) -> None:
    source_db = tmp_path / "a.db"
    rng = np.random.default_rng(11)
    with SqliteVectorStore(source_db, collection="handbook") as store:
        kb = VectorKnowledgeBase(store, HashingEmbedder(32), name="handbook")
        kb.ingest([TextDocument.create(f"Policy {i}. " + "Lunch is thirty minutes. " * (i + 1),
                                       source=f"doc{i}.md",
                                       metadata={"year": 2000 + i, "tags": ["a", "b"],
                                                 "nested": {"x": i / 3, "ok": i % 2 == 0},
                                                 "big": 2**60 + i, "none": None, "uni": "日本é"})
                   for i in range(12)])
        store.add([entry(make_chunk(f"loose{i}", f"a loose chunk {i}", {"i": i},
                                    document_id="nodoc"), rng.standard_normal(32))
                   for i in range(3)])
        original = _kb_contents(store)
        assert len(original["chunks"]) > 12
    pg_db = f"{pg_url}"
    result = CliRunner().invoke(app, ["migrate", "--from", str(source_db), "--to", pg_db,
                                      "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["knowledge_bases"][0]["chunks"] == len(original["chunks"])
    from ragloom.stores.pgvector import PgVectorStore

    with PgVectorStore(pg_url, "handbook") as middle:
        assert _kb_contents(middle) == original
    again = CliRunner().invoke(app, ["migrate", "--from", str(source_db), "--to", pg_db])
    assert again.exit_code == 2 and "--replace" in again.output
    back_db = tmp_path / "back.db"
    result = CliRunner().invoke(app, ["migrate", "--from", pg_db, "--to", str(back_db),
                                      "--kb", "handbook"])
    assert result.exit_code == 0, result.output
    assert "counts verified" in result.output
    with SqliteVectorStore(back_db, collection="handbook") as back:
        assert _kb_contents(back) == original

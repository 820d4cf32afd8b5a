from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragloom.config import build_chunker, load_settings, search_options
from ragloom.errors import ConfigurationError
from ragloom.testing.fakes import HashingEmbedder

TOML = """
[chunking]
splitter = "markdown"
chunk_size = 64
chunk_overlap = 8

[retrieval]
mode = "keyword"
top_k = 2
ranker = "rrf"

[generation]
prompt_template = "Q: {question}\\n{contents}"
metadata_keys = ["file_name"]
temperature = 0.1
memory_size = 4
"""


def test_sections_load_merge_and_build(tmp_path: Path) -> None:
    (tmp_path / "ragloom.toml").write_text(TOML)
    settings = load_settings(env={}, cwd=tmp_path, user_config=tmp_path / "none.toml")
    assert settings.generation["metadata_keys"] == ["file_name"]
    options = search_options(settings, top_k=7, mode=None)
    assert (options.mode, options.top_k, options.ranker) == ("keyword", 7, "rrf")
    chunker = build_chunker(settings, HashingEmbedder())
    assert type(chunker).__name__ == "MarkdownSplitter"
    assert chunker.chunk_size == 64 and chunker.chunk_overlap == 8  # type: ignore[union-attr]
    flagged = build_chunker(settings, HashingEmbedder(), splitter="recursive", chunk_size=32)
    assert type(flagged).__name__ == "RecursiveSplitter"
    assert flagged.chunk_size == 32  # type: ignore[union-attr]
    assert build_chunker(load_settings(env={}, cwd=tmp_path / "x", user_config=tmp_path / "n"),
                         HashingEmbedder()) is None


def test_unknown_keys_are_refused(tmp_path: Path) -> None:
    (tmp_path / "ragloom.toml").write_text("[retrieval]\ntopk = 3\n")
    with pytest.raises(ConfigurationError, match=r"\['topk'\] in \[retrieval\]"):
        load_settings(env={}, cwd=tmp_path, user_config=tmp_path / "none.toml")


def test_ingest_flags_choose_the_splitter(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from ragloom.cli.app import app
    from ragloom.stores.sqlite import SqliteVectorStore

    monkeypatch.chdir(tmp_path)
    (tmp_path / "guide.md").write_text("# Guide\n\n## Brakes\n\n" + "Brake words here. " * 40
                                       + "\n\n## Tyres\n\nTyre words.\n")
    result = CliRunner().invoke(app, ["ingest", str(tmp_path / "guide.md"), "--db",
                                      str(tmp_path / "db"), "--embedder", "fake:hashing-64",
                                      "--splitter", "markdown", "--chunk-size", "40",
                                      "--no-cache", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)
    with SqliteVectorStore(tmp_path / "db" / "ragloom.db") as store:
        chunks = store.chunks()
    assert len(chunks) > 3 and all("section" in c.metadata for c in chunks)

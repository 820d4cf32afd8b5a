"""``ragloom ingest --splitter X --chunk-size N --chunk-overlap M``: every splitter takes
the sizes, in its own unit (characters, words, sentences, paragraphs, lines...)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragloom.chunking import (
    CharacterSplitter,
    LineSplitter,
    MarkdownSplitter,
    ParagraphSplitter,
    RecursiveSplitter,
    RegexSplitter,
    SentenceSplitter,
    WordSplitter,
)
from ragloom.chunking.factory import make_splitter
from ragloom.errors import ConfigurationError
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing.fakes import HashingEmbedder
from ragloom.types import TextDocument

from .conftest import FAKE, Cli

TEXT = ("Rivers carry water to the sea. Lakes hold it still. Rain fills both again.\n"
        "Glaciers move slowly.\n\n"
        "Deserts get little rain. Their plants store water in thick leaves.\n"
        "Cacti have spines instead of leaves.\n\n"
        "Forests make their own weather. Trees breathe out water vapour.\n"
        "Clouds form above them.\n\n"
        "Mountains force air upwards. The air cools and its water falls as snow.\n")

# splitter, chunk size, overlap, the same splitter built with its own option names
CASES: list[tuple[str, int, int, Any]] = [
    ("character", 120, 20, CharacterSplitter(size=120, overlap=20)),
    ("word", 12, 3, WordSplitter(words=12, overlap=3)),
    ("sentence", 3, 1, SentenceSplitter(sentences=3, overlap=1)),
    ("paragraph", 2, 1, ParagraphSplitter(paragraphs=2, overlap=1)),
    ("line", 3, 0, LineSplitter(lines=3, overlap=0)),
    ("regex", 2, 0, RegexSplitter(pattern=r"\. ", pieces=2)),
    # fake:hashing-256 counts words as its tokens: these two are sized in them.
    ("recursive", 20, 4, RecursiveSplitter(20, 4, token_counter=HashingEmbedder(256))),
    ("markdown", 20, 4, MarkdownSplitter(20, 4, token_counter=HashingEmbedder(256))),
]


def _chunks_in(db: Path) -> list[str]:
    store = SqliteVectorStore(db / "ragloom.db", "default")
    try:
        return sorted(chunk.text for chunk in store.chunks())
    finally:
        store.close()


@pytest.mark.parametrize(("name", "size", "overlap", "oracle"), CASES,
                         ids=[case[0] for case in CASES])
def test_each_splitter_takes_sizes_in_its_unit(cli: Cli, tmp_path: Path, name: str,
                                               size: int, overlap: int, oracle: Any,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "nature.txt").write_text(TEXT, encoding="utf-8")
    extra = ["--chunk-size", str(size), "--chunk-overlap", str(overlap)]
    if name == "regex":  # its pattern comes from ragloom.toml; the sizes from the flags
        (tmp_path / "ragloom.toml").write_text("[chunking]\npattern = '\\. '\n",
                                               encoding="utf-8")
        monkeypatch.chdir(tmp_path)
    report = cli.json("ingest", str(folder), *FAKE, "--splitter", name, *extra)
    assert isinstance(report, dict) and report["new"]
    stored = _chunks_in(cli.db)
    assert report["chunks_written"] == len(stored) > 1
    if oracle is not None:
        document = TextDocument.create(TEXT, source=str(folder / "nature.txt"))
        expected = sorted(chunk.text for chunk in oracle.split(document))
        assert stored == expected


def test_the_metacogna_default_works(cli: Cli, sample_dir: Path) -> None:
    """``--splitter character --chunk-size 512 --chunk-overlap 50`` used to exit 2."""
    result = cli("ingest", str(sample_dir), *FAKE, "--splitter", "character",
                 "--chunk-size", "512", "--chunk-overlap", "50", "--json")
    assert result.returncode == 0
    assert all(len(text) <= 512 for text in _chunks_in(cli.db))


def test_an_overlap_as_large_as_the_size_exits_2_and_says_why(cli: Cli, tmp_path: Path
                                                             ) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text(TEXT, encoding="utf-8")
    result = cli("ingest", str(folder), *FAKE, "--splitter", "word", "--chunk-size", "5",
                 "--chunk-overlap", "5", check=False)
    assert result.returncode == 2
    assert "overlap must be at least 0 and smaller than words (5)" in result.stderr + result.stdout


# ------------------------------------------------------------ the factory (unit)


@pytest.mark.parametrize(("name", "size", "overlap", "oracle"), CASES,
                         ids=[case[0] for case in CASES])
def test_make_splitter_maps_the_common_names(name: str, size: int, overlap: int,
                                             oracle: Any) -> None:
    options: dict[str, Any] = {"pattern": r"\. "} if name == "regex" else {}
    if name in ("recursive", "markdown"):
        options["token_counter"] = HashingEmbedder(256)
    splitter = make_splitter(name, chunk_size=size, chunk_overlap=overlap, **options)
    if oracle is not None:
        assert splitter.settings_key() == oracle.settings_key()  # type: ignore[attr-defined]


def test_a_size_alone_keeps_a_default_overlap_that_fits() -> None:
    assert make_splitter("word", chunk_size=10) == WordSplitter(words=10, overlap=5)
    assert make_splitter("character", chunk_size=2000) == CharacterSplitter(2000, 150)
    assert make_splitter("sentence", chunk_size=4) == SentenceSplitter(sentences=4)


def test_both_names_for_one_setting_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="both chunk_size and words"):
        make_splitter("word", chunk_size=10, words=12)


def test_default_sizes_keep_the_settings_keys_of_before() -> None:
    """Documents split with the old one-unit splitters are not re-ingested."""
    assert ParagraphSplitter().settings_key() == "ParagraphSplitter()"
    assert LineSplitter().settings_key() == "LineSplitter()"
    assert (RegexSplitter(pattern="x").settings_key()
            == "RegexSplitter(pattern='x', keep_separator=False)")
    assert ParagraphSplitter(2).settings_key() != ParagraphSplitter().settings_key()

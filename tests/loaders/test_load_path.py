from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest

from ragloom.chunking import RecursiveSplitter
from ragloom.loaders import LoadResult, ParseLimits, load_file, load_path, load_text
from tests.loaders.samples import PDF_PAGES, write_pdf, write_zip_bomb

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def by_name(results: list[LoadResult]) -> dict[str, LoadResult]:
    return {r.source.rsplit("/", 1)[-1]: r for r in results}


def test_every_format_in_a_folder_loads(sample_folder: Path) -> None:
    results = by_name(list(load_path(sample_folder)))
    assert all(r.ok for r in results.values()), {k: r.reason for k, r in results.items()}
    text = {name: r.document.text for name, r in results.items() if r.document}
    assert text["notes.txt"] == "Plain notes about the lunch break.\n"
    assert text["guide.md"].startswith("# Setup Guide")
    assert "We build search." in text["page.html"]
    for junk in ("alert", "color:red", "Home | About", "(c) us"):
        assert junk not in text["page.html"]
    assert text["people.csv"] == "name: Ada; city: London\nname: Linus; city: Helsinki"
    assert "Employees get 25 days of paid leave." in text["policy.docx"]
    assert "Grade | Days\nSenior | 30" in text["policy.docx"]
    assert text["deck.pptx"].startswith("Slide 1\nRoadmap\nShip the loader.")
    assert "Slide 2\nRisks" in text["deck.pptx"] and "speaker note 2" in text["deck.pptx"]
    assert "Sheet: Staff\nName: Ada; Role: Engineer\nName: Grace" in text["sheet.xlsx"]
    assert "Sheet: Budget\nItem: Laptops; Cost: 1200" in text["sheet.xlsx"]
    for page in PDF_PAGES:
        assert page in text["report.pdf"]
    assert text["records.jsonl#0"] == "First record text."
    assert text["records.jsonl#1"] == "Second record text."
    assert '"port": 80' in text["config.json"]


def test_metadata_of_a_file(sample_folder: Path) -> None:
    path = sample_folder / "report.pdf"
    (result,) = load_file(path)
    assert result.document is not None
    meta = result.document.metadata
    assert meta["source"] == str(path) == result.document.source
    assert meta["file_name"] == "report.pdf"
    assert meta["mime_type"] == "application/pdf"
    assert meta["size"] == path.stat().st_size
    assert meta["content_hash"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert ISO_UTC.match(meta["created"]) and ISO_UTC.match(meta["modified"])
    assert meta["title"] == "Fruit Report"
    assert meta["page_count"] == 3
    assert meta["format"] == "pdf"


def test_format_titles(sample_folder: Path) -> None:
    results = by_name(list(load_path(sample_folder)))
    titles = {name: r.document.metadata.get("title") for name, r in results.items()
              if r.document}
    assert titles["guide.md"] == "Setup Guide"
    assert titles["page.html"] == "Team Page"
    assert titles["policy.docx"] == "Holiday Policy"
    assert results["deck.pptx"].document.metadata["page_starts"] == [  # type: ignore[union-attr]
        0, results["deck.pptx"].document.text.index("Slide 2")]  # type: ignore[union-attr]


def test_json_records_keep_scalar_fields_as_metadata(sample_folder: Path) -> None:
    results = by_name(list(load_path(sample_folder, include=("*.jsonl",))))
    first = results["records.jsonl#0"].document
    second = results["records.jsonl#1"].document
    assert first is not None and second is not None
    assert first.metadata["author"] == "ann" and "tags" not in first.metadata
    assert second.metadata["year"] == 2024
    assert first.metadata["parent_source"] == str(sample_folder / "records.jsonl")
    assert first.source.endswith("records.jsonl#0")


def test_pdf_pages_flow_into_chunk_pages(tmp_path: Path) -> None:
    (result,) = load_file(write_pdf(tmp_path / "three.pdf"))
    assert result.document is not None
    document = result.document
    starts = document.metadata["page_starts"]
    assert len(starts) == 3 and starts[0] == 0
    for number, page_text in enumerate(PDF_PAGES):
        assert document.text[starts[number]:].startswith(page_text)
    chunks = RecursiveSplitter(chunk_size=200, chunk_overlap=0).split(document)
    assert {c.page for c in chunks} == {1, 2, 3}
    for chunk in chunks:
        expected = PDF_PAGES[chunk.page - 1].split()[0]  # type: ignore[operator]
        assert chunk.text.startswith(expected)
        assert chunk.metadata["page"] == chunk.page
        assert "page_starts" not in chunk.metadata
        assert chunk.metadata["title"] == "Fruit Report"


def test_bad_files_are_skipped_with_reasons_and_the_rest_load(
    sample_folder: Path, tmp_path: Path
) -> None:
    pdf = (sample_folder / "report.pdf").read_bytes()
    (sample_folder / "truncated.pdf").write_bytes(pdf[: len(pdf) // 2])
    write_zip_bomb(sample_folder / "bomb.docx", uncompressed_mb=50)
    (sample_folder / "latin.txt").write_bytes("caf\xe9 ".encode("latin-1") * 50)
    (sample_folder / "empty.txt").write_bytes(b"")
    (sample_folder / "junk.bin").write_bytes(bytes(range(256)) * 8)
    (sample_folder / "big.txt").write_text("word " * 40_000, encoding="utf-8")
    limits = ParseLimits(max_file_bytes=90_000)
    results = by_name(list(load_path(sample_folder, limits=limits)))
    reasons = {name: r.reason or "" for name, r in results.items() if not r.ok}
    assert set(reasons) == {"truncated.pdf", "bomb.docx", "latin.txt", "empty.txt",
                            "junk.bin", "big.txt"}
    assert "PDF" in reasons["truncated.pdf"]
    assert "ZIP bomb" in reasons["bomb.docx"]
    assert reasons["latin.txt"] == "not valid UTF-8 text"
    assert reasons["empty.txt"] == "empty file"
    assert reasons["junk.bin"] == "binary file of unknown type"
    assert "max_file_bytes=90000" in reasons["big.txt"]
    assert sum(r.ok for r in results.values()) == 11  # 10 files, the JSONL holds 2


def test_oversized_file_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 5000)

    def no_open(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file must not be opened")

    monkeypatch.setattr("builtins.open", no_open)
    (result,) = load_file(path, limits=ParseLimits(max_file_bytes=1000))
    assert result.reason is not None and "max_file_bytes=1000" in result.reason


def test_walk_is_sorted_skips_hidden_and_filters(tmp_path: Path) -> None:
    for relative in ("b.txt", "a.txt", "sub/c.md", "sub/deep/d.txt", ".hidden.txt",
                     ".git/config.txt", "node_modules/x.txt"):
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"text of {relative}", encoding="utf-8")
    names = [r.source[len(str(tmp_path)) + 1:] for r in load_path(tmp_path)]
    assert names == ["a.txt", "b.txt", "node_modules/x.txt", "sub/c.md", "sub/deep/d.txt"]
    with_hidden = [r.source[len(str(tmp_path)) + 1:] for r in load_path(tmp_path, hidden=True)]
    assert ".hidden.txt" in with_hidden and ".git/config.txt" in with_hidden
    flat = [r.source[len(str(tmp_path)) + 1:] for r in load_path(tmp_path, recursive=False)]
    assert flat == ["a.txt", "b.txt"]
    md_only = [r.source[len(str(tmp_path)) + 1:] for r in load_path(tmp_path, include=("*.md",))]
    assert md_only == ["sub/c.md"]
    pruned = [r.source[len(str(tmp_path)) + 1:]
              for r in load_path(tmp_path, exclude=("node_modules", "sub/deep/**"))]
    assert pruned == ["a.txt", "b.txt", "sub/c.md"]
    rooted = [r.source[len(str(tmp_path)) + 1:]
              for r in load_path(tmp_path, include=("sub/**/*.txt",))]
    assert rooted == ["sub/deep/d.txt"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_symlink_loops_end(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "doc.txt").write_text("loop test", encoding="utf-8")
    os.symlink(tmp_path / "a", tmp_path / "a" / "again")
    os.symlink(tmp_path / "missing", tmp_path / "broken.txt")
    results = list(load_path(tmp_path))
    loaded = [r for r in results if r.ok]
    assert len(loaded) == 1 and loaded[0].source.endswith("a/doc.txt")
    assert [r.reason for r in results if not r.ok] == ["broken symbolic link"]


def test_missing_path_is_a_skip(tmp_path: Path) -> None:
    (result,) = list(load_path(tmp_path / "nope"))
    assert not result.ok and result.reason == "no such file or directory"


def test_load_text() -> None:
    document = load_text("# Notes\n\nHello\r\nworld")
    assert document.source == "stdin" and document.text == "# Notes\n\nHello\nworld"
    assert document.metadata["mime_type"] == "text/plain"
    assert document.metadata["content_hash"] == hashlib.sha256(
        b"# Notes\n\nHello\r\nworld").hexdigest()
    markdown = load_text("# Notes\n\nHello", source="clip", mime_type="text/markdown")
    assert markdown.metadata["title"] == "Notes" and markdown.source == "clip"
    html = load_text("<title>T</title><p>Hi <i>there</i></p>", mime_type="text/html")
    assert html.text == "Hi there" and html.metadata["title"] == "T"


def test_a_200_mb_zip_bomb_named_docx_is_refused_before_parsing(tmp_path: Path) -> None:
    bomb = write_zip_bomb(tmp_path / "report.docx", uncompressed_mb=200)
    assert bomb.stat().st_size < 1_000_000
    (result,) = load_file(bomb)
    assert not result.ok and result.reason is not None
    assert "ZIP bomb" in result.reason and "word/document.xml" in result.reason

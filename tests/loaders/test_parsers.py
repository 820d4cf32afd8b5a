from __future__ import annotations

import builtins
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from ragloom.errors import MissingDependencyError, ParseError
from ragloom.loaders import ParseLimits, check_zip, detect_format, parse_bytes
from ragloom.loaders.parsers.html_page import html_to_text
from tests.loaders.samples import write_docx, write_pdf, write_pptx


def test_utf8_variants_decode() -> None:
    assert parse_bytes(b"\xef\xbb\xbfhello", "a.txt")[0].text == "hello"
    assert parse_bytes("h\u00e9llo".encode("utf-16"), "a.txt")[0].text == "h\u00e9llo"
    assert parse_bytes(b"line1\r\nline2\rline3", "a.txt")[0].text == "line1\nline2\nline3"


def test_a_stray_invalid_byte_is_replaced_but_mostly_invalid_text_is_refused() -> None:
    nearly = b"a fine sentence of text " * 20 + b"\xe9"
    assert parse_bytes(nearly, "a.txt")[0].text.endswith("\ufffd")
    with pytest.raises(ParseError, match="not valid UTF-8 text"):
        parse_bytes("caf\xe9 cr\xe8me ".encode("latin-1") * 20, "a.txt")


def test_empty_and_binary_are_refused() -> None:
    with pytest.raises(ParseError, match="empty file"):
        parse_bytes(b"", "a.txt")
    with pytest.raises(ParseError, match="binary file of unknown type"):
        parse_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "picture.txt")
    with pytest.raises(ParseError, match="max_file_bytes"):
        parse_bytes(b"abc", "a.txt", limits=ParseLimits(max_file_bytes=2))


def test_detection_trusts_content_over_names(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "a.pdf").read_bytes()
    docx = write_docx(tmp_path / "a.docx").read_bytes()
    pptx = write_pptx(tmp_path / "a.pptx").read_bytes()
    assert detect_format(pdf, "notes.txt") == "pdf"
    assert detect_format(docx, "upload.bin") == "docx"
    assert detect_format(pptx, "") == "pptx"
    assert detect_format(b"<!DOCTYPE html><p>x", "page") == "html"
    assert detect_format(b"# Title", "x.md") == "markdown"
    assert detect_format(b"{}", "x", "application/json; charset=utf-8") == "json"
    assert detect_format(b"plain", "x.pdf") == "pdf"  # the PDF parser explains the damage
    assert "Alpha page" in parse_bytes(pdf, "notes.txt")[0].text


def test_not_a_pdf_named_pdf_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="not a readable PDF"):
        parse_bytes(b"this is no pdf", "x.pdf")


def test_zip_limits() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for i in range(20):
            archive.writestr(f"word/part{i}.xml", "<x/>")
    data = buffer.getvalue()
    with pytest.raises(ParseError, match="20 entries, more than max_zip_entries=10"):
        check_zip(data, "many.docx", ParseLimits(max_zip_entries=10))
    with pytest.raises(ParseError, match="max_zip_uncompressed_bytes"):
        check_zip(data, "many.docx", ParseLimits(max_zip_uncompressed_bytes=50))
    check_zip(data, "many.docx", ParseLimits())
    with pytest.raises(ParseError, match="ZIP archive has 20 entries"):
        parse_bytes(data, "many.docx", limits=ParseLimits(max_zip_entries=10))


def test_unknown_zip_is_refused() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "hi")
    with pytest.raises(ParseError, match="ZIP archive of unknown type"):
        parse_bytes(buffer.getvalue(), "archive.zip")


def test_max_pages(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "a.pdf").read_bytes()
    with pytest.raises(ParseError, match="3 pages, more than max_pages=2"):
        parse_bytes(pdf, "a.pdf", limits=ParseLimits(max_pages=2))
    pptx = write_pptx(tmp_path / "a.pptx").read_bytes()
    with pytest.raises(ParseError, match="2 slides, more than max_pages=1"):
        parse_bytes(pptx, "a.pptx", limits=ParseLimits(max_pages=1))


def test_missing_extra_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pdf = write_pdf(tmp_path / "a.pdf").read_bytes()
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("pypdf"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(MissingDependencyError, match=r"ragloom\[pdf\]") as caught:
        parse_bytes(pdf, "a.pdf")
    assert caught.value.extra == "pdf" and caught.value.package == "pypdf"


@pytest.mark.parametrize("use_soup", [True, False])
def test_html_main_text_with_and_without_beautifulsoup(use_soup: bool) -> None:
    if use_soup:
        pytest.importorskip("bs4")
    page = """<!doctype html><html><head><title> My  Page </title>
    <script>var x = "<p>no</p>";</script><style>body{}</style></head>
    <body><nav><a href="/">Home</a></nav><header>Site banner</header>
    <main><h1>Heading</h1><p>First <em>para</em>graph.</p>
    <ul><li>one</li><li>two</li></ul>
    <table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
    </main><footer>footer text</footer></body></html>"""
    text, title = html_to_text(page, use_soup=use_soup)
    assert title == "My Page"
    assert text == "Heading\n\nFirst paragraph.\n\n- one\n- two\n\nk | v\na | 1"


def test_html_without_main_uses_the_body() -> None:
    text, title = html_to_text("<body><nav>menu</nav><p>Body text</p></body>", use_soup=False)
    assert text == "Body text" and title == ""


def test_csv_sniffs_the_delimiter_and_tsv() -> None:
    parsed = parse_bytes(b"a;b\n1;2\n3;\n", "x.csv")[0]
    assert parsed.text == "a: 1; b: 2\na: 3"
    assert parsed.metadata["columns"] == ["a", "b"] and parsed.metadata["row_count"] == 2
    assert parse_bytes(b"a\tb\n1\t2\n", "x.tsv")[0].text == "a: 1; b: 2"


def test_json_text_fields_and_metadata() -> None:
    data = json.dumps([{"title": "T", "summary": "Sum.", "n": 3, "nested": {"x": 1}},
                       {"summary": ""}, "just a string"]).encode()
    parsed = parse_bytes(data, "x.json", text_fields=["summary"])
    assert [p.text for p in parsed] == ["Sum.", "just a string"]
    assert parsed[0].metadata["title"] == "T" and parsed[0].metadata["n"] == 3
    assert "nested" not in parsed[0].metadata and parsed[0].part == "0"
    whole = parse_bytes(b'{"id": 7, "name": "x"}', "x.json")
    assert len(whole) == 1 and whole[0].part is None
    assert json.loads(whole[0].text) == {"id": 7, "name": "x"}
    assert whole[0].metadata["id"] == 7
    with pytest.raises(ParseError, match="line 2 is not valid JSON"):
        parse_bytes(b'{"text": "a"}\n{oops\n', "x.jsonl")


def test_a_json_catalogue_gives_one_record_per_item_after_its_own_fields() -> None:
    data = json.dumps({"provider": "Tern", "note": "Prices rise in April.",
                       "tags": ["a", "b"],
                       "plans": [{"code": "LITE", "price": 6}, {"code": "GO", "price": 10},
                                 {"code": "MAX", "price": 22}]}).encode()
    parsed = parse_bytes(data, "plans.json")
    assert [p.part for p in parsed] == ["0", "1", "2", "3"]
    assert json.loads(parsed[0].text) == {"provider": "Tern", "note": "Prices rise in April.",
                                          "tags": ["a", "b"]}
    assert [json.loads(p.text)["code"] for p in parsed[1:]] == ["LITE", "GO", "MAX"]
    assert parsed[2].metadata["price"] == 10
    # One nested object, or a list of plain values, stays one record.
    single = parse_bytes(json.dumps({"plans": [{"code": "A"}], "n": 1}).encode(), "x.json")
    assert len(single) == 1 and single[0].part is None


def test_markdown_title_from_front_matter() -> None:
    parsed = parse_bytes(b"---\ntitle: 'Front'\n---\n# Header\n", "a.md")[0]
    assert parsed.metadata["title"] == "Front"
    assert parsed.text == "---\ntitle: 'Front'\n---\n# Header\n"


@pytest.mark.parametrize("use_soup", [False, True])
def test_a_line_break_inside_a_table_cell_keeps_the_cell_on_its_row(use_soup: bool) -> None:
    page = ("<table><tr><th>Cottage</th><th>Low season<br>3 Jan - 27 Mar</th>"
            "<th><p>Peak</p><p>18 Jul - 28 Aug</p></th></tr>"
            "<tr><td>Gull Cottage</td><td>£495</td><td>£1,340</td></tr></table>"
            "<p>After the table.<br>Next line.</p>")
    text, _ = html_to_text(page, use_soup=use_soup)
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines[0] == "Cottage | Low season 3 Jan - 27 Mar | Peak 18 Jul - 28 Aug"
    assert lines[1] == "Gull Cottage | £495 | £1,340"
    assert lines[2:] == ["After the table.", "Next line."]  # outside a cell a break is a line


@pytest.mark.parametrize("use_soup", [False, True])
def test_html_list_items_keep_their_numbers_and_bullets(use_soup: bool) -> None:
    page = ("<h2>How to book</h2><ol><li>Check the calendar.</li><li>Fill in the form."
            "</li></ol><ul><li>No smoking.</li><li>Dogs welcome:<ol><li>one</li></ol></li>"
            "</ul>")
    text, _ = html_to_text(page, use_soup=use_soup)
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines == ["How to book", "1. Check the calendar.", "2. Fill in the form.",
                     "- No smoking.", "- Dogs welcome:", "1. one"]

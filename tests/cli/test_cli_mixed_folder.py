"""A mixed folder of every supported format, with bad files among good ones, via the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import FAKE, Cli
from tests.loaders.samples import write_docx, write_pdf, write_pptx, write_xlsx, write_zip_bomb


def build_folder(root: Path) -> dict[str, str]:
    """Writes one file per format; returns file name -> a word only that file holds."""
    root.mkdir()
    write_pdf(root / "fruit.pdf")
    write_docx(root / "policy.docx")
    write_pptx(root / "plan.pptx")
    write_xlsx(root / "staff.xlsx")
    (root / "notes.txt").write_text("The quartermaster counts lanterns.\n", encoding="utf-8")
    (root / "guide.md").write_text("# Guide\n\nPaddle boards need wax.\n", encoding="utf-8")
    (root / "page.html").write_text(
        "<html><head><title>Page</title><script>var hidden = 'scripted';</script></head>"
        "<body><nav>menu</nav><p>Zeppelins drift slowly.</p></body></html>", encoding="utf-8")
    (root / "prices.csv").write_text("item,price\ntrombone,120\n", encoding="utf-8")
    (root / "records.jsonl").write_text(
        json.dumps({"text": "Walruses enjoy ice.", "team": "zoo"}) + "\n"
        + json.dumps({"text": "Narwhals have tusks.", "team": "zoo"}) + "\n", encoding="utf-8")
    return {"fruit.pdf": "bananas", "policy.docx": "expire", "plan.pptx": "roadmap",
            "staff.xlsx": "laptops", "notes.txt": "quartermaster", "guide.md": "paddle",
            "page.html": "zeppelins", "prices.csv": "trombone", "records.jsonl": "narwhals"}


def add_bad_files(root: Path) -> set[str]:
    good_pdf = (root / "fruit.pdf").read_bytes()
    (root / "truncated.pdf").write_bytes(good_pdf[: len(good_pdf) // 3])
    write_zip_bomb(root / "bomb.docx")
    (root / "latin1.txt").write_bytes(b"\xff\xfe\xfa" + bytes(range(128, 256)) * 20)
    (root / "empty.txt").write_bytes(b"")
    with open(root / "huge.txt", "wb") as handle:  # sparse: 200 MB on paper, nothing on disk
        handle.truncate(200 * 1024 * 1024)
    return {"truncated.pdf", "bomb.docx", "latin1.txt", "empty.txt", "huge.txt"}


def test_every_format_is_searchable_and_bad_files_are_skipped(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "mixed"
    words = build_folder(root)
    bad = add_bad_files(root)
    report = cli.json("ingest", str(root), *FAKE)
    skipped = {Path(item["source"]).name: item["reason"] for item in report["skipped"]}
    assert set(skipped) == bad, skipped
    assert all(len(reason) > 5 for reason in skipped.values())
    assert "zip" in skipped["bomb.docx"].lower() or "compress" in skipped["bomb.docx"].lower()
    stored = {Path(source.split("#")[0]).name for source in report["new"]}
    assert stored == set(words)
    for name, word in words.items():
        hits = cli.json("search", word, "--mode", "keyword", "--top-k", "3")
        found = {Path(m["metadata"].get("parent_source", m["document"]).split("#")[0]).name
                 for m in hits["matches"]}
        assert name in found, (name, word, hits["matches"][:1])
    pdf_hits = cli.json("search", "bananas", "--mode", "keyword", "--filter",
                        '{"file_name": "fruit.pdf"}')
    assert pdf_hits["matches"] and {m["metadata"]["page"] for m in pdf_hits["matches"]} == {2}
    script = cli.json("search", "scripted menu", "--mode", "keyword")
    assert all("page.html" not in m["document"] for m in script["matches"])

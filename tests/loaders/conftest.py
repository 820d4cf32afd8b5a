"""A temporary folder holding a sample file of every supported format."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.loaders.samples import write_docx, write_pdf, write_pptx, write_xlsx


@pytest.fixture
def sample_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.txt").write_text("Plain notes about the lunch break.\n", encoding="utf-8")
    (folder / "guide.md").write_text("# Setup Guide\n\nInstall it.\n\n## Usage\n\nRun it.\n",
                                     encoding="utf-8")
    (folder / "page.html").write_text(
        "<html><head><title>Team Page</title><style>p{color:red}</style></head><body>"
        "<nav>Home | About</nav><main><h1>Welcome</h1><p>We build <b>search</b>.</p>"
        "<script>alert('x')</script></main><footer>(c) us</footer></body></html>",
        encoding="utf-8")
    with open(folder / "people.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["name", "city"])
        writer.writerow(["Ada", "London"])
        writer.writerow(["Linus", "Helsinki"])
    (folder / "records.jsonl").write_text(
        json.dumps({"text": "First record text.", "author": "ann", "tags": ["a"]}) + "\n"
        + json.dumps({"content": "Second record text.", "year": 2024}) + "\n", encoding="utf-8")
    (folder / "config.json").write_text(json.dumps({"name": "svc", "port": 80}),
                                        encoding="utf-8")
    write_pdf(folder / "report.pdf")
    write_docx(folder / "policy.docx")
    write_pptx(folder / "deck.pptx")
    write_xlsx(folder / "sheet.xlsx")
    return folder

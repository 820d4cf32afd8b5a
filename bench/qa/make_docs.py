"""Write the binary documents of the bench/qa splits (PDF, DOCX, PPTX, XLSX).

    python bench/qa/make_docs.py --split dev     # bench/qa/dev/docs/
    python bench/qa/make_docs.py --split test    # bench/qa/test/docs/ (locked split)

The content of each split lives beside its documents (``bench/qa/<split>/content.py``,
a ``DOCS`` dict of file name to ``(format, spec)``), so that reading this script
never shows the locked test split. Needs the dev extras (fpdf2, python-docx,
python-pptx, openpyxl). The generated files are committed; re-running rewrites
them with the same text. The text formats (HTML, Markdown, text, CSV, JSON) are
written by hand and committed as they are.

Block specs (PDF and DOCX): ``("h1" | "h2", text)``, ``("p", text)``,
``("table", header, rows)``, ``("page",)`` (PDF: a new page). Slides (PPTX):
``(title, bullets, notes)``. Workbooks (XLSX): ``{sheet name: rows}``.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

Block = tuple[Any, ...]


def _latin(text: str) -> str:
    """fpdf2's core fonts are Latin-1: swap the few other characters used."""
    return (text.replace("\u2013", "-").replace("\u2014", "-").replace("\u2019", "'")
            .replace("\u201c", '"').replace("\u201d", '"').replace("\u2022", "-"))


def write_pdf(path: Path, blocks: list[Block]) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    for block in blocks:
        kind = block[0]
        if kind == "page":
            pdf.add_page()
        elif kind in ("h1", "h2"):
            pdf.set_font("Helvetica", "B", 15 if kind == "h1" else 12)
            pdf.multi_cell(0, 8, _latin(block[1]), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1)
        elif kind == "p":
            pdf.set_font("Helvetica", size=10.5)
            pdf.multi_cell(0, 5.5, _latin(block[1]), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
        elif kind == "table":
            pdf.set_font("Helvetica", size=9.5)
            with pdf.table(first_row_as_headings=True, line_height=5.5) as table:
                for row in [block[1], *block[2]]:
                    cells = table.row()
                    for cell in row:
                        cells.cell(_latin(str(cell)))
            pdf.ln(3)
        else:
            raise ValueError(f"{path.name}: unknown block {kind!r}")
    pdf.output(str(path))


def write_docx(path: Path, blocks: list[Block]) -> None:
    import docx

    document = docx.Document()
    for block in blocks:
        kind = block[0]
        if kind in ("h1", "h2"):
            document.add_heading(block[1], level=1 if kind == "h1" else 2)
        elif kind == "p":
            document.add_paragraph(block[1])
        elif kind == "table":
            header, rows = block[1], block[2]
            table = document.add_table(rows=1 + len(rows), cols=len(header))
            table.style = "Table Grid"
            for r, row in enumerate([header, *rows]):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = str(cell)
        elif kind != "page":
            raise ValueError(f"{path.name}: unknown block {kind!r}")
    document.save(str(path))


def write_pptx(path: Path, slides: list[tuple[str, list[str], str]]) -> None:
    from pptx import Presentation

    deck = Presentation()
    for number, (title, bullets, notes) in enumerate(slides):
        layout = deck.slide_layouts[0 if number == 0 else 1]
        slide = deck.slides.add_slide(layout)
        slide.shapes.title.text = title
        body = slide.placeholders[1].text_frame
        body.text = bullets[0] if bullets else ""
        for bullet in bullets[1:]:
            body.add_paragraph().text = bullet
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    deck.save(str(path))


def write_xlsx(path: Path, sheets: dict[str, list[list[Any]]]) -> None:
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    book.save(str(path))


WRITERS = {"pdf": write_pdf, "docx": write_docx, "pptx": write_pptx, "xlsx": write_xlsx}


def load_content(split: str) -> dict[str, tuple[str, Any]]:
    path = HERE / split / "content.py"
    spec = importlib.util.spec_from_file_location(f"qa_{split}_content", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"no {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    docs: dict[str, tuple[str, Any]] = module.DOCS
    return docs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test", "fresh"), required=True)
    args = parser.parse_args()
    folder = HERE / args.split / "docs"
    folder.mkdir(parents=True, exist_ok=True)
    for name, (form, spec) in load_content(args.split).items():
        WRITERS[form](folder / name, spec)
        print(f"wrote {folder / name}")


if __name__ == "__main__":
    main()

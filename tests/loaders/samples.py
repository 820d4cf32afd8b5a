"""Writers of sample files in every supported format."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

PDF_PAGES = ["Alpha page talks about apples.", "Beta page talks about bananas.",
             "Gamma page talks about cherries."]


def write_pdf(path: Path, pages: list[str] = PDF_PAGES, *, title: str = "Fruit Report") -> Path:
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.set_title(title)
    pdf.set_font("Helvetica", size=12)
    for text in pages:
        pdf.add_page()
        # Enough lines per page that chunks of 200 characters fall on every page.
        for line in range(12):
            pdf.cell(0, 10, f"{text} Line {line}.", new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def write_docx(path: Path) -> Path:
    docx = pytest.importorskip("docx")
    document = docx.Document()
    document.core_properties.title = "Holiday Policy"
    document.add_heading("Holiday Policy", level=1)
    document.add_paragraph("Employees get 25 days of paid leave.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Grade"
    table.cell(0, 1).text = "Days"
    table.cell(1, 0).text = "Senior"
    table.cell(1, 1).text = "30"
    document.add_paragraph("Unused days expire in March.")
    document.save(str(path))
    return path


def write_pptx(path: Path) -> Path:
    pptx = pytest.importorskip("pptx")
    presentation = pptx.Presentation()
    for number, (title, body) in enumerate([("Roadmap", "Ship the loader."),
                                            ("Risks", "Zip bombs and big files.")], start=1):
        slide = presentation.slides.add_slide(presentation.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        slide.notes_slide.notes_text_frame.text = f"speaker note {number}"
    presentation.save(str(path))
    return path


def write_xlsx(path: Path) -> Path:
    openpyxl = pytest.importorskip("openpyxl")
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Staff"
    sheet.append(["Name", "Role"])
    sheet.append(["Ada", "Engineer"])
    sheet.append(["Grace", None])
    other = workbook.create_sheet("Budget")
    other.append(["Item", "Cost"])
    other.append(["Laptops", 1200])
    workbook.save(str(path))
    return path


def write_zip_bomb(path: Path, uncompressed_mb: int = 200) -> Path:
    """A ZIP with a ``word/`` entry of zeros: ~200 KB on disk, 200 MB inflated."""
    block = bytes(1024 * 1024)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as entry:
            for _ in range(uncompressed_mb):
                entry.write(block)
    return path

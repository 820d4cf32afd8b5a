"""Word documents with python-docx (extra ``office``): paragraphs and tables in
document order, one block each; table rows as ``cell | cell``."""

from __future__ import annotations

import io
from typing import Any

from ragloom.errors import MissingDependencyError, ParseError
from ragloom.loaders.base import Parsed, ParseLimits


def parse(data: bytes, name: str, limits: ParseLimits) -> list[Parsed]:
    try:
        import docx
        from docx.table import Table
        from docx.text.paragraph import Paragraph
    except ImportError as exc:
        raise MissingDependencyError("python-docx", "office", "reading DOCX files") from exc
    try:
        document = docx.Document(io.BytesIO(data))
        blocks: list[str] = []
        title = ""
        for element in document.element.body.iterchildren():
            tag = element.tag.rsplit("}", 1)[-1]
            if tag == "p":
                paragraph = Paragraph(element, document)
                text = paragraph.text.strip()
                if not text:
                    continue
                style = (paragraph.style.name if paragraph.style is not None else "") or ""
                if not title and (style == "Title" or style.startswith("Heading")):
                    title = text
                blocks.append(text)
            elif tag == "tbl":
                rows = []
                for row in Table(element, document).rows:
                    cells = [cell.text.strip() for cell in row.cells]
                    if any(cells):
                        rows.append(" | ".join(cells))
                if rows:
                    blocks.append("\n".join(rows))
        core_title = (document.core_properties.title or "").strip()
        author = (document.core_properties.author or "").strip()
    except Exception as exc:  # python-docx raises many kinds on damaged files
        raise ParseError(name, f"not a readable DOCX file: {type(exc).__name__}: {exc}") from exc
    metadata: dict[str, Any] = {}
    if core_title or title:
        metadata["title"] = core_title or title
    if author:
        metadata["author"] = author
    return [Parsed(text="\n\n".join(blocks), metadata=metadata)]

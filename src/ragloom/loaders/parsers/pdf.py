"""PDF with pypdf (extra ``pdf``): text per page joined by blank lines.

Pages are read in pypdf's layout mode, which keeps where text stands on the line, so
a table stays a table: lines whose words stand in aligned columns (two or more
columns, separated by wide gaps, on two or more lines in a row) are written as
``cell | cell`` rows, the form the other loaders give tables; other lines keep their
words with single spaces. A page layout mode cannot read is read plainly.

Metadata: ``page_count``, ``page_starts`` (the character offset where each page's
text begins, so chunks know their page), ``title`` and ``author`` when set.
"""

from __future__ import annotations

import io
import re
from typing import Any

from ragloom.errors import MissingDependencyError, ParseError
from ragloom.loaders.base import Parsed, ParseLimits

_GAP = re.compile(r"\S(\s{3,})\S")


def _columns(line: str) -> list[int]:
    """Where the columns after the first start (offsets after wide gaps)."""
    return [m.end(1) for m in _GAP.finditer(line)]


def tables_as_rows(text: str) -> str:
    """Layout text with aligned column blocks as ``cell | cell`` rows."""
    lines = text.split("\n")
    starts = [_columns(line) for line in lines]
    out: list[str] = []
    for i, line in enumerate(lines):
        mine = starts[i]
        neighbours = [starts[j] for j in (i - 1, i + 1) if 0 <= j < len(lines)]
        aligned = bool(mine) and any(
            other and any(abs(a - b) <= 2 for a in mine for b in other) for other in neighbours)
        if aligned:
            out.append(" | ".join(cell.strip() for cell in re.split(r"\s{3,}", line.strip())))
        else:
            out.append(" ".join(line.split()))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def _page_text(page: Any) -> str:
    try:
        laid_out = page.extract_text(extraction_mode="layout") or ""
    except Exception:  # layout mode is newer and stricter; the plain text still reads
        laid_out = ""
    if laid_out.strip():
        return tables_as_rows(laid_out)
    return (page.extract_text() or "").strip()


def parse(data: bytes, name: str, limits: ParseLimits) -> list[Parsed]:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError as exc:
        raise MissingDependencyError("pypdf", "pdf", "reading PDF files") from exc
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ParseError(name, "the PDF is encrypted with a password")
        count = len(reader.pages)
        if count > limits.max_pages:
            raise ParseError(name, f"refused: the PDF has {count} pages, more than "
                                   f"max_pages={limits.max_pages}")
        pages = [_page_text(page) for page in reader.pages]
        info = reader.metadata
    except ParseError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError,
            RecursionError, AssertionError, IndexError, ZeroDivisionError) as exc:
        raise ParseError(name, f"not a readable PDF (damaged or truncated?): {exc}") from exc
    if not any(pages):
        raise ParseError(name, "the PDF has no extractable text (scanned images need OCR, "
                               "which ragloom does not do)")
    starts: list[int] = []
    position = 0
    for text in pages:
        starts.append(position)
        position += len(text) + 2
    metadata: dict[str, Any] = {"page_count": count, "page_starts": starts}
    if info is not None:
        for key, value in (("title", info.title), ("author", info.author)):
            if isinstance(value, str) and value.strip():
                metadata[key] = value.strip()
    return [Parsed(text="\n\n".join(pages), metadata=metadata)]

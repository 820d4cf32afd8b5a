"""PDF with pypdf (extra ``pdf``): text per page joined by blank lines.

Metadata: ``page_count``, ``page_starts`` (the character offset where each page's
text begins, so chunks know their page), ``title`` and ``author`` when set.
"""

from __future__ import annotations

import io
from typing import Any

from ragloom.errors import MissingDependencyError, ParseError
from ragloom.loaders.base import Parsed, ParseLimits


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
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
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

"""Which parser a file needs: by content first (magic bytes), then name, then MIME type.

Content wins because names lie: a ``.docx`` may be a ZIP bomb, a ``.txt`` may be a
PDF. Text formats cannot be told apart by content reliably, so for them the
extension or MIME type decides, with a sniff for HTML.
"""

from __future__ import annotations

import posixpath

from ragloom.loaders.zipcheck import zip_names

EXTENSIONS = {
    ".pdf": "pdf", ".docx": "docx", ".pptx": "pptx", ".xlsx": "xlsx", ".xlsm": "xlsx",
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown",
    ".html": "html", ".htm": "html", ".xhtml": "html",
    ".csv": "csv", ".tsv": "csv", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
}

MIME_TYPES = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "markdown": "text/markdown", "html": "text/html", "csv": "text/csv",
    "json": "application/json", "jsonl": "application/x-ndjson", "text": "text/plain",
}

_FROM_MIME = {
    "application/pdf": "pdf", "text/markdown": "markdown", "text/x-markdown": "markdown",
    "text/html": "html", "application/xhtml+xml": "html", "text/csv": "csv",
    "text/tab-separated-values": "csv", "application/json": "json",
    "application/x-ndjson": "jsonl", "application/jsonl": "jsonl",
    "application/ld+json": "json", "text/plain": "text",
    **{mime: fmt for fmt, mime in MIME_TYPES.items()},
}

_ZIP_FORMATS = (("word/", "docx"), ("ppt/", "pptx"), ("xl/", "xlsx"))
_SNIFF_BYTES = 8192
_TEXT_CONTROLS = {7, 8, 9, 10, 11, 12, 13, 27}


def extension_format(name: str) -> str | None:
    _, extension = posixpath.splitext(name.lower())
    return EXTENSIONS.get(extension)


def mime_format(mime_type: str | None) -> str | None:
    if not mime_type:
        return None
    return _FROM_MIME.get(mime_type.split(";")[0].strip().lower())


def looks_binary(data: bytes) -> bool:
    """NUL bytes or many control characters in the head, and no UTF-16 byte order mark."""
    head = data[:_SNIFF_BYTES]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    if b"\x00" in head:
        return True
    controls = sum(1 for byte in head if byte < 32 and byte not in _TEXT_CONTROLS)
    return controls > len(head) * 0.1


def detect_format(data: bytes, name: str = "", mime_type: str | None = None) -> str:
    """One of ``pdf docx pptx xlsx markdown html csv json jsonl text``, or ``zip`` for
    another ZIP archive, or ``binary`` for content no parser understands."""
    if data[:1024].lstrip()[:5] == b"%PDF-":
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        names = zip_names(data)
        if names is None:
            # A damaged archive: let the parser the name promises explain what failed.
            return extension_format(name) or "zip"
        for prefix, fmt in _ZIP_FORMATS:
            if any(entry.startswith(prefix) for entry in names):
                return fmt
        return "zip"
    claimed = extension_format(name) or mime_format(mime_type)
    if claimed in ("pdf", "docx", "pptx", "xlsx"):
        # The name says binary format but the magic bytes are missing: the parser
        # reports the damage (a truncated or mislabelled file).
        return claimed
    if looks_binary(data):
        return "binary"
    if claimed is not None:
        return claimed
    head = data[:1024].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return "html"
    return "text"

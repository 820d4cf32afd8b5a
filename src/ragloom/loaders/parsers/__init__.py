"""Parsers, one module per format, and :func:`parse_bytes`, which picks one.

Every parser is a pure function of the bytes and a name, so callers may run it in
a separate process with a time limit.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from ragloom.errors import ParseError
from ragloom.loaders.base import Parsed, ParseLimits
from ragloom.loaders.detect import detect_format
from ragloom.loaders.zipcheck import check_zip

_MODULES = {
    "text": "plain_text", "markdown": "markdown", "html": "html_page", "pdf": "pdf",
    "docx": "docx", "pptx": "pptx", "xlsx": "xlsx", "csv": "csv_table",
    "json": "json_records", "jsonl": "json_records",
}
FORMATS = tuple(_MODULES)


def parse_bytes(
    data: bytes,
    name: str,
    mime_type: str | None = None,
    *,
    limits: ParseLimits | None = None,
    text_fields: Sequence[str] | None = None,
    format: str | None = None,
) -> list[Parsed]:
    """Detect the format of ``data`` (unless ``format`` is given) and parse it.

    Returns the parsed documents (several for JSON arrays and JSON Lines) with a
    ``format`` metadata key. Raises :class:`~ragloom.errors.ParseError` with a reason
    when the content is refused or unreadable, and
    :class:`~ragloom.errors.MissingDependencyError` when the format's extra is missing.
    """
    limits = limits or ParseLimits()
    if not data:
        raise ParseError(name, "empty file")
    if len(data) > limits.max_file_bytes:
        raise ParseError(name, f"refused: {len(data)} bytes, more than "
                               f"max_file_bytes={limits.max_file_bytes}")
    fmt = format or detect_format(data, name, mime_type)
    if fmt == "binary":
        raise ParseError(name, "binary file of unknown type")
    if fmt == "zip":
        raise ParseError(name, "ZIP archive of unknown type (not DOCX, PPTX or XLSX)")
    if fmt not in _MODULES:
        raise ParseError(name, f"unsupported format {fmt!r}")
    if fmt in ("docx", "pptx", "xlsx"):
        check_zip(data, name, limits)
    module = importlib.import_module(f"ragloom.loaders.parsers.{_MODULES[fmt]}")
    if fmt in ("json", "jsonl"):
        parsed: list[Parsed] = module.parse(data, name, limits, lines=fmt == "jsonl",
                                            text_fields=text_fields)
    else:
        parsed = module.parse(data, name, limits)
    return [Parsed(text=item.text, metadata={**dict(item.metadata), "format": fmt},
                   part=item.part) for item in parsed if item.text.strip()]

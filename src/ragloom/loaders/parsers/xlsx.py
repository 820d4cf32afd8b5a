"""Excel with openpyxl in read-only mode (extra ``office``): per sheet, a
``Sheet: name`` line then each row as ``header: value; header: value``.

``page_starts`` marks where each sheet starts (so a chunk's ``page`` is its sheet
number); ``sheet_names`` lists the sheets. Cached formula values are read, not formulas.
"""

from __future__ import annotations

import io
from typing import Any

from ragloom.errors import MissingDependencyError, ParseError
from ragloom.loaders.base import Parsed, ParseLimits
from ragloom.loaders.parsers.rows import render_rows


def parse(data: bytes, name: str, limits: ParseLimits) -> list[Parsed]:
    try:
        import openpyxl
    except ImportError as exc:
        raise MissingDependencyError("openpyxl", "office", "reading XLSX files") from exc
    blocks: list[str] = []
    names: list[str] = []
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            for sheet in workbook.worksheets:
                _, lines = render_rows(sheet.iter_rows(values_only=True))
                if lines:
                    names.append(sheet.title)
                    blocks.append("\n".join([f"Sheet: {sheet.title}", *lines]))
        finally:
            workbook.close()
    except Exception as exc:  # openpyxl raises many kinds on damaged files
        raise ParseError(name, f"not a readable XLSX file: {type(exc).__name__}: {exc}") from exc
    starts, position = [], 0
    for block in blocks:
        starts.append(position)
        position += len(block) + 2
    metadata: dict[str, Any] = {"sheet_names": names, "page_count": len(blocks),
                                "page_starts": starts}
    return [Parsed(text="\n\n".join(blocks), metadata=metadata)]

"""CSV and TSV: each row as ``header: value; header: value`` (first row = headers)."""

from __future__ import annotations

import csv
import io

from ragloom.errors import ParseError
from ragloom.loaders.base import Parsed, ParseLimits
from ragloom.loaders.parsers.plain_text import decode_text
from ragloom.loaders.parsers.rows import render_rows


def _dialect(text: str, name: str) -> type[csv.Dialect] | csv.Dialect:
    if name.lower().endswith(".tsv"):
        return csv.excel_tab
    try:
        return csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
    except csv.Error:
        return csv.excel


def parse(data: bytes, name: str, limits: ParseLimits) -> list[Parsed]:
    text = decode_text(data, name)
    try:
        reader = csv.reader(io.StringIO(text), _dialect(text, name))
        headers, lines = render_rows(reader)
    except csv.Error as exc:
        raise ParseError(name, f"not a readable CSV file: {exc}") from exc
    return [Parsed(text="\n".join(lines), metadata={"columns": headers, "row_count": len(lines)})]

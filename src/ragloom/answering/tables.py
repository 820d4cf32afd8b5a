"""Tables inside passages, read as rows with their headers.

Loaders keep tables as text: Markdown pipe tables (``| Area | Day |``), HTML and
DOCX tables as ``cell | cell`` lines, CSV and XLSX rows as ``label: value; label:
value`` records, JSON records as the record itself. A row alone ("| Thornbury |
Wednesday |") does not say which value is the day; with its header it does. So
before a passage is cut into sentences, every table row becomes one record
sentence, ``Area: Thornbury; Day: Wednesday``, and a JSON record becomes
``model: Trailhawk 29; price_gbp: 1249; ...``. Two-column tables whose first row
already holds values (a specification table: ``Weight | 1.29 kg``) become
``Weight: 1.29 kg``. The header row itself is never a sentence of its own: a row
lookup never returns the header. A passage that starts inside a table split
between chunks gets that table's header back (:func:`with_table_header`, from the
chunk's ``table_header`` metadata).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from ragloom.types import QueryMatch

_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_JSON_PAIR = re.compile(r'"([^"]{1,60})"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false|null)')


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [cell.strip().replace("**", "") for cell in body.split("|")]


def _is_row(line: str) -> bool:
    return line.count("|") >= 1 and len(_cells(line)) >= 2 and not _SEPARATOR.match(line)


def _looks_like_header(cells: list[str], rows: list[list[str]]) -> bool:
    # A header names its columns; a year inside a name ("Annual charge 2026/27",
    # "Value (1 April 1991)") does not make it a row, a cell that is a value does.
    if any(cell and (cell[0].isdigit() or cell[0] in "£$€¥") for cell in cells):
        return False
    if len(cells) == 2 and rows and all(len(r) == 2 for r in rows):
        # A two-column table is a header + rows only when no row reads "label: value"
        # against it: headers are short words, values vary.
        return all(len(cell.split()) <= 4 for cell in cells)
    return True


def _records(block: list[str]) -> list[str]:
    rows = [_cells(line) for line in block if not _SEPARATOR.match(line)]
    has_separator = any(_SEPARATOR.match(line) for line in block)
    if not rows:
        return []
    if has_separator or _looks_like_header(rows[0], rows[1:]):
        header, body = rows[0], rows[1:]
    elif all(len(r) == 2 for r in rows):
        return [f"{r[0]}: {r[1]}" for r in rows if r[0] and r[1]]
    else:
        header, body = [], rows
    lines: list[str] = []
    for row in body:
        if header and len(row) == len(header):
            pairs = [f"{h}: {v}" for h, v in zip(header, row, strict=True) if v]
            lines.append("; ".join(pairs))
        else:
            lines.append("; ".join(cell for cell in row if cell))
    return [line for line in lines if line]


def _flat(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_flat(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {_flat(v)}" for k, v in value.items())
    return str(value)


def json_record(text: str) -> str | None:
    """A JSON object (or a cut-off one) as one ``key: value; ...`` record."""
    body = text.strip()
    if not body.startswith("{"):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        pairs = _JSON_PAIR.findall(body)
        if len(pairs) < 2:
            return None
        return "; ".join(f"{k}: {v.strip(chr(34))}" for k, v in pairs)
    if not isinstance(data, dict):
        return None
    return "; ".join(f"{key}: {_flat(value)}" for key, value in data.items()
                     if value not in (None, "", []))


def with_records(text: str) -> str:
    """``text`` with each table block rewritten as one record line per row."""
    record = json_record(text)
    if record is not None:
        return record
    lines = text.split("\n")
    out: list[str] = []
    block: list[str] = []

    def flush() -> None:
        if len(block) >= 2:
            out.extend(_records(block))
        else:
            out.extend(block)
        block.clear()

    for line in lines:
        if _is_row(line) or (block and _SEPARATOR.match(line)):
            block.append(line)
        else:
            flush()
            out.append(line)
    flush()
    return "\n".join(out)


def with_table_header(match: QueryMatch) -> QueryMatch:
    """``match`` with its table's header line before its text, when its chunk starts
    inside a table whose header is in an earlier chunk (``table_header`` metadata):
    the rows then read with their column names ("Bedrooms: 4", not "4")."""
    header = match.chunk.metadata.get("table_header")
    text = match.chunk.text
    if not isinstance(header, str) or not header.strip() or text.startswith(header):
        return match
    return replace(match, chunk=replace(match.chunk, text=f"{header}\n{text}"))

"""Tables as text: each row as ``header: value; header: value``, empty cells left out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return " ".join(str(value).split())


def render_rows(rows: Iterable[Sequence[object]]) -> tuple[list[str], list[str]]:
    """``(headers, lines)``: the first non-empty row names the columns."""
    headers: list[str] = []
    lines: list[str] = []
    for row in rows:
        cells = [cell_text(value) for value in row]
        if not any(cells):
            continue
        if not headers:
            headers = [cell or f"column {i + 1}" for i, cell in enumerate(cells)]
            continue
        pairs = []
        for i, cell in enumerate(cells):
            if cell:
                header = headers[i] if i < len(headers) else f"column {i + 1}"
                pairs.append(f"{header}: {cell}")
        lines.append("; ".join(pairs))
    return headers, lines

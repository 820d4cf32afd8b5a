"""JSON and JSON Lines: one document per record.

A record's text is its text fields (default: ``text``, ``content``, ``body``, those
present) joined by blank lines, else the whole record as indented JSON. Its other
scalar fields become metadata. A JSON array holds one record per item; any other
JSON value is one record, except a catalogue: an object one of whose fields is a list
of two or more objects ("plans": [...], "products": [...]) gives one record per item
of its largest such list, after a record of the object's other fields (its name, its
notes), so each plan or product is found and cited on its own. Records are numbered
in ``Parsed.part`` ("0", "1", ...) unless the file holds a single JSON object.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ragloom.errors import ParseError
from ragloom.loaders.base import Parsed, ParseLimits
from ragloom.loaders.parsers.plain_text import decode_text

DEFAULT_TEXT_FIELDS = ("text", "content", "body")


def record_to_parsed(
    record: Any, text_fields: Sequence[str], part: str | None
) -> Parsed | None:
    """A record as text plus scalar metadata, or None when it holds no text."""
    metadata: dict[str, Any] = {}
    if isinstance(record, dict):
        texts = [record[f] for f in text_fields if isinstance(record.get(f), str)]
        for key, value in record.items():
            if key in text_fields or not isinstance(key, str):
                continue
            if value is None or isinstance(value, (str, int, float, bool)):
                metadata[key] = value
        text = "\n\n".join(t for t in texts if t.strip()) if texts else json.dumps(
            record, indent=2, ensure_ascii=False)
    elif isinstance(record, str):
        text = record
    else:
        text = json.dumps(record, indent=2, ensure_ascii=False)
    if not text.strip():
        return None
    if part is not None:
        metadata["record"] = int(part)
    return Parsed(text=text, metadata=metadata, part=part)


def _catalogue_items(value: Any) -> list[Any]:
    """A catalogue object's records: its other fields, then each item of its largest
    list of objects ([] when ``value`` is not such an object)."""
    if not isinstance(value, dict):
        return []
    lists = [(key, item) for key, item in value.items() if isinstance(item, list)
             and len(item) >= 2 and all(isinstance(entry, dict) for entry in item)]
    if not lists:
        return []
    key, items = max(lists, key=lambda pair: len(pair[1]))
    rest = {name: field for name, field in value.items() if name != key}
    return ([rest] if rest else []) + list(items)


def _records(data: bytes, name: str, lines: bool) -> tuple[list[Any], bool]:
    text = decode_text(data, name)
    if not lines:
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise ParseError(name, f"not valid JSON: {exc}") from exc
        if isinstance(value, list):
            return value, True
        items = _catalogue_items(value)
        return (items, True) if items else ([value], False)
    records = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except ValueError as exc:
                raise ParseError(name, f"line {number} is not valid JSON: {exc}") from exc
    return records, True


def parse(
    data: bytes, name: str, limits: ParseLimits, *, lines: bool = False,
    text_fields: Sequence[str] | None = None,
) -> list[Parsed]:
    records, numbered = _records(data, name, lines)
    fields = tuple(text_fields) if text_fields else DEFAULT_TEXT_FIELDS
    parsed = [record_to_parsed(record, fields, str(i) if numbered else None)
              for i, record in enumerate(records)]
    return [item for item in parsed if item is not None]

"""Small helpers shared by the ``/v1`` routes: ids, time, list envelopes, JSON bodies."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator, Sequence
from typing import Any

from ragloom.server.v1.errors import bad_request


def new_id(prefix: str) -> str:
    return f"{prefix}{secrets.token_hex(12)}"


def now() -> int:
    return int(time.time())


def tenant_id(tenant: Any) -> str:
    return str(getattr(tenant, "id", tenant))


#: The largest ``limit`` a list endpoint takes.
MAX_LIST_LIMIT = 1000


def check_list(limit: int, order: str, largest: int = MAX_LIST_LIMIT) -> None:
    if order not in ("asc", "desc"):
        raise bad_request("order must be 'asc' or 'desc'", "order")
    if not 1 <= limit <= largest:
        raise bad_request(f"limit must be between 1 and {largest}", "limit")


def page_rows(db: Any, table: str, where: str, params: Sequence[Any], *, limit: int,
              order: str, after: str | None, before: str | None,
              largest: int = MAX_LIST_LIMIT, id_column: str = "id"
              ) -> tuple[list[Any], bool]:
    """(rows, has_more): one page of ``table``'s rows matching ``where`` in
    (created_at, rowid) order, read with ``LIMIT`` from the cursor on, never the
    whole table. ``table`` and ``where`` are the caller's constants, never input."""
    check_list(limit, order, largest)
    sql = f"SELECT * FROM {table} WHERE {where}"
    args = list(params)
    ahead = ">" if order == "asc" else "<"
    for cursor, compare in ((after, ahead), (before, "<" if ahead == ">" else ">")):
        if cursor is None:
            continue
        found = db.rows(f"SELECT created_at, rowid FROM {table} WHERE {where} "
                        f"AND {id_column} = ?",
                        [*params, cursor])
        if not found:
            if cursor is after:
                return [], False  # an unknown ``after``: nothing follows it
            continue
        created, rowid = found[0][0], found[0][1]
        sql += f" AND (created_at {compare} ? OR (created_at = ? AND rowid {compare} ?))"
        args += [created, created, rowid]
    direction = "ASC" if order == "asc" else "DESC"
    rows = db.rows(f"{sql} ORDER BY created_at {direction}, rowid {direction} LIMIT ?",
                   [*args, limit + 1])
    return rows[:limit], len(rows) > limit


def envelope(data: list[dict[str, Any]], has_more: bool) -> dict[str, Any]:
    return {"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None, "has_more": has_more}


def page(items: Sequence[dict[str, Any]], *, limit: int, order: str, after: str | None,
         before: str | None) -> dict[str, Any]:
    """OpenAI's list envelope over ``items`` (oldest first), cut by the cursor fields."""
    check_list(limit, order)
    ordered = list(items) if order == "asc" else list(reversed(items))
    ids = [item["id"] for item in ordered]
    if after is not None:
        ordered = ordered[ids.index(after) + 1:] if after in ids else []
        ids = [item["id"] for item in ordered]
    if before is not None:
        ordered = ordered[:ids.index(before)] if before in ids else ordered
    data = ordered[:limit]
    return {"object": "list", "data": data,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
            "has_more": len(ordered) > limit}


def sse_events(events: Iterator[dict[str, Any]]) -> Iterator[str]:
    """Server-sent events as OpenAI sends them: ``event:`` and ``data:`` lines, numbered."""
    for number, event in enumerate(events):
        event = {"type": event["type"], "sequence_number": number,
                 **{k: v for k, v in event.items() if k != "type"}}
        yield f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"


SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}

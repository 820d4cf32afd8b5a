"""Small helpers shared by the ``/v1`` routes: ids, time, list envelopes, JSON bodies."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator, Sequence
from typing import Any

from ragloom.server.openai_compat.errors import bad_request


def new_id(prefix: str) -> str:
    return f"{prefix}{secrets.token_hex(12)}"


def now() -> int:
    return int(time.time())


def tenant_id(tenant: Any) -> str:
    return str(getattr(tenant, "id", tenant))


def page(items: Sequence[dict[str, Any]], *, limit: int, order: str, after: str | None,
         before: str | None) -> dict[str, Any]:
    """OpenAI's list envelope over ``items`` (oldest first), cut by the cursor fields."""
    if order not in ("asc", "desc"):
        raise bad_request("order must be 'asc' or 'desc'", "order")
    if not 1 <= limit <= 10_000:
        raise bad_request("limit must be between 1 and 10000", "limit")
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

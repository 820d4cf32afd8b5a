"""Vector store expiry, as OpenAI documents it: ``expires_after`` =
``{"anchor": "last_active_at", "days": N}`` makes a store expire N days after it was
last used.

* ``expires_at`` = ``last_active_at`` + N days, in every vector store object.
* Use moves ``last_active_at`` (and so ``expires_at``): a search, attaching files
  (one file, a batch, ``file_ids`` at creation) and changing the store (``POST``, so a
  new policy counts from the change). Reading, listing and the files' own routes are
  not use.
* Once ``expires_at`` has passed, ``status`` is ``expired`` for good: the store is "no
  longer available for use" (OpenAI's wording). Searching it or attaching to it is a
  400 with code ``vector_store_expired`` (a client error the SDK does not retry, not a
  404: the store is still there to read, list, rename and delete), and a change of
  its ``expires_after`` (400 too) cannot bring it back. OpenAI's advice stands: create a new vector
  store with the same files.

The time comes from the clock the routes are given (``OpenAIDeps.clock``), so tests
move it days ahead without waiting.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from ragloom.server.v1.db import MetaDB
from ragloom.server.v1.errors import OpenAIError, bad_request

DAY = 86_400


def expires_at(row: Any) -> int | None:
    """When the store expires (Unix seconds), or None without an expiry policy."""
    if not row["expires_after"]:
        return None
    policy = json.loads(row["expires_after"])
    return int(row["last_active_at"]) + DAY * int(policy["days"])


def is_expired(row: Any, now: int) -> bool:
    at = expires_at(row)
    return at is not None and now >= at


def expired_error(row: Any) -> OpenAIError:
    at = datetime.fromtimestamp(expires_at(row) or 0, timezone.utc)
    return bad_request(
        f"Vector store '{row['id']}' expired at {at:%Y-%m-%d %H:%M:%S} UTC (no use for "
        f"the days its expires_after allows) and can no longer be searched or given "
        "files. Create a new vector store with the same files.", "vector_store_id",
        code="vector_store_expired")


def check_usable(row: Any, now: int) -> None:
    """Raise the 400 an expired store answers to use."""
    if is_expired(row, now):
        raise expired_error(row)


def touch(db: MetaDB, row: Any, now: int) -> None:
    """Record use of the store: ``last_active_at`` = ``now``.

    Written only when the second changed, so a busy store costs one small write a
    second, not one per search; the condition in SQL keeps a store that expired since
    ``row`` was read expired, and a clock that went back never moves the time back.
    """
    if int(row["last_active_at"]) >= now:
        return
    db.execute("UPDATE oai_vector_stores SET last_active_at = ? WHERE id = ? AND "
               "last_active_at < ? AND (expires_after IS NULL OR last_active_at > ?)",
               (now, row["id"], now, now - DAY * _days(row)))


def _days(row: Any) -> int:
    if not row["expires_after"]:
        return 0
    return int(json.loads(row["expires_after"])["days"])

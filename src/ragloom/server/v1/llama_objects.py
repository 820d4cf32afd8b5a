"""The Llama Stack objects a tenant owns, kept as JSON in the metadata database.

One table (``ls_objects``, see :mod:`.db`) holds every kind: ``vector_db`` (a
registration), ``agent``, ``session`` (parent: its agent), ``turn`` (parent: its
session), ``conversation`` and ``conversation_item`` (parent: its conversation).
Rows are keyed by kind, tenant and id, so another tenant's id is simply not found;
they live in the same SQLite file (or PostgreSQL schema) as the files and vector
stores, so they survive a restart.
"""

from __future__ import annotations

import json
from typing import Any

from ragloom.server.v1.common import now
from ragloom.server.v1.db import MetaDB, dumps
from ragloom.server.v1.errors import not_found


class LlamaObjects:
    """Tenant-scoped JSON objects by kind (cheap: the database opens on first use)."""

    def __init__(self, db: MetaDB) -> None:
        self.db = db

    def put(self, kind: str, tenant: str, ident: str, body: dict[str, Any], *,
            parent: str | None = None) -> dict[str, Any]:
        """Create or replace an object (its creation time is kept on replace)."""
        self.db.execute(
            "INSERT INTO ls_objects (kind, tenant, id, parent, created_at, body) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (kind, tenant, id) "
            "DO UPDATE SET body = excluded.body",
            (kind, tenant, ident, parent, now(), dumps(body)))
        return body

    def find(self, kind: str, tenant: str, ident: str) -> dict[str, Any] | None:
        row = self.db.row("SELECT body FROM ls_objects WHERE kind = ? AND tenant = ? AND id = ?",
                          (kind, tenant, ident))
        return None if row is None else dict(json.loads(row["body"]))

    def get(self, kind: str, tenant: str, ident: str, param: str) -> dict[str, Any]:
        """The object, or a 404 naming it (also for another tenant's id)."""
        found = self.find(kind, tenant, ident)
        if found is None:
            raise not_found(kind.replace("_", " "), ident, param)
        return found

    def children(self, kind: str, tenant: str, parent: str | None = None
                 ) -> list[dict[str, Any]]:
        """Objects of a kind, oldest first; only those under ``parent`` when given."""
        if parent is None:
            rows = self.db.rows("SELECT body FROM ls_objects WHERE kind = ? AND tenant = ? "
                                "ORDER BY rowid", (kind, tenant))
        else:
            rows = self.db.rows("SELECT body FROM ls_objects WHERE kind = ? AND tenant = ? "
                                "AND parent = ? ORDER BY rowid", (kind, tenant, parent))
        return [dict(json.loads(row["body"])) for row in rows]

    def delete(self, kind: str, tenant: str, ident: str) -> bool:
        return self.db.execute("DELETE FROM ls_objects WHERE kind = ? AND tenant = ? AND id = ?",
                               (kind, tenant, ident)) > 0

    def delete_children(self, kind: str, tenant: str, parent: str) -> int:
        return self.db.execute("DELETE FROM ls_objects WHERE kind = ? AND tenant = ? AND "
                               "parent = ?", (kind, tenant, parent))

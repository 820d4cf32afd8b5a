"""Chat sessions persisted in SQLite: sessions with their messages and the sources
each answer was given.

API (the CLI's ``ragloom ask --session`` / ``ragloom sessions`` and the HTTP server
both use it)::

    store = SessionStore(".ragloom/ragloom.db")   # a .db file, or a folder (-> ragloom.db)
    session = store.create("support")             # name=None picks a fresh unique name
    store.append("support", "user", "How long is the battery warranty?")
    store.append("support", "assistant", "Two years [1].",
                 sources=answer.sources,           # QueryMatch objects or plain dicts
                 metadata={"query": "..."})        # any JSON: the query used, searches...
    store.list()                  -> [Session], most recently updated first
    store.get("support")          -> Session (raises SessionNotFoundError)
    store.find("support")         -> Session | None
    store.messages("support")     -> [StoredMessage], oldest first (``limit`` = last N)
    store.history("support")      -> [ChatMessage] for a model or a memory
    store.delete("support")       -> bool (messages go with it)

The tables (``chat_sessions``, ``chat_messages``) live next to the knowledge bases in
the same database file; they share no table with the vector store. Every call opens
its own short connection, so one ``SessionStore`` may be shared between threads.
Constructing one touches no file; the first call creates the tables.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragloom.errors import InvalidInputError, NotFoundError, StoreError
from ragloom.types import ChatMessage, QueryMatch, Role

__all__ = ["Session", "SessionNotFoundError", "SessionStore", "StoredMessage"]

DB_FILE_NAME = "ragloom.db"
_ROLES = ("system", "user", "assistant", "tool")

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS chat_sessions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,
        metadata TEXT NOT NULL DEFAULT '{}',
        created REAL NOT NULL,
        updated REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS chat_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        sources TEXT NOT NULL DEFAULT '[]',
        metadata TEXT NOT NULL DEFAULT '{}',
        created REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS chat_messages_by_session ON chat_messages (session_id, id)",
)


class SessionNotFoundError(NotFoundError):
    """No chat session of that name exists."""


@dataclass(frozen=True, kw_only=True)
class Session:
    """A conversation: its name, times (seconds since the epoch) and message count."""

    name: str
    created: float
    updated: float
    message_count: int = 0
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "created": self.created, "updated": self.updated,
                "message_count": self.message_count, "metadata": dict(self.metadata)}


@dataclass(frozen=True, kw_only=True)
class StoredMessage:
    """One message of a session, with the sources an answer was given (as dicts:
    ``QueryMatch.to_dict()`` shape) and free metadata (e.g. the retrieval query)."""

    id: int
    session: str
    role: Role
    content: str
    created: float
    sources: tuple[Mapping[str, Any], ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_chat_message(self) -> ChatMessage:
        return ChatMessage(role=self.role, content=self.content)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "session": self.session, "role": self.role,
                "content": self.content, "created": self.created,
                "sources": [dict(s) for s in self.sources], "metadata": dict(self.metadata)}


def _source_dict(source: QueryMatch | Mapping[str, Any]) -> dict[str, Any]:
    return source.to_dict() if isinstance(source, QueryMatch) else dict(source)


def _check_name(name: str) -> str:
    cleaned = name.strip()
    if not cleaned:
        raise InvalidInputError("a session name may not be empty")
    if len(cleaned) > 200:
        raise InvalidInputError("a session name may have at most 200 characters")
    return cleaned


class SessionStore:
    """Chat sessions in a SQLite file (see the module docstring for the API)."""

    def __init__(self, path: str | Path) -> None:
        target = Path(path).expanduser()
        if target.suffix not in (".db", ".sqlite", ".sqlite3") and not target.is_file():
            target = target / DB_FILE_NAME
        self.path = target
        self._ready = False
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ connections
    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the session database {self.path}: {exc}") from exc
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            if not self._ready:
                with self._lock:
                    if not self._ready:
                        conn.execute("PRAGMA journal_mode = WAL")
                        for statement in _SCHEMA:
                            conn.execute(statement)
                        conn.commit()
                        self._ready = True
            with conn:
                yield conn
        except sqlite3.Error as exc:
            raise StoreError(f"session database {self.path}: {exc}") from exc
        finally:
            conn.close()

    @staticmethod
    def _session(row: Sequence[Any]) -> Session:
        return Session(name=row[0], metadata=json.loads(row[1]), created=row[2],
                       updated=row[3], message_count=int(row[4]))

    _SELECT = ("SELECT s.name, s.metadata, s.created, s.updated, "
               "(SELECT COUNT(*) FROM chat_messages m WHERE m.session_id = s.id) "
               "FROM chat_sessions s")

    # ---------------------------------------------------------------------- sessions
    def create(
        self, name: str | None = None, *, metadata: Mapping[str, Any] | None = None,
        exist_ok: bool = False,
    ) -> Session:
        """A new session; ``name=None`` picks a unique one. An existing name is an
        error unless ``exist_ok`` (then the existing session is returned)."""
        chosen = _check_name(name) if name is not None else f"session-{uuid.uuid4().hex[:12]}"
        now = time.time()
        with self._connect() as conn:
            # INSERT OR IGNORE: two threads creating one name must not race into an error.
            inserted = conn.execute(
                "INSERT OR IGNORE INTO chat_sessions (name, metadata, created, updated) "
                "VALUES (?, ?, ?, ?)",
                (chosen, json.dumps(dict(metadata or {}), default=str), now, now)).rowcount
            if not inserted and not exist_ok:
                raise InvalidInputError(f"a session named {chosen!r} already exists; pick "
                                        "another name or delete it first")
            row = conn.execute(self._SELECT + " WHERE s.name = ?", (chosen,)).fetchone()
        return self._session(row)

    def find(self, name: str) -> Session | None:
        with self._connect() as conn:
            row = conn.execute(self._SELECT + " WHERE s.name = ?", (name,)).fetchone()
        return None if row is None else self._session(row)

    def get(self, name: str) -> Session:
        session = self.find(name)
        if session is None:
            raise SessionNotFoundError(
                f"no chat session named {name!r}; list them with: ragloom sessions list")
        return session

    def list(self) -> list[Session]:
        """Every session, most recently updated first."""
        with self._connect() as conn:
            rows = conn.execute(self._SELECT + " ORDER BY s.updated DESC, s.id DESC").fetchall()
        return [self._session(row) for row in rows]

    def delete(self, name: str) -> bool:
        """Remove a session and its messages; False when there was none."""
        with self._connect() as conn:
            cursor = conn.execute("DELETE FROM chat_sessions WHERE name = ?", (name,))
        return cursor.rowcount > 0

    # ---------------------------------------------------------------------- messages
    def append(
        self, name: str, role: Role, content: str, *,
        sources: Sequence[QueryMatch | Mapping[str, Any]] = (),
        metadata: Mapping[str, Any] | None = None, create: bool = True,
    ) -> StoredMessage:
        """Add one message to a session (created on first use unless ``create=False``)."""
        if role not in _ROLES:
            raise InvalidInputError(f"unknown message role {role!r}; use one of {_ROLES}")
        if create:
            self.create(name, exist_ok=True)
        now = time.time()
        source_dicts = [_source_dict(s) for s in sources]
        meta = dict(metadata or {})
        with self._connect() as conn:
            row = conn.execute("SELECT id FROM chat_sessions WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise SessionNotFoundError(f"no chat session named {name!r}")
            cursor = conn.execute(
                "INSERT INTO chat_messages (session_id, role, content, sources, metadata, created)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (row[0], role, content, json.dumps(source_dicts, default=str),
                 json.dumps(meta, default=str), now))
            conn.execute("UPDATE chat_sessions SET updated = ? WHERE id = ?", (now, row[0]))
            message_id = int(cursor.lastrowid or 0)
        return StoredMessage(id=message_id, session=name, role=role, content=content,
                             created=now, sources=tuple(source_dicts), metadata=meta)

    def messages(self, name: str, *, limit: int | None = None) -> builtins.list[StoredMessage]:
        """The session's messages, oldest first; ``limit`` keeps the last N."""
        self.get(name)
        query = ("SELECT m.id, m.role, m.content, m.created, m.sources, m.metadata "
                 "FROM chat_messages m JOIN chat_sessions s ON s.id = m.session_id "
                 "WHERE s.name = ? ORDER BY m.id DESC")
        params: tuple[Any, ...] = (name,)
        if limit is not None:
            query += " LIMIT ?"
            params = (name, max(0, int(limit)))
        with self._connect() as conn:
            rows = conn.execute(query, params).fetchall()
        return [StoredMessage(id=r[0], session=name, role=r[1], content=r[2], created=r[3],
                              sources=tuple(json.loads(r[4])), metadata=json.loads(r[5]))
                for r in reversed(rows)]

    def history(self, name: str, *, limit: int | None = None) -> builtins.list[ChatMessage]:
        """The conversation as chat messages (empty for an unknown session)."""
        if self.find(name) is None:
            return []
        return [m.to_chat_message() for m in self.messages(name, limit=limit)]

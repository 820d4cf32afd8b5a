"""Chat sessions: a tenant's conversation with some knowledge bases, kept in the
server database. Asking within a session sends the last turns to the model and
retrieves with the previous question in mind, so follow-ups ("and the second
one?") find their passages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ragloom.server.auth import Tenant
from ragloom.server.db import ServerDatabase, new_id, now
from ragloom.server.errors import not_found
from ragloom.types import ChatMessage

HISTORY_TURNS = 6  # messages sent to the model: small models lose the thread past that


@dataclass(frozen=True, kw_only=True)
class Session:
    id: str
    tenant_id: str
    title: str
    knowledge_bases: list[str]
    created: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "object": "chat_session", "title": self.title,
                "knowledge_bases": self.knowledge_bases, "created_at": int(self.created)}


@dataclass(frozen=True, kw_only=True)
class SessionMessage:
    role: str
    content: str
    created: float
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content, "created_at": int(self.created),
                **self.extra}


class SessionStore:
    """Create, list, read, delete sessions and append their messages."""

    def __init__(self, db: ServerDatabase) -> None:
        self.db = db

    def create(self, tenant: Tenant, knowledge_bases: list[str], title: str = "") -> Session:
        session = Session(id=new_id("sess"), tenant_id=tenant.id, title=title,
                          knowledge_bases=list(knowledge_bases), created=now())
        self.db.execute("INSERT INTO sessions (id, tenant_id, title, knowledge_bases, created) "
                        "VALUES (?, ?, ?, ?, ?)", (session.id, tenant.id, title,
                                                   json.dumps(knowledge_bases), session.created))
        return session

    @staticmethod
    def _session(row: tuple[Any, ...]) -> Session:
        return Session(id=row[0], tenant_id=row[1], title=row[2],
                       knowledge_bases=json.loads(row[3]), created=row[4])

    def get(self, tenant: Tenant, session_id: str) -> Session:
        row = self.db.one("SELECT id, tenant_id, title, knowledge_bases, created FROM sessions "
                          "WHERE id = ? AND tenant_id = ?", (session_id, tenant.id))
        if row is None:
            raise not_found("chat session", session_id)
        return self._session(row)

    def list_sessions(self, tenant: Tenant, limit: int = 1000) -> list[Session]:
        rows = self.db.all("SELECT id, tenant_id, title, knowledge_bases, created FROM sessions "
                           "WHERE tenant_id = ? ORDER BY created, id LIMIT ?", (tenant.id, limit))
        return [self._session(r) for r in rows]

    def delete(self, tenant: Tenant, session_id: str) -> None:
        self.get(tenant, session_id)
        self.db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def messages(self, session: Session) -> list[SessionMessage]:
        rows = self.db.all("SELECT role, content, extra, created FROM session_messages "
                           "WHERE session_id = ? ORDER BY id", (session.id,))
        return [SessionMessage(role=r[0], content=r[1], extra=json.loads(r[2]), created=r[3])
                for r in rows]

    def history(self, session: Session) -> list[ChatMessage]:
        """The last whole turns, as chat messages for the model (the library's chat
        memory picks them: :class:`ragloom.chat.MessageWindowMemory`)."""
        from ragloom.chat import MessageWindowMemory

        messages = [ChatMessage.user(m.content) if m.role == "user"
                    else ChatMessage.assistant(m.content) for m in self.messages(session)]
        return MessageWindowMemory(HISTORY_TURNS).select(messages)

    def append(self, session: Session, question: str, answer: str,
               extra: dict[str, Any]) -> None:
        stamp = now()
        with self.db.transaction() as conn:
            conn.executemany(
                "INSERT INTO session_messages (session_id, role, content, extra, created) "
                "VALUES (?, ?, ?, ?, ?)",
                [(session.id, "user", question, "{}", stamp),
                 (session.id, "assistant", answer, json.dumps(extra), stamp)])

"""Chat sessions (persisted in SQLite) and chat memory (which earlier messages reach
the model). See :mod:`ragloom.chat.sessions` for the session store's API."""

from __future__ import annotations

from ragloom.chat.memory import ChatMemory, MessageWindowMemory, TokenWindowMemory, turns
from ragloom.chat.sessions import Session, SessionNotFoundError, SessionStore, StoredMessage

__all__ = [
    "ChatMemory", "MessageWindowMemory", "Session", "SessionNotFoundError", "SessionStore",
    "StoredMessage", "TokenWindowMemory", "turns",
]

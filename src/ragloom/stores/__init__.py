"""Vector stores: in-memory, SQLite (the embedded default), later server databases."""

from ragloom.stores.memory import InMemoryVectorStore

__all__ = ["InMemoryVectorStore"]

"""Document transformers: change a document after parsing, before splitting.

Chunk transformers (after splitting, before embedding) are
:class:`ragloom.chunking.ChunkTransformer`. A transformer that has a
``settings_key()`` takes part in change detection: changing it re-ingests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ragloom.types import TextDocument


@runtime_checkable
class DocumentTransformer(Protocol):
    def transform(self, document: TextDocument) -> TextDocument | None:
        """The changed document, or None to leave it out (recorded as skipped)."""
        ...


@dataclass(frozen=True)
class AddMetadata:
    """Add fixed metadata to every document (existing keys win unless ``override``)."""

    values: Mapping[str, Any] = field(default_factory=dict)
    override: bool = False

    def transform(self, document: TextDocument) -> TextDocument:
        merged = ({**document.metadata, **self.values} if self.override
                  else {**self.values, **document.metadata})
        return TextDocument(id=document.id, source=document.source, text=document.text,
                            metadata=merged)

    def settings_key(self) -> str:
        return f"AddMetadata({sorted(self.values.items())!r}, override={self.override})"


def settings_of(obj: object) -> str:
    describe = getattr(obj, "settings_key", None)
    return str(describe()) if callable(describe) else type(obj).__name__

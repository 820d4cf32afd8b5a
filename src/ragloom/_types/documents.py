"""Documents and chunks: content-addressed ids, NUL-free JSON metadata, one versioned
``to_dict`` / ``from_dict`` shape (``SCHEMA_VERSION``). Re-exported by :mod:`ragloom.types`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

JSONScalar: TypeAlias = str | int | float | bool | None
JSON: TypeAlias = JSONScalar | list["JSON"] | dict[str, "JSON"]
Metadata: TypeAlias = Mapping[str, Any]

SCHEMA_VERSION = 1


def content_id(*parts: str) -> str:
    """A stable id from the given strings: 32 hex characters of SHA-256."""
    digest = hashlib.sha256()
    for part in parts:
        encoded = part.encode("utf-8", "surrogatepass")
        # The length prefix keeps ("ab", "c") and ("a", "bc") apart.
        digest.update(len(encoded).to_bytes(8, "big"))
        digest.update(encoded)
    return digest.hexdigest()[:32]


def text_hash(text: str) -> str:
    """Full SHA-256 of a text; used for change detection and embedding caches."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def without_nul(value: Any) -> Any:
    """The value with NUL characters in its strings replaced by U+FFFD.

    SQLite's JSON functions stop reading a string at a NUL, so a store would compare
    "a\x00b" as "a"; replacing it everywhere keeps one meaning for filters on every store.
    """
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, Mapping):
        return {without_nul(k): without_nul(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(without_nul(v) for v in value)
    return value


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, Mapping):
        items: Any = value.items()
    elif isinstance(value, (list, tuple)):
        items = ((None, item) for item in value)
    else:
        return False
    # Every chunk read back from a store passes here: strings and numbers are
    # tested in the loop, without a call each (a third of the time of reading 20
    # chunks back took the recursive form).
    for key, item in items:
        if type(key) is str:
            if "\x00" in key:
                return True
        elif key is not None and _has_nul(key):
            return True
        if type(item) is str:
            if "\x00" in item:
                return True
        elif type(item) not in _SCALARS and _has_nul(item):
            return True
    return False


_SCALARS = frozenset({int, float, bool, type(None)})


def _frozen_metadata(metadata: Metadata | None) -> dict[str, Any]:
    data = dict(metadata or {})
    # Round-trip through JSON so metadata is plain data that every store can hold.
    try:
        return dict(json.loads(json.dumps(data, default=str)))
    except (TypeError, ValueError) as exc:  # pragma: no cover - default=str catches most
        raise ValueError(f"metadata must be JSON-serialisable: {exc}") from exc


@dataclass(frozen=True, kw_only=True)
class Document:
    """A whole source: a file, a web page, a record.

    ``source`` names where it came from (a path, URL or caller-chosen key); a later
    document with the same source replaces this one in a knowledge base.
    """

    id: str
    source: str
    metadata: Metadata = field(default_factory=dict)

    def __post_init__(self) -> None:
        if _has_nul(self.metadata):
            object.__setattr__(self, "metadata", without_nul(self.metadata))

    def to_dict(self) -> dict[str, Any]:
        return {"version": SCHEMA_VERSION, "type": "document", "id": self.id,
                "source": self.source, "metadata": dict(self.metadata)}


@dataclass(frozen=True, kw_only=True)
class TextDocument(Document):
    """A document whose content is text."""

    text: str

    @classmethod
    def create(
        cls, text: str, *, source: str = "", metadata: Metadata | None = None
    ) -> TextDocument:
        """Build a document whose id is derived from its source and text."""
        source = source or f"text:{text_hash(text)[:16]}"
        meta = _frozen_metadata(metadata)
        meta.setdefault("source", source)
        meta.setdefault("content_hash", text_hash(text))
        return cls(id=content_id(source, text), source=source, text=text, metadata=meta)

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data.update(type="text_document", text=self.text)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TextDocument:
        _check_version(data)
        return cls(id=data["id"], source=data["source"], text=data["text"],
                   metadata=dict(data.get("metadata") or {}))


@dataclass(frozen=True, kw_only=True)
class BinaryDocument(Document):
    """A document whose content is bytes a model may read directly: an image, a PDF.

    Text-only models see a placeholder naming its type instead (see :meth:`placeholder`).
    """

    data: bytes = field(repr=False)
    mime_type: str

    @classmethod
    def create(
        cls, data: bytes, *, mime_type: str, source: str = "",
        metadata: Metadata | None = None,
    ) -> BinaryDocument:
        """Build a document whose id is derived from its source and bytes."""
        digest = hashlib.sha256(data).hexdigest()
        source = source or f"bytes:{digest[:16]}"
        meta = _frozen_metadata(metadata)
        meta.setdefault("source", source)
        meta.setdefault("content_hash", digest)
        meta.setdefault("mime_type", mime_type)
        return cls(id=content_id(source, digest), source=source, data=bytes(data),
                   mime_type=mime_type, metadata=meta)

    @property
    def named_source(self) -> str:
        """The source the caller gave, or "" when it was derived from the bytes."""
        return "" if self.source.startswith("bytes:") else self.source

    def placeholder(self, number: int | None = None) -> str:
        """Text standing in for the bytes, e.g. ``[attachment 1: image/png, cat.png]``."""
        label = "attachment" if number is None else f"attachment {number}"
        where = f", {self.named_source}" if self.named_source else ""
        return f"[{label}: {self.mime_type}{where}]"

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data.update(type="binary_document", mime_type=self.mime_type,
                    data=base64.b64encode(self.data).decode("ascii"))
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BinaryDocument:
        _check_version(data)
        return cls(id=data["id"], source=data["source"], mime_type=data["mime_type"],
                   data=base64.b64decode(data["data"]),
                   metadata=dict(data.get("metadata") or {}))


@dataclass(frozen=True, kw_only=True)
class Chunk:
    """A piece of a document that keeps its document's metadata plus its own."""

    id: str
    document_id: str
    index: int
    start: int
    end: int
    page: int | None = None
    metadata: Metadata = field(default_factory=dict)

    def __post_init__(self) -> None:
        if _has_nul(self.metadata):
            object.__setattr__(self, "metadata", without_nul(self.metadata))


@dataclass(frozen=True, kw_only=True)
class TextChunk(Chunk):
    """A chunk of text.

    ``metadata`` holds the document's metadata plus ``index``, ``start``, ``end``
    and ``page`` (when known), so filters can use them.
    """

    text: str

    @classmethod
    def create(
        cls,
        document: Document,
        text: str,
        *,
        index: int,
        start: int,
        end: int,
        page: int | None = None,
        metadata: Metadata | None = None,
    ) -> TextChunk:
        meta = _frozen_metadata({**dict(document.metadata), **dict(metadata or {})})
        meta.update(index=index, start=start, end=end)
        if page is not None:
            meta["page"] = page
        return cls(
            id=content_id(document.id, str(index), text),
            document_id=document.id,
            index=index,
            start=start,
            end=end,
            page=page,
            text=text,
            metadata=meta,
        )

    @property
    def source(self) -> str:
        return str(self.metadata.get("source", ""))

    def to_dict(self) -> dict[str, Any]:
        return {"version": SCHEMA_VERSION, "type": "text_chunk", "id": self.id,
                "document_id": self.document_id, "index": self.index, "start": self.start,
                "end": self.end, "page": self.page, "text": self.text,
                "metadata": dict(self.metadata)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TextChunk:
        _check_version(data)
        return cls(id=data["id"], document_id=data["document_id"], index=int(data["index"]),
                   start=int(data["start"]), end=int(data["end"]), page=data.get("page"),
                   text=data["text"], metadata=dict(data.get("metadata") or {}))


def _check_version(data: Mapping[str, Any]) -> None:
    version = data.get("version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise ValueError(
            f"unsupported schema version {version}; this ragloom reads {SCHEMA_VERSION}"
        )

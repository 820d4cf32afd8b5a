"""Core value types: documents, chunks, embeddings, matches and chat messages.

Everything here is a frozen dataclass with no I/O. Ids are content-addressed, so the
same content from the same source always gets the same id and ingesting it twice is
a no-op. ``to_dict`` / ``from_dict`` give one versioned JSON shape for each type.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

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


# --------------------------------------------------------------------------- documents


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


# -------------------------------------------------------------------------- embeddings

FloatArray: TypeAlias = npt.NDArray[np.float32]


@dataclass(frozen=True, eq=False)
class Vector:
    """A dense embedding (float32)."""

    values: FloatArray

    def __post_init__(self) -> None:
        array = np.asarray(self.values, dtype=np.float32)
        if array.ndim != 1:
            raise ValueError("a Vector holds a one-dimensional array")
        object.__setattr__(self, "values", array)

    @property
    def dimension(self) -> int:
        return int(self.values.shape[0])

    def to_dict(self) -> dict[str, Any]:
        return {"type": "vector", "values": self.values.tolist()}


@dataclass(frozen=True, eq=False)
class SparseVector:
    """A sparse embedding: parallel tuples of indices and values."""

    indices: tuple[int, ...]
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.indices) != len(self.values):
            raise ValueError("SparseVector needs as many values as indices")

    def to_dict(self) -> dict[str, Any]:
        return {"type": "sparse", "indices": list(self.indices), "values": list(self.values)}


@dataclass(frozen=True, eq=False)
class HybridVector:
    """A dense and a sparse embedding of the same text."""

    dense: Vector
    sparse: SparseVector

    def to_dict(self) -> dict[str, Any]:
        return {"type": "hybrid", "dense": self.dense.to_dict(), "sparse": self.sparse.to_dict()}


Embedding: TypeAlias = Vector | SparseVector | HybridVector


# ----------------------------------------------------------------------------- matches


@dataclass(frozen=True, kw_only=True, eq=False)
class VectorEntry:
    """What a vector store holds: a chunk and its embedding."""

    chunk: TextChunk
    embedding: Embedding

    @property
    def id(self) -> str:
        return self.chunk.id


@dataclass(frozen=True, kw_only=True)
class VectorMatch:
    """A store's answer to a query.

    ``score`` is in [0, 1], higher is better, whatever the store, metric or mode;
    ``raw_score`` is the store's own number (cosine, distance, BM25...).
    """

    chunk: TextChunk
    score: float
    raw_score: float


@dataclass(frozen=True, kw_only=True)
class QueryMatch:
    """A retrieved chunk with its score, as a retriever returns it.

    ``embedding`` is the chunk's stored embedding when the search asked for it
    (``SearchOptions(include_embeddings=True)``), else None.
    """

    chunk: TextChunk
    score: float
    raw_score: float = 0.0
    knowledge_base: str = ""
    embedding: Embedding | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        data = {"chunk_id": self.chunk.id, "document_id": self.chunk.document_id,
                "document": self.chunk.source or self.chunk.document_id, "score": self.score,
                "raw_score": self.raw_score, "knowledge_base": self.knowledge_base,
                "text": self.chunk.text, "metadata": dict(self.chunk.metadata)}
        if self.embedding is not None:
            data["embedding"] = self.embedding.to_dict()
        return data


# --------------------------------------------------------------------------------- chat

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A function the model may call; ``parameters`` is a JSON Schema object."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object",
                                                                   "properties": {}})


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ChatMessage:
    """One message of a conversation.

    ``attachments`` carries documents or chunks for models that accept files or
    images; text-only providers render them into ``content`` via :class:`Prompt`.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    attachments: tuple[Document | Chunk, ...] = ()

    @classmethod
    def system(cls, content: str) -> ChatMessage:
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str) -> ChatMessage:
        return cls(role="user", content=content)

    @classmethod
    def assistant(cls, content: str, tool_calls: Sequence[ToolCall] = ()) -> ChatMessage:
        return cls(role="assistant", content=content, tool_calls=tuple(tool_calls))

    @classmethod
    def tool(cls, content: str, tool_call_id: str) -> ChatMessage:
        return cls(role="tool", content=content, tool_call_id=tool_call_id)


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Tokens and time spent on one model call."""

    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(input_tokens=self.input_tokens + other.input_tokens,
                     output_tokens=self.output_tokens + other.output_tokens,
                     latency_s=self.latency_s + other.latency_s)


@dataclass(frozen=True, kw_only=True)
class ChatResponse:
    """A model's answer: the assistant message plus usage."""

    message: ChatMessage
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str = "stop"

    @property
    def text(self) -> str:
        return self.message.content


@dataclass(frozen=True, kw_only=True)
class ChatDelta:
    """One piece of a streamed answer. The last one carries the full response."""

    text: str = ""
    response: ChatResponse | None = None


# ------------------------------------------------------------------------------- prompt

PromptPart: TypeAlias = str | Document | Chunk


def part_text(part: PromptPart) -> str:
    """The text of a prompt insertion, for text-only models."""
    if isinstance(part, str):
        return part
    if isinstance(part, (TextDocument, TextChunk)):
        return part.text
    if isinstance(part, BinaryDocument):
        return part.placeholder()
    return f"[{type(part).__name__} {part.id}]"


@dataclass(frozen=True)
class Prompt:
    """A template with named insertions, e.g. ``Prompt("Context:\\n{context}\\n\\n{question}")``.

    Insertions may be text, documents, chunks or sequences of them. ``fill`` keeps
    documents and chunks as parts (so multimodal providers can pass files through);
    ``render`` turns everything into text.
    """

    template: str

    def fill(self, **insertions: PromptPart | Sequence[PromptPart]) -> tuple[PromptPart, ...]:
        import string

        parts: list[PromptPart] = []
        for literal, name, spec, conversion in string.Formatter().parse(self.template):
            if literal:
                parts.append(literal)
            if name is None:
                continue
            if spec or conversion:
                raise ValueError(f"prompt field {{{name}}} may not use a format spec")
            if name not in insertions:
                raise KeyError(f"the prompt needs a value for {{{name}}}")
            value = insertions[name]
            if isinstance(value, (str, Document, Chunk)):
                parts.append(value)
            else:
                for index, item in enumerate(value):
                    if index:
                        parts.append("\n\n")
                    parts.append(item)
        return tuple(parts)

    def render(self, **insertions: PromptPart | Sequence[PromptPart]) -> str:
        return "".join(part_text(part) for part in self.fill(**insertions))

    def to_message(
        self, role: Role = "user", **insertions: PromptPart | Sequence[PromptPart]
    ) -> ChatMessage:
        """One message: text and text documents/chunks rendered into ``content`` (as
        :meth:`render` does), binary documents moved to ``attachments``.

        Each binary document leaves ``[attachment N: <mime type>]`` at its place in the
        text, so the prompt can refer to it and the model knows where it belongs.
        """
        text: list[str] = []
        attachments: list[BinaryDocument] = []
        for part in self.fill(**insertions):
            if isinstance(part, BinaryDocument):
                attachments.append(part)
                text.append(part.placeholder(len(attachments)))
            else:
                text.append(part_text(part))
        return ChatMessage(role=role, content="".join(text), attachments=tuple(attachments))


@dataclass(frozen=True, kw_only=True)
class RagAnswer:
    """An answer with the passages it was given, numbered as in the prompt (what
    :class:`~ragloom.protocols.Rag` ``query`` returns; ``ragloom.rag`` re-exports it).

    Answers also carry ``citations`` (numbers of the sources relied on), ``quote``
    (the sentence that supports the answer), ``refused`` (the documents do not answer
    the question) with ``reason``, ``kind`` (lookup, list, comparison, summary,
    procedure, mentions), ``points`` (a list's items or a summary's points, each
    cited), ``unsupported`` (what the check flagged) and ``origin``: ``"model"`` (the
    model's answer, checked), ``"extract"`` (the answer span or items taken from the
    passages), ``"quote"`` (the supporting sentence) or ``"refusal"``.
    """

    question: str
    answer: str
    sources: list[QueryMatch] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    degraded: bool = False
    notice: str = ""
    retrieval_seconds: float = 0.0
    model: str = ""
    quote: str = ""
    citations: list[int] = field(default_factory=list)
    refused: bool = False
    origin: str = ""
    kind: str = ""
    reason: str = ""
    points: list[dict[str, Any]] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "sources": [dict(number=n, **m.to_dict()) for n, m in enumerate(self.sources, 1)],
            "usage": {"input_tokens": self.usage.input_tokens,
                      "output_tokens": self.usage.output_tokens,
                      "latency_s": round(self.usage.latency_s, 3),
                      "retrieval_s": round(self.retrieval_seconds, 3)},
            "model": self.model,
            "degraded": self.degraded,
            "notice": self.notice,
            "quote": self.quote,
            "citations": list(self.citations),
            "refused": self.refused,
            "refusal_reason": self.reason,
            "origin": self.origin,
            "kind": self.kind,
            "points": [dict(p) for p in self.points],
            "unsupported": list(self.unsupported),
        }

"""Chunk transformers: change chunks after splitting, before embedding.

A transformer gets a document's chunks and the document, and returns new chunks.
Transformed text no longer equals ``document.text[chunk.start:chunk.end]``; the
offsets keep pointing at the original passage, so citations still work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ragloom.protocols import Chunker
from ragloom.types import TextChunk, TextDocument


@runtime_checkable
class ChunkTransformer(Protocol):
    def transform(
        self, chunks: Sequence[TextChunk], document: TextDocument
    ) -> list[TextChunk]: ...


def _rebuild(chunk: TextChunk, document: TextDocument, text: str) -> TextChunk:
    own = {k: v for k, v in chunk.metadata.items() if k not in document.metadata}
    rebuilt = TextChunk.create(document, text, index=chunk.index, start=chunk.start,
                               end=chunk.end, page=chunk.page, metadata=own)
    # Keep exactly the metadata the splitter chose (it may have dropped document keys).
    return TextChunk(id=rebuilt.id, document_id=rebuilt.document_id, index=chunk.index,
                     start=chunk.start, end=chunk.end, page=chunk.page, text=text,
                     metadata=dict(chunk.metadata))


@dataclass(frozen=True)
class PrependTitle:
    """Put the document's title (metadata ``key``, else its file name) before each chunk.

    Chunks of a document without a title are returned unchanged.
    """

    key: str = "title"
    fallback_key: str = "file_name"
    template: str = "{title}\n\n{text}"

    def transform(self, chunks: Sequence[TextChunk], document: TextDocument) -> list[TextChunk]:
        title = document.metadata.get(self.key) or document.metadata.get(self.fallback_key)
        if not title:
            return list(chunks)
        return [_rebuild(chunk, document, self.template.format(title=title, text=chunk.text))
                for chunk in chunks]

    def settings_key(self) -> str:
        return f"PrependTitle(key={self.key!r}, fallback_key={self.fallback_key!r}, " \
               f"template={self.template!r})"


class TransformingChunker:
    """A chunker followed by transformers; itself a :class:`~ragloom.protocols.Chunker`."""

    def __init__(self, chunker: Chunker, *transformers: ChunkTransformer) -> None:
        self.chunker = chunker
        self.transformers = transformers

    def split(self, document: TextDocument) -> list[TextChunk]:
        chunks = self.chunker.split(document)
        for transformer in self.transformers:
            chunks = transformer.transform(chunks, document)
        return chunks

    def settings_key(self) -> str:
        parts = [_key(self.chunker), *(_key(t) for t in self.transformers)]
        return " | ".join(parts)


def _key(obj: object) -> str:
    describe = getattr(obj, "settings_key", None)
    return str(describe()) if callable(describe) else type(obj).__name__

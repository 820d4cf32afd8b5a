"""Splitting documents into chunks.

Every splitter implements :class:`ragloom.protocols.Chunker` (``split(document)``)
and ``settings_key()``, a stable string of its class and parameters. Chunk offsets
satisfy ``document.text[chunk.start:chunk.end] == chunk.text`` and ``chunk.page``
comes from the document's ``page_starts`` metadata when it has one.
"""

from ragloom.chunking.base import build_chunks, page_at
from ragloom.chunking.factory import SPLITTERS, make_splitter
from ragloom.chunking.markdown import MarkdownSplitter, markdown_sections
from ragloom.chunking.recursive import CHARACTER, DEFAULT_SEPARATORS, SENTENCE, RecursiveSplitter
from ragloom.chunking.sentences import sentence_spans
from ragloom.chunking.simple import (
    CharacterSplitter,
    LineSplitter,
    ParagraphSplitter,
    RegexSplitter,
    SentenceSplitter,
    WordSplitter,
)
from ragloom.chunking.transform import ChunkTransformer, PrependTitle, TransformingChunker

__all__ = [
    "CHARACTER",
    "DEFAULT_SEPARATORS",
    "SENTENCE",
    "SPLITTERS",
    "CharacterSplitter",
    "ChunkTransformer",
    "LineSplitter",
    "MarkdownSplitter",
    "ParagraphSplitter",
    "PrependTitle",
    "RecursiveSplitter",
    "RegexSplitter",
    "SentenceSplitter",
    "TransformingChunker",
    "WordSplitter",
    "build_chunks",
    "make_splitter",
    "markdown_sections",
    "page_at",
    "sentence_spans",
]

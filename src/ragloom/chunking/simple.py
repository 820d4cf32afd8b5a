"""Splitters that cut at one kind of boundary: paragraph, line, sentence, word,
character or a regular expression."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from ragloom.chunking.base import Span, build_chunks, check_size, describe, window_spans
from ragloom.chunking.sentences import sentence_spans
from ragloom.errors import ConfigurationError
from ragloom.types import TextChunk, TextDocument

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_LINE_BREAK = re.compile(r"\n")
_WORD = re.compile(r"\S+")


def segments_between(pattern: re.Pattern[str], text: str) -> list[Span]:
    """The spans of ``text`` between matches of ``pattern`` (separators left out)."""
    spans: list[Span] = []
    position = 0
    for match in pattern.finditer(text):
        if match.start() == match.end() == position:
            continue
        spans.append((position, match.start()))
        position = match.end()
    spans.append((position, len(text)))
    return spans


@dataclass(frozen=True)
class ParagraphSplitter:
    """One chunk per paragraph (text between blank lines)."""

    def split(self, document: TextDocument) -> list[TextChunk]:
        return build_chunks(document, segments_between(_PARAGRAPH_BREAK, document.text))

    def settings_key(self) -> str:
        return describe(self)


@dataclass(frozen=True)
class LineSplitter:
    """One chunk per non-blank line."""

    def split(self, document: TextDocument) -> list[TextChunk]:
        return build_chunks(document, segments_between(_LINE_BREAK, document.text))

    def settings_key(self) -> str:
        return describe(self)


@dataclass(frozen=True)
class SentenceSplitter:
    """``sentences`` sentences per chunk, ``overlap`` of them repeated in the next chunk."""

    sentences: int = 1
    overlap: int = 0

    def __post_init__(self) -> None:
        check_size("sentences", self.sentences, self.overlap)

    def split(self, document: TextDocument) -> list[TextChunk]:
        units = sentence_spans(document.text)
        return build_chunks(document, window_spans(units, self.sentences, self.overlap))

    def settings_key(self) -> str:
        return describe(self)


@dataclass(frozen=True)
class WordSplitter:
    """``words`` words per chunk, the last ``overlap`` words repeated in the next chunk."""

    words: int = 200
    overlap: int = 20

    def __post_init__(self) -> None:
        check_size("words", self.words, self.overlap)

    def split(self, document: TextDocument) -> list[TextChunk]:
        units = [match.span() for match in _WORD.finditer(document.text)]
        return build_chunks(document, window_spans(units, self.words, self.overlap))

    def settings_key(self) -> str:
        return describe(self)


@dataclass(frozen=True)
class CharacterSplitter:
    """Fixed windows of ``size`` characters, ``overlap`` characters shared."""

    size: int = 1000
    overlap: int = 150

    def __post_init__(self) -> None:
        check_size("size", self.size, self.overlap)

    def split(self, document: TextDocument) -> list[TextChunk]:
        length = len(document.text)
        step = self.size - self.overlap
        spans: list[Span] = []
        for start in range(0, length, step):
            spans.append((start, min(start + self.size, length)))
            if start + self.size >= length:
                break
        return build_chunks(document, spans)

    def settings_key(self) -> str:
        return describe(self)


@dataclass(frozen=True)
class RegexSplitter:
    """Cut wherever ``pattern`` matches.

    The matched text is dropped, or kept at the start of the following chunk with
    ``keep_separator=True`` (useful for patterns such as ``(?m)^## ``).
    """

    pattern: str
    keep_separator: bool = False

    def __post_init__(self) -> None:
        try:
            re.compile(self.pattern)
        except re.error as exc:
            raise ConfigurationError(
                f"RegexSplitter pattern {self.pattern!r} is not a valid regular expression: {exc}"
            ) from exc

    def split(self, document: TextDocument) -> list[TextChunk]:
        pattern = re.compile(self.pattern)
        if not self.keep_separator:
            return build_chunks(document, segments_between(pattern, document.text))
        cuts = sorted({m.start() for m in pattern.finditer(document.text)} - {0})
        bounds = [0, *cuts, len(document.text)]
        return build_chunks(document, list(itertools.pairwise(bounds)))

    def settings_key(self) -> str:
        return describe(self)

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


def _grouped_key(splitter: object, size: int, overlap: int) -> str:
    """The settings key, unchanged from before sizes existed when they are the
    defaults (one unit, no overlap): documents split so are not re-ingested."""
    if (size, overlap) == (1, 0):
        return f"{type(splitter).__name__}()"
    return describe(splitter)


def _non_blank(text: str, spans: list[Span]) -> list[Span]:
    return [span for span in spans if text[span[0]:span[1]].strip()]


@dataclass(frozen=True)
class ParagraphSplitter:
    """``paragraphs`` paragraphs (text between blank lines) per chunk, ``overlap`` of
    them repeated in the next chunk; the default is one chunk per paragraph."""

    paragraphs: int = 1
    overlap: int = 0

    def __post_init__(self) -> None:
        check_size("paragraphs", self.paragraphs, self.overlap)

    def split(self, document: TextDocument) -> list[TextChunk]:
        units = _non_blank(document.text, segments_between(_PARAGRAPH_BREAK, document.text))
        return build_chunks(document, window_spans(units, self.paragraphs, self.overlap))

    def settings_key(self) -> str:
        return _grouped_key(self, self.paragraphs, self.overlap)


@dataclass(frozen=True)
class LineSplitter:
    """``lines`` non-blank lines per chunk, ``overlap`` of them repeated in the next
    chunk; the default is one chunk per line."""

    lines: int = 1
    overlap: int = 0

    def __post_init__(self) -> None:
        check_size("lines", self.lines, self.overlap)

    def split(self, document: TextDocument) -> list[TextChunk]:
        units = _non_blank(document.text, segments_between(_LINE_BREAK, document.text))
        return build_chunks(document, window_spans(units, self.lines, self.overlap))

    def settings_key(self) -> str:
        return _grouped_key(self, self.lines, self.overlap)


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
    ``keep_separator=True`` (useful for patterns such as ``(?m)^## ``). ``pieces``
    pieces go in one chunk, ``overlap`` of them repeated in the next (default: one).
    """

    pattern: str
    keep_separator: bool = False
    pieces: int = 1
    overlap: int = 0

    def __post_init__(self) -> None:
        check_size("pieces", self.pieces, self.overlap)
        try:
            re.compile(self.pattern)
        except re.error as exc:
            raise ConfigurationError(
                f"RegexSplitter pattern {self.pattern!r} is not a valid regular expression: {exc}"
            ) from exc

    def split(self, document: TextDocument) -> list[TextChunk]:
        pattern = re.compile(self.pattern)
        if not self.keep_separator:
            units = segments_between(pattern, document.text)
        else:
            cuts = sorted({m.start() for m in pattern.finditer(document.text)} - {0})
            units = list(itertools.pairwise([0, *cuts, len(document.text)]))
        if (self.pieces, self.overlap) != (1, 0):
            units = window_spans(_non_blank(document.text, units), self.pieces, self.overlap)
        return build_chunks(document, units)

    def settings_key(self) -> str:
        if (self.pieces, self.overlap) == (1, 0):  # the key from before sizes existed
            return (f"RegexSplitter(pattern={self.pattern!r}, "
                    f"keep_separator={self.keep_separator!r})")
        return describe(self)

"""Splitters by name, for configuration files and the command line."""

from __future__ import annotations

from typing import Any

from ragloom.chunking.markdown import MarkdownSplitter
from ragloom.chunking.recursive import RecursiveSplitter
from ragloom.chunking.simple import (
    CharacterSplitter,
    LineSplitter,
    ParagraphSplitter,
    RegexSplitter,
    SentenceSplitter,
    WordSplitter,
)
from ragloom.errors import ConfigurationError
from ragloom.protocols import Chunker

SPLITTERS: dict[str, type[Any]] = {
    "recursive": RecursiveSplitter,
    "paragraph": ParagraphSplitter,
    "line": LineSplitter,
    "sentence": SentenceSplitter,
    "word": WordSplitter,
    "character": CharacterSplitter,
    "regex": RegexSplitter,
    "markdown": MarkdownSplitter,
}


def make_splitter(name: str, **options: Any) -> Chunker:
    """A splitter by name, e.g. ``make_splitter("recursive", chunk_size=500)``."""
    try:
        cls = SPLITTERS[name]
    except KeyError:
        raise ConfigurationError(
            f"unknown splitter {name!r}; choose one of: {', '.join(SPLITTERS)}"
        ) from None
    try:
        splitter: Chunker = cls(**options)
    except TypeError as exc:
        raise ConfigurationError(f"bad options for the {name!r} splitter: {exc}") from exc
    return splitter

"""Splitters by name, for configuration files and the command line."""

from __future__ import annotations

import dataclasses
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


#: What ``chunk_size`` / ``chunk_overlap`` count for each splitter, and the names of
#: that splitter's own size and overlap options they stand for.
UNITS: dict[str, tuple[str, str, str]] = {
    "recursive": ("tokens of the embedder (characters without a tokenizer)",
                  "chunk_size", "chunk_overlap"),
    "markdown": ("tokens of the embedder (characters without a tokenizer)",
                 "chunk_size", "chunk_overlap"),
    "character": ("characters", "size", "overlap"),
    "word": ("words", "words", "overlap"),
    "sentence": ("sentences", "sentences", "overlap"),
    "paragraph": ("paragraphs", "paragraphs", "overlap"),
    "line": ("lines", "lines", "overlap"),
    "regex": ("pieces between matches", "pieces", "overlap"),
}


def unit_of(name: str) -> str:
    """What ``chunk_size`` counts for the splitter ``name``."""
    return UNITS[name][0] if name in UNITS else "units"


def make_splitter(name: str, **options: Any) -> Chunker:
    """A splitter by name, e.g. ``make_splitter("recursive", chunk_size=500)``.

    Every splitter takes ``chunk_size`` and ``chunk_overlap`` in its own unit (see
    :data:`UNITS`): ``make_splitter("character", chunk_size=512, chunk_overlap=50)``
    is ``CharacterSplitter(size=512, overlap=50)``.
    """
    try:
        cls = SPLITTERS[name]
    except KeyError:
        raise ConfigurationError(
            f"unknown splitter {name!r}; choose one of: {', '.join(SPLITTERS)}"
        ) from None
    _, size_name, overlap_name = UNITS[name]
    for common, own in (("chunk_size", size_name), ("chunk_overlap", overlap_name)):
        if common != own and common in options:
            if own in options:
                raise ConfigurationError(f"the {name!r} splitter got both {common} and "
                                         f"{own}; they are the same setting, give one")
            options[own] = options.pop(common)
    if size_name != "chunk_size" and size_name in options and overlap_name not in options:
        # A smaller size than the default keeps a default overlap that still fits.
        default = next((f.default for f in dataclasses.fields(cls) if f.name == overlap_name),
                       0)
        if isinstance(default, int) and isinstance(options[size_name], int):
            options[overlap_name] = max(0, min(default, options[size_name] // 2))
    try:
        splitter: Chunker = cls(**options)
    except TypeError as exc:
        raise ConfigurationError(f"bad options for the {name!r} splitter: {exc}") from exc
    return splitter

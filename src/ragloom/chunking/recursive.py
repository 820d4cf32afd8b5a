"""The default splitter: cut at the strongest boundary that makes pieces fit, then
merge neighbouring pieces up to ``chunk_size`` with ``chunk_overlap`` carried over.

Boundaries, strongest first: paragraph (blank line), line, sentence, word, character.
Sizes are characters, or tokens of a :class:`~ragloom.protocols.TokenCounter`.

Every piece is measured once and chunk sizes are sums of piece sizes, so a long
document costs a number of token-counter calls linear in its length, never one call
per candidate chunk. A span far longer than the budget is split without being
measured at all: splitting more finely than needed costs nothing, because the merge
step puts small pieces back together.
"""

from __future__ import annotations

import itertools
import re
from collections import deque
from collections.abc import Iterator, Sequence

from ragloom.chunking.base import Span, build_chunks, check_size, page_starts_of
from ragloom.chunking.measure import Measure
from ragloom.chunking.sentences import sentence_spans
from ragloom.protocols import TokenCounter
from ragloom.types import TextChunk, TextDocument

SENTENCE = "<sentence>"
"""Separator name for sentence boundaries (see :mod:`ragloom.chunking.sentences`)."""

CHARACTER = ""
"""Separator name for the last resort: cutting anywhere."""

DEFAULT_SEPARATORS: tuple[str, ...] = ("\n\n", "\n", SENTENCE, " ", CHARACTER)

DEFAULT_TOKEN_SIZE, DEFAULT_TOKEN_OVERLAP = 200, 30
DEFAULT_CHAR_SIZE, DEFAULT_CHAR_OVERLAP = 1000, 150

# Whitespace separators match runs, so "\n\n\n" or "a  b" do not leave empty pieces.
_WHITESPACE_SEPARATORS = {
    "\n\n": re.compile(r"\n[ \t]*\n\s*"),
    "\n": re.compile(r"\n\s*"),
    " ": re.compile(r"\s+"),
}

# No tokenizer in practical use averages more characters per token than this, so a
# span longer than budget * this is certainly too long and is split unmeasured.
_MAX_CHARS_PER_TOKEN = 8

Piece = tuple[int, int, int]  # start, end, length


class RecursiveSplitter:
    """Chunks of at most ``chunk_size`` (characters, or tokens of ``token_counter``).

    Defaults: 200 tokens with 30 overlap when a token counter is given (fits
    MiniLM's 256-token window with room for special tokens), else 1000 characters
    with 150 overlap.
    """

    def __init__(
        self,
        chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        *,
        token_counter: TokenCounter | None = None,
        separators: Sequence[str] = DEFAULT_SEPARATORS,
    ) -> None:
        tokens = token_counter is not None
        self.chunk_size = chunk_size if chunk_size is not None else (
            DEFAULT_TOKEN_SIZE if tokens else DEFAULT_CHAR_SIZE)
        self.chunk_overlap = chunk_overlap if chunk_overlap is not None else min(
            DEFAULT_TOKEN_OVERLAP if tokens else DEFAULT_CHAR_OVERLAP, self.chunk_size // 2)
        check_size("chunk_size", self.chunk_size, self.chunk_overlap)
        self.token_counter = token_counter
        self.separators = tuple(separators)
        self._patterns = {
            sep: _WHITESPACE_SEPARATORS.get(sep) or re.compile(f"(?:{re.escape(sep)})+")
            for sep in self.separators if sep not in (SENTENCE, CHARACTER)
        }

    # ------------------------------------------------------------------ public API

    def split(self, document: TextDocument) -> list[TextChunk]:
        # Chunks stay within one page, so a citation's page number is the whole truth.
        text = document.text
        starts = page_starts_of(document)
        if not starts:
            return build_chunks(document, self.split_spans(text))
        bounds = [0, *[s for s in starts if 0 < s < len(text)], len(text)]
        spans: list[Span] = []
        for start, end in itertools.pairwise(bounds):
            spans.extend(self.split_spans(text, start, end))
        return build_chunks(document, spans)

    def split_spans(self, text: str, start: int = 0, end: int | None = None) -> list[Span]:
        """Chunk spans of ``text[start:end]`` (before whitespace stripping)."""
        end = len(text) if end is None else end
        if start >= end or not text[start:end].strip():
            return []
        measure = Measure(self.token_counter, text, start, end)
        budget = max(1, self.chunk_size - measure.overhead)
        overlap = min(self.chunk_overlap, budget - 1)
        leaves = self._leaves(text, start, end, None, 0, budget, measure)
        return _merge(leaves, budget, overlap)

    def settings_key(self) -> str:
        counter = self.token_counter
        length = "characters" if counter is None else (
            f"tokens:{getattr(counter, 'name', None) or type(counter).__name__}")
        return (f"RecursiveSplitter(chunk_size={self.chunk_size}, "
                f"chunk_overlap={self.chunk_overlap}, length={length!r}, "
                f"separators={self.separators!r})")

    def __repr__(self) -> str:
        return self.settings_key()

    # ---------------------------------------------------------------- internals

    def _leaves(
        self, text: str, start: int, end: int, length: int | None, level: int,
        budget: int, measure: Measure,
    ) -> Iterator[Piece]:
        if length is None and (end - start) <= budget * _MAX_CHARS_PER_TOKEN:
            length = measure.span(start, end)
        if length is not None and length <= budget:
            yield (start, end, length)
            return
        if level >= len(self.separators):
            yield from self._hard_cut(text, start, end, length, budget, measure)
            return
        parts = self._cut(text, start, end, self.separators[level])
        if len(parts) <= 1:
            yield from self._leaves(text, start, end, length, level + 1, budget, measure)
            return
        for part_start, part_end in parts:
            yield from self._leaves(text, part_start, part_end, None, level + 1, budget, measure)

    def _cut(self, text: str, start: int, end: int, separator: str) -> list[Span]:
        if separator == SENTENCE:
            return sentence_spans(text, start, end)
        if separator == CHARACTER:
            return [(start, end)]
        cuts = [m.end() for m in self._patterns[separator].finditer(text, start, end)
                if m.end() < end]
        bounds = [start, *(c for c in cuts if c > start), end]
        return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]

    def _hard_cut(
        self, text: str, start: int, end: int, length: int | None, budget: int,
        measure: Measure,
    ) -> Iterator[Piece]:
        if measure.counter is None:
            for position in range(start, end, budget):
                stop = min(position + budget, end)
                yield (position, stop, stop - position)
            return
        total = length if length is not None else measure.span(start, end)
        width = max(1, int((end - start) * budget / max(total, 1)))
        position = start
        while position < end:
            stop = min(position + width, end)
            size = measure.span(position, stop)
            while size > budget and stop - position > 1:
                stop = position + (stop - position) // 2
                size = measure.span(position, stop)
            yield (position, stop, size)
            position = stop


def _merge(leaves: Iterator[Piece], budget: int, overlap: int) -> list[Span]:
    """Greedily join contiguous pieces up to ``budget``; carry up to ``overlap`` over."""
    spans: list[Span] = []
    current: deque[Piece] = deque()
    total = 0
    for piece in leaves:
        if current and total + piece[2] > budget:
            spans.append((current[0][0], current[-1][1]))
            while current and (total > overlap or total + piece[2] > budget):
                total -= current.popleft()[2]
        current.append(piece)
        total += piece[2]
    if current:
        spans.append((current[0][0], current[-1][1]))
    return spans

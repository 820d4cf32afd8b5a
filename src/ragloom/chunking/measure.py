"""How long a piece of text is to a splitter: characters, or a model's tokens.

With a :class:`~ragloom.protocols.TokenSpanner` whose tokens stay inside words
(BERT-family WordPiece), the text a splitter works on is tokenized once, on first
need, and a piece cut at a word edge is measured by counting the tokens that start
inside it: what tokenizing the piece alone gives, without tokenizing it again. A
splitter weighs a document, then its paragraphs, then their sentences, so this
tokenizes each character once instead of about three times. A piece with an
edge inside a word (a hard cut) is tokenized alone, as with any other counter.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_left

from ragloom.protocols import TokenCounter, TokenSpanner

# Above this many characters the token offsets of a whole span would take more
# memory than they save time: such spans are measured piece by piece.
_MAX_SPANNED_CHARS = 1_000_000


class Measure:
    """Length of ``text[start:end]`` pieces in characters or ``counter``'s tokens,
    without the fixed tokens a counter adds to every call (``overhead``)."""

    def __init__(self, counter: TokenCounter | None, text: str = "", start: int = 0,
                 end: int | None = None) -> None:
        self.counter = counter
        self.overhead = counter.count_tokens("") if counter is not None else 0
        self._text = text
        self._start = start
        self._end = len(text) if end is None else end
        self._spanner = (counter if isinstance(counter, TokenSpanner)
                         and self._end - start <= _MAX_SPANNED_CHARS else None)
        self._token_starts: list[int] | None = None

    def __call__(self, text: str) -> int:
        """Length of ``text`` on its own."""
        if self.counter is None:
            return len(text)
        return max(0, self.counter.count_tokens(text) - self.overhead)

    def span(self, start: int, end: int) -> int:
        """Length of ``text[start:end]`` (within the range this measure was made for)."""
        if self.counter is None:
            return end - start
        starts = self._starts()
        if starts is not None and word_edge(self._text, start) and word_edge(self._text, end):
            return bisect_left(starts, end) - bisect_left(starts, start)
        return self(self._text[start:end])

    def _starts(self) -> list[int] | None:
        """Where each token of the range starts (tokenized on the first call), or None
        without a spanner."""
        if self._token_starts is None and self._spanner is not None:
            spans = self._spanner.token_spans(self._text[self._start:self._end])
            if spans is None:
                self._spanner = None
                return None
            self._token_starts = [self._start + first for first, _ in spans]
        return self._token_starts


def word_edge(text: str, position: int) -> bool:
    """Whether a cut at ``position`` falls between words for a BERT-style tokenizer:
    at either end, or beside whitespace or punctuation (which it always splits at)."""
    if position <= 0 or position >= len(text):
        return True
    return _splits(text[position - 1]) or _splits(text[position])


def _splits(char: str) -> bool:
    if char in " \t\n\r":
        return True
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True  # ASCII punctuation, as BERT counts it ("$", "^", "`" included)
    if code < 128:
        return False
    category = unicodedata.category(char)
    return category == "Zs" or category.startswith("P")

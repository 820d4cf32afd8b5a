"""Where a tokenizer's tokens lie, for tokenizers whose tokens stay inside words.

BERT-family tokenizers (WordPiece after the BERT pre-tokenizer, which splits at
whitespace and punctuation) never make a token across a word edge, so a piece of
text cut at a word edge tokenizes alone exactly as it does inside the text. The
splitter relies on that to tokenize a document once (see
:class:`ragloom.chunking.measure.Measure`); other tokenizers (byte-level BPE, whose
tokens carry the space before a word) say None and are asked piece by piece.
"""

from __future__ import annotations

from typing import Any


def splits_at_word_edges(tokenizer: Any) -> bool:
    """Whether a ``tokenizers.Tokenizer`` keeps every token inside a word."""
    return (type(tokenizer.pre_tokenizer).__name__ == "BertPreTokenizer"
            and type(tokenizer.model).__name__ == "WordPiece"
            and type(tokenizer.normalizer).__name__ in ("BertNormalizer", "NoneType"))


def word_token_spans(tokenizer: Any, text: str) -> list[tuple[int, int]] | None:
    """Character offsets of ``text``'s tokens (no special tokens, no truncation:
    ``tokenizer`` must have both off), or None for a tokenizer whose tokens may
    cross word edges."""
    if not splits_at_word_edges(tokenizer):
        return None
    offsets: list[tuple[int, int]] = tokenizer.encode(text, add_special_tokens=False).offsets
    return offsets

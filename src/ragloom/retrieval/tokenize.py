"""The keyword tokenizer, re-exported: it lives in :mod:`ragloom.lexical.tokenize`,
below the stores that index with it and the retrieval layer that queries them."""

from ragloom.lexical.stemmer import porter_stem
from ragloom.lexical.tokenize import (
    MAX_QUERY_TERMS,
    query_terms,
    strip_diacritics,
    tokenize,
    words,
)

__all__ = ["MAX_QUERY_TERMS", "porter_stem", "query_terms", "strip_diacritics", "tokenize",
           "words"]

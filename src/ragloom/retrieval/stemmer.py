"""The Porter stemmer, re-exported: it lives in :mod:`ragloom.lexical.stemmer`."""

from ragloom.lexical.stemmer import porter_stem

__all__ = ["porter_stem"]

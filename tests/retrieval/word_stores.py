"""Small SQLite stores of few-word texts over a nine-word vocabulary, for hybrid tests.

Few distinct words and a 16-dimension hashing embedder give many equal keyword and
vector scores, so these stores exercise tie handling and fusion order.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ragloom.stores.sqlite import KeywordIndexMode, SqliteVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.types import TextChunk, TextDocument, VectorEntry

WORDS = ["gene", "cell", "virus", "brain", "protein", "mouse", "tumour", "immune", "dna"]


def word_store(path: Path, keyword_index: KeywordIndexMode, *, count: int,
               seed: int) -> SqliteVectorStore:
    """``count`` one-chunk documents (metadata ``year``), the keyword index warmed."""
    store = SqliteVectorStore(path, keyword_index=keyword_index)
    embedder = HashingEmbedder(16)
    rng = np.random.default_rng(seed)
    entries = []
    for i in range(count):
        text = " ".join(rng.choice(WORDS, size=int(rng.integers(1, 6))))
        doc = TextDocument.create(text, source=f"doc{i}", metadata={"year": 2000 + i % 6})
        chunk = TextChunk.create(doc, text, index=0, start=0, end=len(text))
        entries.append(VectorEntry(chunk=chunk, embedding=embedder.embed_documents([text])[0]))
    store.add(entries)
    if keyword_index == "memory":
        assert store.warm_keyword_index()
    return store

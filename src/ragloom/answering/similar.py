"""Words that mean nearly the same: a soft match for question terms the evidence
paraphrases.

People do not type the documents' words: "kx100 wattage" is answered by "Power: 2200
W", "when does the library shut" by "closes at 13:00", "biggest worry" by "the main
concern". The gate's lexical signals count such a term as missing and refuse.
:class:`WordSimilarity` gives a question term partial credit for the closest word
of the evidence, measured by the knowledge base's own embedder (each word embedded
alone), so it holds on any vocabulary without a synonym list.

The cosine is mapped from ``[low, high]`` to ``[0, 1]``: single-word cosines of a
small sentence embedder are noisy (antonyms such as "open"/"shut" are close too), so
only the upper range counts, and the gate's fitted weights decide how much the soft
share may move a refusal. Codes, numbers and the question's names are never matched
softly (the caller keeps them exact): "kx200" is not "kx100".

Word vectors are cached (bounded, least recently used first out), so a knowledge
base's vocabulary is embedded once per process. Only an in-process embedder is used
(:func:`word_similarity_for`): through a hosted one every new word would be a paid
request, so the gate stays lexical there.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

import numpy as np

from ragloom.embeddings._remote import RemoteEmbedder
from ragloom.errors import RagError
from ragloom.protocols import EmbeddingProvider
from ragloom.types import Vector

LOW = 0.45  # at or below: no credit ("wattage"/"battery" 0.36, "rent"/"deposit" 0.43)
HIGH = 0.65  # at or above: full credit ("worry"/"concern" 0.68)
MAX_WORDS = 20_000
MAX_BATCH = 256  # words embedded per call


class WordSimilarity:
    """How close in meaning a question term is to the words of the evidence (0..1)."""

    def __init__(self, embedder: EmbeddingProvider, *, low: float = LOW, high: float = HIGH,
                 max_words: int = MAX_WORDS) -> None:
        if not 0.0 <= low < high <= 1.0:
            raise ValueError("WordSimilarity needs 0 <= low < high <= 1")
        self.embedder = embedder
        self.low = low
        self.high = high
        self.max_words = max_words
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def closeness(self, term: str, words: Iterable[str]) -> float:
        """The credit ``term`` earns from its closest word among ``words``: 0 below
        ``low``, 1 at ``high`` or more, linear between. 0 when the embedder fails."""
        candidates = sorted({w for w in words if w and w != term})
        if not candidates:
            return 0.0
        vectors = self._lookup([term, *candidates])
        if vectors is None:
            return 0.0
        query = vectors[term]
        best = max(float(np.dot(query, vectors[w])) for w in candidates)
        return min(1.0, max(0.0, (best - self.low) / (self.high - self.low)))

    def _lookup(self, words: list[str]) -> dict[str, np.ndarray] | None:
        with self._lock:
            found = {w: self._vectors[w] for w in words if w in self._vectors}
            for w in found:
                self._vectors.move_to_end(w)
        missing = [w for w in dict.fromkeys(words) if w not in found]
        for start in range(0, len(missing), MAX_BATCH):
            batch = missing[start:start + MAX_BATCH]
            try:
                embedded = self.embedder.embed_documents(batch)
            except RagError:
                return None  # the embedder is down: words alone decide
            if len(embedded) != len(batch) or not all(isinstance(e, Vector) for e in embedded):
                return None
            for word, vector in zip(batch, embedded, strict=True):
                values = np.asarray(vector.values, dtype=np.float32)  # type: ignore[union-attr]
                found[word] = values / max(float(np.linalg.norm(values)), 1e-12)
        with self._lock:
            for word in missing:
                self._vectors[word] = found[word]
            while len(self._vectors) > self.max_words:
                self._vectors.popitem(last=False)
        return found


def word_similarity_for(embedder: EmbeddingProvider | None) -> WordSimilarity | None:
    """A :class:`WordSimilarity` over ``embedder`` when it runs in this process."""
    if embedder is None or isinstance(embedder, RemoteEmbedder):
        return None
    return WordSimilarity(embedder)

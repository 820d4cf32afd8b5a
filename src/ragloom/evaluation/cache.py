"""An embedding cache on disk so re-running an evaluation does not re-embed the corpus.

The cache is two files: ``NAME.npy`` (a float32 matrix, one row per text) and
``NAME.json`` (the SHA-256 of each row's text, in row order, plus the embedder's
name). No pickle: ``np.load(..., allow_pickle=False)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ragloom.protocols import EmbeddingProvider, TokenSpanner
from ragloom.types import Embedding, Vector, text_hash


class CachedEmbedder:
    """Wraps an embedder; document embeddings are looked up by text hash first."""

    def __init__(self, embedder: EmbeddingProvider, path: str | Path) -> None:
        self.embedder = embedder
        self.path = Path(path)
        self._rows: dict[str, np.ndarray] = {}
        self._loaded = False
        self.misses = 0

    @property
    def name(self) -> str:
        return self.embedder.name

    @property
    def dimension(self) -> int:
        return self.embedder.dimension

    def count_tokens(self, text: str) -> int:
        counter = getattr(self.embedder, "count_tokens", None)
        return int(counter(text)) if callable(counter) else len(text.split())

    def token_spans(self, text: str) -> Sequence[tuple[int, int]] | None:
        inner = self.embedder
        return inner.token_spans(text) if isinstance(inner, TokenSpanner) else None

    def _files(self) -> tuple[Path, Path]:
        return self.path.with_suffix(".npy"), self.path.with_suffix(".json")

    def load(self) -> int:
        """Read the cache files if present; returns how many rows they hold."""
        self._loaded = True
        matrix_file, keys_file = self._files()
        if not (matrix_file.is_file() and keys_file.is_file()):
            return 0
        meta = json.loads(keys_file.read_text(encoding="utf-8"))
        if meta.get("embedder") != self.embedder.name:
            return 0
        matrix = np.load(matrix_file, allow_pickle=False)
        self._rows = dict(zip(meta["keys"], matrix, strict=True))
        return len(self._rows)

    def save(self) -> None:
        matrix_file, keys_file = self._files()
        matrix_file.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self._rows)
        matrix = (np.stack([self._rows[k] for k in keys]) if keys
                  else np.zeros((0, self.dimension), dtype=np.float32))
        np.save(matrix_file, matrix.astype(np.float32), allow_pickle=False)
        keys_file.write_text(json.dumps({"embedder": self.embedder.name, "keys": keys}),
                             encoding="utf-8")

    def warm(
        self, texts: Sequence[str], *, batch: int = 256,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Embed every text not yet cached, saving as it goes; returns how many were new."""
        if not self._loaded:
            self.load()
        todo = list(dict.fromkeys(t for t in texts if text_hash(t) not in self._rows))
        for start in range(0, len(todo), batch):
            part = todo[start:start + batch]
            for text, embedding in zip(part, self.embedder.embed_documents(part), strict=True):
                if not isinstance(embedding, Vector):
                    raise TypeError("CachedEmbedder caches dense vectors only")
                self._rows[text_hash(text)] = embedding.values
            self.save()
            if progress is not None:
                progress(min(start + batch, len(todo)), len(todo))
        return len(todo)

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        if not self._loaded:
            self.load()
        missing = [t for t in texts if text_hash(t) not in self._rows]
        if missing:
            self.misses += len(missing)
            for text, embedding in zip(missing, self.embedder.embed_documents(missing),
                                       strict=True):
                if isinstance(embedding, Vector):
                    self._rows[text_hash(text)] = embedding.values
        return [Vector(self._rows[text_hash(t)]) for t in texts]

    def embed_query(self, text: str) -> Embedding:
        return self.embedder.embed_query(text)

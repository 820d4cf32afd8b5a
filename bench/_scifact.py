"""What the SciFact benchmarks share: where the data and results lie, and the embeddings.

Not a benchmark itself. The scripts run as ``python bench/x.py``, so Python puts
``bench/`` on the path and they import this module as ``_scifact``.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragloom.evaluation.beir import BeirDataset
from ragloom.evaluation.cache import CachedEmbedder
from ragloom.knowledge_base import default_chunker
from ragloom.protocols import EmbeddingProvider
from ragloom.registry import DEFAULT_EMBEDDER, make_embedder
from ragloom.types import Embedding

HERE = Path(__file__).resolve().parent
# SciFact lies next to the repository: ../shared/data/beir/scifact (or pass --data).
DATA = HERE.parent.parent / "shared" / "data" / "beir" / "scifact"
RESULTS = HERE / "results"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cached_embedder(dataset: BeirDataset) -> tuple[EmbeddingProvider, Any, CachedEmbedder]:
    """The default embedder, its default splitter, and the chunk-embedding cache.

    The cache (bench/results/cache/) is keyed by the splitter's settings and the
    model, so every SciFact benchmark shares it and only the first run embeds.
    """
    embedder = make_embedder(DEFAULT_EMBEDDER)
    chunker = default_chunker(embedder)
    settings = f"{chunker.settings_key()}|{embedder.name}"
    key = hashlib.sha256(settings.encode()).hexdigest()[:12]
    cached = CachedEmbedder(embedder, RESULTS / "cache" / f"{dataset.name}-{key}")
    log(f"cache {cached.path.name}: {cached.load()} embeddings; splitter {settings}")
    return embedder, chunker, cached


class Precomputed:
    """Returns query embeddings computed beforehand, so timings are retrieval alone."""

    def __init__(self, embedder: EmbeddingProvider, queries: Sequence[str]) -> None:
        self.embedder = embedder
        self.memo = {q: embedder.embed_query(q) for q in queries}
        self.name = embedder.name
        self.dimension = embedder.dimension

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        return self.embedder.embed_documents(texts)

    def embed_query(self, text: str) -> Embedding:
        return self.memo[text]

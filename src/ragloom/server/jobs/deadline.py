"""A job's wall-clock deadline, looked at inside an embedding batch.

A batch of a few hundred chunks takes seconds on a CPU embedder (minutes behind a slow
provider); a deadline looked at only between batches lets a job run that long past
it. :class:`CheckedEmbedder` embeds a batch in small sub-batches, sized to take about
``target`` seconds each from the time the last one took, and calls ``check`` (which
raises once the deadline passed, or the collection is being deleted) before each: a
job past its deadline stops within about one sub-batch. The batch it cuts short is
never stored (stores write a batch whole, after all of it is embedded), so no
document is left half written.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ragloom.embeddings.query_memo import QueryWrapper
from ragloom.protocols import EmbeddingProvider, TokenCounter
from ragloom.types import Embedding

#: Seconds a sub-batch should take, and its bounds in texts.
TARGET_SECONDS = 0.25
FIRST_SIZE = 8
LARGEST_SIZE = 64


class CheckedEmbedder(QueryWrapper):
    """``embedder`` (same name, dimension and tokens) with ``check()`` called before each
    sub-batch of :meth:`embed_documents`."""

    def __init__(self, embedder: EmbeddingProvider, check: Callable[[], None], *,
                 target: float = TARGET_SECONDS, first: int = FIRST_SIZE,
                 largest: int = LARGEST_SIZE) -> None:
        super().__init__(embedder)
        self.check = check
        self.target = target
        self.largest = largest
        self.size = max(1, min(first, largest))

    def count_tokens(self, text: str) -> int:
        if isinstance(self.embedder, TokenCounter):
            return self.embedder.count_tokens(text)
        return max(1, len(text.split()) * 4 // 3)

    def embed_query(self, text: str) -> Embedding:
        self.check()
        return self.embedder.embed_query(text)

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        embeddings: list[Embedding] = []
        start = 0
        while start < len(texts):
            self.check()
            part = texts[start:start + self.size]
            began = time.monotonic()
            embeddings.extend(self.embedder.embed_documents(part))
            took = time.monotonic() - began
            # The next sub-batch sized to take about ``target`` seconds at this pace.
            pace = len(part) * self.target / took if took > 0 else self.largest
            self.size = max(1, min(self.largest, int(pace)))
            start += len(part)
        return embeddings

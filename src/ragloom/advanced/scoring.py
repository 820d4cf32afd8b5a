"""Scoring models: how relevant is each text to a query.

One contract, :class:`ScoringModel` (``score(query, texts) -> floats in [0, 1]``),
two implementations:

* :class:`CrossEncoderScoringModel`: a sentence-transformers ``CrossEncoder``
  loaded from any local folder or hub name (needs the ``local`` extra); scores go
  through a sigmoid when the model gives raw logits, so ``min_score`` has one scale.
* :class:`ChatModelScoringModel`: a chat model rates each passage from 0 to 10.

:class:`ScoringReranker` plugs either into anything that takes a
:class:`~ragloom.protocols.Reranker` (``rerank(question, matches)``), with
``min_score`` and ``top_k``; :class:`~ragloom.advanced.aggregation.RerankingContentAggregator`
uses it as an aggregator.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ragloom.errors import InvalidInputError, MissingDependencyError, RagError
from ragloom.protocols import ModelProvider
from ragloom.types import QueryMatch

__all__ = [
    "ChatModelScoringModel",
    "CrossEncoderScoringModel",
    "ScoringModel",
    "ScoringReranker",
]


@runtime_checkable
class ScoringModel(Protocol):
    """Relevance of each text to the query, in [0, 1], higher is better."""

    def score(self, query: str, texts: Sequence[str]) -> list[float]: ...


def _sigmoid(value: float) -> float:
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    z = math.exp(value)
    return z / (1.0 + z)


class CrossEncoderScoringModel:
    """A sentence-transformers cross-encoder (e.g. ``cross-encoder/ms-marco-MiniLM-L6-v2``
    or a local folder). Loads on first use; ``local_files_only`` (default) never
    reaches a hub."""

    def __init__(self, model: str, *, batch_size: int = 32, max_length: int | None = 512,
                 device: str = "cpu", local_files_only: bool = True) -> None:
        self.model_name = model
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.local_files_only = local_files_only
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"cross-encoder:{self.model_name}"

    def load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._load()
        return self._model

    def _load(self) -> Any:
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise MissingDependencyError("sentence-transformers", "local",
                                         "cross-encoder re-ranking") from exc
        from ragloom._threads import quiet_model_libraries

        quiet_model_libraries()
        try:
            return CrossEncoder(self.model_name, device=self.device, max_length=self.max_length,
                                local_files_only=self.local_files_only)
        except (OSError, ValueError) as exc:
            raise InvalidInputError(
                f"cannot load the cross-encoder {self.model_name!r}: {exc}. Give a local folder "
                "holding a sentence-transformers CrossEncoder (config.json, weights, tokenizer)"
            ) from exc

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        model = self.load()
        raw = model.predict([(query, text) for text in texts], batch_size=self.batch_size,
                            show_progress_bar=False, convert_to_numpy=True)
        values = [float(v) for v in (raw.reshape(len(texts), -1)[:, -1])]
        if any(v < 0.0 or v > 1.0 for v in values):
            values = [_sigmoid(v) for v in values]
        return values


SCORING_PROMPT = (
    "How well does the passage answer the question? Reply with one number from 0 (not at "
    "all) to 10 (fully), nothing else.\n\nQuestion: {question}\n\nPassage: {passage}\n\n"
    "Score:"
)


class ChatModelScoringModel:
    """A chat model as scorer: one call per passage, a 0-10 rating mapped to [0, 1].
    A reply with no number scores 0."""

    def __init__(self, model: ModelProvider, *, prompt: str = SCORING_PROMPT,
                 max_passage_chars: int = 2000) -> None:
        self.model = model
        self.prompt = prompt
        self.max_passage_chars = max_passage_chars

    @property
    def name(self) -> str:
        return f"chat-scorer:{self.model.name}"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        return [self._one(query, text) for text in texts]

    def _one(self, query: str, text: str) -> float:
        request = (self.prompt.replace("{question}", query)
                   .replace("{passage}", text[: self.max_passage_chars]))
        reply = self.model.chat(request, temperature=0.0, max_tokens=4).text
        found = re.search(r"\d+(?:\.\d+)?", reply)
        return 0.0 if found is None else max(0.0, min(1.0, float(found.group()) / 10.0))


class ScoringReranker:
    """A :class:`ScoringModel` as a :class:`~ragloom.protocols.Reranker`.

    The new ``score`` is the scoring model's; ``raw_score`` keeps the retrieval
    score. Ties keep the retrieval order.
    """

    def __init__(self, scoring_model: ScoringModel, *, min_score: float | None = None,
                 top_k: int | None = None) -> None:
        if min_score is not None and not 0.0 <= min_score <= 1.0:
            raise InvalidInputError("min_score is a score in [0, 1]")
        if top_k is not None and top_k < 1:
            raise InvalidInputError("top_k must be at least 1")
        self.scoring_model = scoring_model
        self.min_score = min_score
        self.top_k = top_k

    def rerank(self, question: str, matches: Sequence[QueryMatch]) -> list[QueryMatch]:
        if not matches:
            return []
        scores = self.scoring_model.score(question, [m.chunk.text for m in matches])
        if len(scores) != len(matches):
            raise RagError(f"the scoring model gave {len(scores)} scores for "
                           f"{len(matches)} passages")
        order = sorted(range(len(matches)), key=lambda i: (-scores[i], i))
        result = [QueryMatch(chunk=matches[i].chunk, score=float(scores[i]),
                             raw_score=matches[i].score,
                             knowledge_base=matches[i].knowledge_base)
                  for i in order
                  if self.min_score is None or scores[i] >= self.min_score]
        return result if self.top_k is None else result[: self.top_k]

"""Hybrid and keyword search where users start: knowledge bases of a few chunks."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import search
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.types import Embedding, TextChunk, TextDocument, Vector, VectorEntry

PRICES = "Parking permits cost 45 euros per month and are sold at the front desk."
HOURS = "The front desk opens from 8 to 18 on weekdays; staff parking lies behind it."
QUESTION = "How much is a parking permit?"


class Fixed:
    """An embedder whose vectors are given: the query sits closest to ``HOURS``."""

    name = "fake:fixed"
    dimension = 2

    def __init__(self, vectors: dict[str, Sequence[float]]) -> None:
        self.vectors = vectors

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> Embedding:
        return Vector(np.asarray(self.vectors[text], dtype=np.float32))


EMBEDDER = Fixed({PRICES: [1.0, 0.0], HOURS: [0.0, 1.0],
                  # cosine 0.72 to HOURS, 0.69 to PRICES
                  QUESTION: [0.69, 0.72]})


def entries(texts: Sequence[str]) -> list[VectorEntry]:
    out = []
    for n, text in enumerate(texts):
        document = TextDocument.create(text, source=f"file{n}.txt")
        chunk = TextChunk.create(document, text, index=0, start=0, end=len(text))
        out.append(VectorEntry(chunk=chunk, embedding=EMBEDDER.embed_query(text)))
    return out


@pytest.fixture(params=["memory", "sqlite"])
def two_files(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    store: Any = (InMemoryVectorStore() if request.param == "memory"
                  else SqliteVectorStore(tmp_path / "kb.db"))
    store.add(entries([PRICES, HOURS]))
    yield store
    if request.param == "sqlite":
        store.close()


def test_keyword_scores_mean_something_with_two_documents(two_files: Any) -> None:
    found = search(two_files, EMBEDDER, "parking permit price",
                   SearchOptions(mode="keyword")).matches
    # "permit" is in one of two documents: it must count (FTS5's idf made it 0).
    assert found[0].chunk.text == PRICES
    assert found[0].raw_score > 0.5 and found[0].score > found[-1].score
    both = search(two_files, EMBEDDER, "parking", SearchOptions(mode="keyword")).matches
    assert len(both) == 2 and all(m.raw_score > 0.05 for m in both)


@pytest.mark.parametrize("ranker", ["weighted", "rrf"])
def test_the_price_question_ranks_the_price_file_first(two_files: Any, ranker: str) -> None:
    vector = search(two_files, EMBEDDER, QUESTION, SearchOptions(mode="vector")).matches
    assert vector[0].chunk.text == HOURS  # the vector side alone gets it wrong
    hybrid = search(two_files, EMBEDDER, QUESTION,
                    SearchOptions(mode="hybrid", ranker=ranker,  # type: ignore[arg-type]
                                  score_normalization="per_query")).matches
    assert [m.chunk.text for m in hybrid] == [PRICES, HOURS]
    absolute = search(two_files, EMBEDDER, QUESTION,
                      SearchOptions(mode="hybrid", ranker=ranker)).matches  # type: ignore[arg-type]
    assert [m.chunk.text for m in absolute] == [PRICES, HOURS]  # the same ranking
    if ranker == "weighted":
        assert hybrid[0].score - hybrid[1].score > 0.2
    else:  # ranks 1+2 against 2+1: a tie, broken by the stated rule (input scores)
        assert hybrid[0].score == hybrid[1].score


def test_a_threshold_above_alpha_still_finds_vector_matches(two_files: Any) -> None:
    # No keyword in the query matches: the vector side alone decides, its best is 1.
    options = SearchOptions(mode="hybrid", score_threshold=0.8, alpha=0.5,
                            score_normalization="per_query")
    EMBEDDER.vectors["zzz qqq"] = [0.69, 0.72]
    kept = search(two_files, EMBEDDER, "zzz qqq", options).matches
    assert [m.chunk.text for m in kept] == [HOURS, PRICES]
    assert kept[0].score == pytest.approx(1.0)
    # Absolute: no keyword matches, so each chunk scores what vector search gives it.
    vector = {m.chunk.text: m.score for m in search(
        two_files, EMBEDDER, "zzz qqq", SearchOptions(mode="vector")).matches}
    absolute = search(two_files, EMBEDDER, "zzz qqq", SearchOptions(mode="hybrid")).matches
    assert {m.chunk.text: m.score for m in absolute} == pytest.approx(vector)
    assert [m.chunk.text for m in search(two_files, EMBEDDER, "zzz qqq", SearchOptions(
        mode="hybrid", score_threshold=0.8)).matches] == [m.chunk.text for m in absolute
                                                          if vector[m.chunk.text] >= 0.8]


def test_single_chunk_and_empty_results(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "one.db")
    store.add(entries([PRICES]))
    one = search(store, EMBEDDER, QUESTION, SearchOptions()).matches
    assert [m.chunk.text for m in one] == [PRICES] and 0.0 < one[0].score <= 1.0
    EMBEDDER.vectors["nothing here"] = [-1.0, 0.0]
    # The only vector match is as far as a vector can be: no evidence, nothing found
    # above a threshold, however high a lone min-max would have lifted it.
    assert search(store, EMBEDDER, "nothing here", SearchOptions(
        score_threshold=0.1, score_normalization="per_query")).matches == []
    # Its absolute score is its vector score (no keyword matches): 0 for cosine -1.
    far = search(store, EMBEDDER, "nothing here", SearchOptions()).matches
    assert [m.score for m in far] == [pytest.approx(0.0)]
    assert search(store, EMBEDDER, "nothing here",
                  SearchOptions(score_threshold=0.1)).matches == []
    store.close()

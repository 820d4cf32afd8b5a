"""Keyword-scoring and fusion variants on BEIR SciFact, all in one run.

    .venv/bin/python bench/retrieval_variants.py [--data ../shared/data/beir/scifact]
        [--only SUBSTRING ...]

What chose how BM25 is scored and fused (docs/retrieval.md, "Keyword scoring and
fusion variants"): the same chunks (default splitter) and cached embeddings as
bench/retrieval_scifact.py; per query the 300 best chunks by cosine and, for each
keyword variant (idf, k1/b, query stop words, BM25+), the 300 best by that BM25; then
each fusion variant over those lists, documents ranked by their best chunk. Scoring
runs over the in-memory index's postings, so the variants cost seconds, not a store
each. The fusion rows call :func:`ragloom.retrieval.fusion.fuse_hybrid` as shipped
(the default row is the default ranker); "BM25 values" rows hand the ranker raw BM25
as the old code would have min-maxed contract scores, through ``weighted_fusion``.
Results go to bench/results/retrieval_variants.json.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from _scifact import DATA, RESULTS, cached_embedder, log
from ragloom.evaluation.beir import load_beir
from ragloom.evaluation.metrics import mean, mrr_at_k, ndcg_at_k, recall_at_k
from ragloom.retrieval.fusion import (
    KEYWORD_FLOOR,
    VECTOR_FLOOR,
    Fused,
    fuse_hybrid,
    weighted_fusion,
)
from ragloom.retrieval.scores import bm25_to_score
from ragloom.retrieval.tokenize import porter_stem, words
from ragloom.stores.bm25 import BM25Index
from ragloom.types import Vector

DEPTH = 300
Pairs = list[tuple[str, float]]
#: Lucene's EnglishAnalyzer stop set (also Elasticsearch's ``_english_``), 33 words.
LUCENE_STOP = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with"))


def lucene(n: int, total: int) -> float:
    return math.log(1.0 + (total - n + 0.5) / (n + 0.5))


def fts5_floored(n: int, total: int) -> float:
    value = math.log((total - n + 0.5) / (n + 0.5))
    return value if value > 0 else 1e-6


def fts5_else_lucene(n: int, total: int) -> float:
    value = math.log((total - n + 0.5) / (n + 0.5))
    return value if value > 0 else lucene(n, total)


def atire(n: int, total: int) -> float:
    return math.log(total / n)


KEYWORD_VARIANTS: dict[str, dict[str, Any]] = {
    "lucene idf, k1 1.2, b 0.75 (default)": {"idf": lucene},
    "fts5 idf floored 1e-6 (before)": {"idf": fts5_floored},
    "fts5 idf, lucene where fts5 <= 0": {"idf": fts5_else_lucene},
    "atire idf ln(N/n)": {"idf": atire},
    "lucene idf + query stop words": {"idf": lucene, "stop": LUCENE_STOP},
    "fts5 idf + query stop words": {"idf": fts5_floored, "stop": LUCENE_STOP},
    "lucene idf, k1 0.9, b 0.4": {"idf": lucene, "k1": 0.9, "b": 0.4},
    "lucene idf + stop words, k1 0.9, b 0.4": {"idf": lucene, "k1": 0.9, "b": 0.4,
                                                "stop": LUCENE_STOP},
    "fts5 idf, k1 0.9, b 0.4": {"idf": fts5_floored, "k1": 0.9, "b": 0.4},
    "bm25+ delta 1, lucene idf": {"idf": lucene, "delta": 1.0},
}


def _cut(dense: Pairs, sparse: Pairs, depth: int) -> tuple[bool, bool]:
    return len(dense) >= depth, len(sparse) >= depth


def _bm25_values(dense: Pairs, raw: Pairs, cut: tuple[bool, bool] | None,
                 floors: tuple[float, float] = (VECTOR_FLOOR, KEYWORD_FLOOR)) -> list[Fused]:
    cuts = list(cut) if cut is not None else [False, False]
    return weighted_fusion([dense, raw], [0.5, 0.5], floors=list(floors), cut=cuts)


# (dense contract, keyword contract, keyword BM25) -> fused
FUSIONS: dict[str, Callable[[Pairs, Pairs, Pairs], list[Fused]]] = {
    "default ranker (weighted, min-max, alpha 0.5)": lambda d, c, r: fuse_hybrid(
        d, c, ranker="weighted", cut=_cut(d, c, DEPTH)),
    "min-max of contract scores (old default)": lambda d, c, r: weighted_fusion(
        [d, c], [0.5, 0.5], floors=[VECTOR_FLOOR, KEYWORD_FLOOR], cut=list(_cut(d, c, DEPTH))),
    "min-max of BM25 values, ties on BM25": lambda d, c, r: _bm25_values(
        d, r, _cut(d, r, DEPTH)),
    "default ranker, 100 per side": lambda d, c, r: fuse_hybrid(
        d[:100], c[:100], ranker="weighted", cut=_cut(d, c, 100)),
    "min-max of contract scores, 100 per side": lambda d, c, r: weighted_fusion(
        [d[:100], c[:100]], [0.5, 0.5], floors=[VECTOR_FLOOR, KEYWORD_FLOOR],
        cut=list(_cut(d, c, 100))),
    "rrf k=60": lambda d, c, r: fuse_hybrid(d, c, ranker="rrf"),
    "theoretical min-max (cos 0, bm25 0), BM25 values": lambda d, c, r: _bm25_values(
        d, r, None),
    "theoretical min-max, BM25 values, 100 per side": lambda d, c, r: _bm25_values(
        d[:100], r[:100], None),
    "theoretical min-max, default ranker (BM25 values)": lambda d, c, r: fuse_hybrid(
        d, c, ranker="weighted", cut=(False, False)),
    "theoretical min-max, contract scores": lambda d, c, r: weighted_fusion(
        [d, c], [0.5, 0.5], floors=[VECTOR_FLOOR, KEYWORD_FLOOR], cut=[False, False]),
    "theoretical min-max (cos -1, bm25 0), BM25 values": lambda d, c, r: _bm25_values(
        d, r, None, (0.0, 0.0)),
}


def query_terms(text: str, stop: frozenset[str] | None) -> list[tuple[str, int]]:
    found = words(text)
    if stop:
        found = [w for w in found if w not in stop] or found  # all stop words: keep them
    counts: dict[str, int] = {}
    for word in found:
        term = porter_stem(word)
        counts[term] = counts.get(term, 0) + 1
    return list(counts.items())


def keyword(index: BM25Index, text: str, idf: Callable[[int, int], float], k1: float = 1.2,
            b: float = 0.75, stop: frozenset[str] | None = None, delta: float = 0.0) -> Pairs:
    """The DEPTH best (chunk id, BM25) pairs of a BM25 variant, ties by id."""
    total = len(index)
    average = index._total_length / total
    scores = np.zeros(len(index._ids))
    for term, repeats in query_terms(text, stop):
        slots, tfs = index._postings(term)
        if slots.shape[0] == 0:
            continue
        lengths = index._lengths[slots].astype(np.float64)
        part = tfs * (k1 + 1.0) / (tfs + k1 * (1.0 - b + b * lengths / average)) + delta
        scores[slots] += repeats * idf(int(slots.shape[0]), total) * part
    found = np.flatnonzero(scores > 0)
    if found.size > DEPTH + 20:
        found = found[np.argpartition(-scores[found], DEPTH + 10)[:DEPTH + 10]]
    ranked = sorted(((index._ids[s] or "", float(scores[s])) for s in found.tolist()),
                    key=lambda p: (-p[1], p[0]))
    return ranked[:DEPTH]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--only", nargs="*", default=None,
                        help="keyword variants whose name holds one of these")
    parser.add_argument("--out", type=Path, default=RESULTS / "retrieval_variants.json")
    args = parser.parse_args()
    started = time.perf_counter()
    dataset = load_beir(args.data)
    embedder, chunker, cached = cached_embedder(dataset)
    chunks = [c for d in dataset.documents() for c in chunker.split(d)]
    vectors = cached.embed_documents([c.text for c in chunks])
    matrix = np.stack([v.values for v in vectors if isinstance(v, Vector)]).astype(np.float64)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    ids = [c.id for c in chunks]
    source = {c.id: c.source for c in chunks}
    index = BM25Index()
    index.add((c.id, c.text) for c in chunks)
    queries = dataset.judged_queries()
    log(f"{len(chunks)} chunks ({cached.misses} embedded now) in "
        f"{time.perf_counter() - started:.0f}s; embedding {len(queries)} queries")
    dense_lists: list[Pairs] = []
    for _, text in queries:
        query = embedder.embed_query(text)
        assert isinstance(query, Vector)
        cos = matrix @ (query.values / np.linalg.norm(query.values))
        top = np.argpartition(-cos, DEPTH)[:DEPTH]
        dense_lists.append(sorted(((ids[i], float((1.0 + cos[i]) / 2.0)) for i in top.tolist()),
                                  key=lambda p: (-p[1], p[0])))

    rows: list[dict[str, Any]] = []

    def report(keyword_variant: str, fusion: str, rankings: list[list[str]]) -> None:
        metrics: list[tuple[float, float, float]] = []
        for ranking, (query_id, _) in zip(rankings, queries, strict=True):
            documents = list(dict.fromkeys(source[i] for i in ranking))[:100]
            judged = dataset.qrels[query_id]
            metrics.append((ndcg_at_k(documents, judged), recall_at_k(documents, judged),
                            mrr_at_k(documents, judged)))
        row = {"keyword": keyword_variant, "fusion": fusion,
               "ndcg@10": round(mean(m[0] for m in metrics), 4),
               "recall@100": round(mean(m[1] for m in metrics), 4),
               "mrr@10": round(mean(m[2] for m in metrics), 4)}
        rows.append(row)
        print(f"{keyword_variant:42s} {fusion:52s} {row['ndcg@10']:.4f} "
              f"{row['recall@100']:.4f} {row['mrr@10']:.4f}", flush=True)

    report("-", "vector alone", [[i for i, _ in d] for d in dense_lists])
    for name, settings in KEYWORD_VARIANTS.items():
        if args.only and not any(part in name for part in args.only):
            continue
        raw = [keyword(index, text, **settings) for _, text in queries]
        contract = [list(zip([i for i, _ in r],
                             bm25_to_score(np.array([v for _, v in r])).tolist(), strict=True))
                    for r in raw]
        report(name, "keyword alone", [[i for i, _ in r] for r in raw])
        for fusion, fuse in FUSIONS.items():
            report(name, fusion, [[f.id for f in fuse(d, c, r)]
                                  for d, c, r in zip(dense_lists, contract, raw, strict=True)])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"dataset": dataset.name, "embedder": embedder.name,
                                    "chunks": len(chunks), "queries": len(queries),
                                    "depth": DEPTH, "rows": rows}, indent=1) + "\n",
                        encoding="utf-8")
    log(f"done in {time.perf_counter() - started:.0f}s; wrote {args.out}")


if __name__ == "__main__":
    main()

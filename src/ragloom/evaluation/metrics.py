"""Ranking metrics, as BEIR computes them with pytrec_eval.

* nDCG@k: gain = the graded relevance, discount = log2(rank + 1); the ideal DCG
  comes from the judged grades sorted high to low. Grades <= 0 are not relevant.
* Recall@k: relevant documents in the first k over all relevant documents.
* MRR@k: 1 / rank of the first relevant document within the first k, else 0.

Each takes one query's ranking (document ids, best first) and its judgements
``{doc_id: grade}``; :func:`mean` averages over queries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence


def _unique(ranking: Sequence[str]) -> list[str]:
    # A document counts once, at its best rank.
    return list(dict.fromkeys(ranking))


def ndcg_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    ideal_gains = sorted((g for g in qrels.values() if g > 0), reverse=True)[:k]
    if not ideal_gains:
        return 0.0
    dcg = sum(max(qrels.get(doc, 0), 0) / math.log2(rank + 1)
              for rank, doc in enumerate(_unique(ranking)[:k], start=1))
    idcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal_gains, start=1))
    return dcg / idcg


def recall_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int = 100) -> float:
    relevant = {doc for doc, g in qrels.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(_unique(ranking)[:k])) / len(relevant)


def mrr_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    for rank, doc in enumerate(_unique(ranking)[:k], start=1):
        if qrels.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0

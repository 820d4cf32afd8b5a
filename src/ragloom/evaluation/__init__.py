"""Retrieval evaluation on BEIR-format data sets: loading, metrics and the runner.

``ragloom eval PATH`` and ``bench/retrieval_scifact.py`` use these; nothing here
loads a model unless the runner is given one.
"""

from ragloom.evaluation.beir import BeirDataset, load_beir
from ragloom.evaluation.metrics import mrr_at_k, ndcg_at_k, recall_at_k

__all__ = ["BeirDataset", "load_beir", "mrr_at_k", "ndcg_at_k", "recall_at_k"]

"""BEIR loading and the evaluation runner on a tiny hand-made data set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragloom.errors import InvalidInputError
from ragloom.evaluation.beir import load_beir
from ragloom.evaluation.cache import CachedEmbedder
from ragloom.evaluation.runner import default_configs, evaluate, ingest_dataset
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.testing import HashingEmbedder

CORPUS = {
    "d1": ("Gene therapy", "Gene therapy repairs faulty genes in cells."),
    "d2": ("Virus", "The influenza virus infects the lungs."),
    "d3": ("Brain", "Imaging of the human brain with MRI."),
    "d4": ("Mice", "Mice were fed a high fat diet."),
}
QUERIES = {"q1": "gene therapy", "q2": "influenza virus lungs", "q3": "brain MRI",
           "q4": "no judgement"}
QRELS = [("q1", "d1", 1), ("q2", "d2", 2), ("q3", "d3", 1)]


def write_beir(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("\n".join(
        json.dumps({"_id": i, "title": t, "text": x}) for i, (t, x) in CORPUS.items()))
    (root / "queries.jsonl").write_text("\n".join(
        json.dumps({"_id": i, "text": t}) for i, t in QUERIES.items()))
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "\n".join(f"{q}\t{d}\t{s}" for q, d, s in QRELS))
    return root


def test_load_beir(tmp_path: Path) -> None:
    data = load_beir(write_beir(tmp_path / "tiny"))
    assert data.name == "tiny" and set(data.corpus) == set(CORPUS)
    assert data.qrels["q2"] == {"d2": 2}
    assert [q for q, _ in data.judged_queries()] == ["q1", "q2", "q3"]
    assert [q for q, _ in data.judged_queries(2)] == ["q1", "q2"]
    doc = next(iter(data.documents()))
    assert doc.source == "d1"
    assert doc.text == "Gene therapy\n\nGene therapy repairs faulty genes in cells."


def test_load_beir_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"corpus\.jsonl"):
        load_beir(tmp_path)


@pytest.mark.parametrize("chunker", [None, "tiny"])
def test_runner_scores_every_configuration(tmp_path: Path, chunker: str | None) -> None:
    data = load_beir(write_beir(tmp_path / "tiny"))
    store = InMemoryVectorStore()
    embedder = HashingEmbedder(64)
    splitter = None
    if chunker == "tiny":
        from ragloom.chunking.recursive import RecursiveSplitter

        splitter = RecursiveSplitter(chunk_size=20, chunk_overlap=0)
    chunks = ingest_dataset(data, store, embedder, splitter)
    assert chunks >= len(CORPUS)
    rows = evaluate(data, store, embedder, default_configs())
    assert [r.config for r in rows] == ["vector", "keyword", "hybrid/rrf", "hybrid/weighted"]
    keyword = rows[1]
    # Every judged query names its document with unique words: keyword search is perfect.
    assert keyword.ndcg_at_10 == pytest.approx(1.0)
    assert keyword.mrr_at_10 == pytest.approx(1.0)
    assert all(r.queries == 3 and 0.0 <= r.ndcg_at_10 <= 1.0 for r in rows)
    assert all(r.recall_at_100 == pytest.approx(1.0) for r in rows)
    assert rows[0].to_dict()["ndcg@10"] == round(rows[0].ndcg_at_10, 4)


def test_cached_embedder_round_trips(tmp_path: Path) -> None:
    inner = HashingEmbedder(16)
    cache = CachedEmbedder(inner, tmp_path / "cache" / "emb")
    assert cache.warm(["a b", "c", "a b"]) == 2
    again = CachedEmbedder(inner, tmp_path / "cache" / "emb")
    assert again.load() == 2
    vectors = again.embed_documents(["c", "a b"])
    assert again.misses == 0
    assert (vectors[0].values == inner.embed_documents(["c"])[0].values).all()  # type: ignore[union-attr]
    other = CachedEmbedder(HashingEmbedder(16, model="other"), tmp_path / "cache" / "emb")
    assert other.load() == 0

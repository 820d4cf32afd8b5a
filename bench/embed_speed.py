"""Embedding throughput and quality of the bundled all-MiniLM-L6-v2: torch vs ONNX.

    .venv/bin/python bench/embed_speed.py [--docs 1000] [--rounds 3] [--no-quality] [--data DIR]

Throughput (texts/s) on the first N SciFact documents (title + "\\n\\n" + text) and on
the chunks the knowledge base would embed (RecursiveSplitter sized in MiniLM
tokens, <= 200), for, in the same run, alternating engine by engine each round:

* ``st-fp32``: raw sentence-transformers ``encode`` (torch fp32), the reference;
* ``torch``: ragloom's embedder with ``backend="torch"``;
* ``onnx``: ``backend="onnx"`` (fp32 graph on onnxruntime);
* ``onnx-int8``: ``backend="onnx-int8"``.

All read at most 256 tokens, batch size 32, every available core. Ratios are to
``st-fp32`` in the same round (other jobs share the machine); the table shows the
median round. Then cosine between each engine's vectors and torch's for the same
texts, and (unless ``--no-quality``) SciFact dense retrieval nDCG@10 over the full
corpus (5,183 documents, 300 queries) for torch and onnx-int8. Corpus embeddings
are cached in bench/results/cache/ per backend. Results: bench/results/embed_speed.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragloom._threads import available_cores
from ragloom.chunking.recursive import RecursiveSplitter
from ragloom.embeddings.local import SentenceTransformerEmbedder, bundled_model_path
from ragloom.evaluation.beir import BeirDataset, load_beir
from ragloom.evaluation.cache import CachedEmbedder
from ragloom.evaluation.metrics import mean, ndcg_at_k
from ragloom.types import TextDocument, Vector

HERE = Path(__file__).resolve().parent
# The shared SciFact copy sits beside the repository: <repo>/../shared/data/beir/scifact.
DATA = HERE.parent.parent / "shared" / "data" / "beir" / "scifact"
RESULTS = HERE / "results"
CACHE = RESULTS / "cache"
BATCH = 32
BACKENDS = ("torch", "onnx", "onnx-int8")

Encode = Callable[[Sequence[str]], Any]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def sentence_transformers_encoder() -> Encode:
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(bundled_model_path()), device="cpu")
    model.max_seq_length = 256

    def encode(texts: Sequence[str]) -> Any:
        torch.set_num_threads(available_cores())
        return model.encode(list(texts), batch_size=BATCH, normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)

    return encode


def ragloom_encoder(embedder: SentenceTransformerEmbedder) -> Encode:
    def encode(texts: Sequence[str]) -> Any:
        return matrix(embedder.embed_documents(texts))

    return encode


def matrix(embeddings: Sequence[Any]) -> Any:
    rows = []
    for item in embeddings:
        assert isinstance(item, Vector)
        rows.append(item.values)
    return np.stack(rows).astype(np.float32)


def chunk_texts(texts: Sequence[str], counter: SentenceTransformerEmbedder) -> list[str]:
    splitter = RecursiveSplitter(token_counter=counter)
    chunks: list[str] = []
    for number, text in enumerate(texts):
        document = TextDocument.create(text, source=f"doc-{number}")
        chunks.extend(chunk.text for chunk in splitter.split(document))
    return chunks


def cosine_stats(got: Any, want: Any) -> dict[str, float]:
    cosines = np.sum(got * want, axis=1)
    return {"min": round(float(cosines.min()), 5),
            "p1": round(float(np.percentile(cosines, 1)), 5),
            "mean": round(float(cosines.mean()), 5)}


# ---------------------------------------------------------------------- speed


def measure_speed(engines: dict[str, Encode], sets: dict[str, list[str]],
                  rounds: int) -> dict[str, dict[str, Any]]:
    for encode in engines.values():  # load models, export ONNX, warm the caches
        encode(["warm up", "a second text to warm up the batch path"])
    rates: dict[str, dict[str, list[float]]] = {s: {e: [] for e in engines} for s in sets}
    for round_number in range(rounds):
        for set_name, texts in sets.items():
            for engine, encode in engines.items():
                started = time.perf_counter()
                encode(texts)
                rate = len(texts) / (time.perf_counter() - started)
                rates[set_name][engine].append(rate)
                log(f"round {round_number + 1} {set_name:6s} {engine:10s} {rate:7.1f} texts/s")
    summary: dict[str, dict[str, Any]] = {}
    for set_name, by_engine in rates.items():
        reference = by_engine["st-fp32"]
        summary[set_name] = {
            engine: {
                "texts_per_s": [round(r, 2) for r in values],
                "median_texts_per_s": round(statistics.median(values), 2),
                "ratio_to_st_fp32_per_round": [round(r / b, 3) for r, b in
                                               zip(values, reference, strict=True)],
                "median_ratio": round(statistics.median(
                    r / b for r, b in zip(values, reference, strict=True)), 3),
            }
            for engine, values in by_engine.items()
        }
    return summary


# --------------------------------------------------------------------- quality


def retrieval_ndcg(dataset: BeirDataset, embedder: SentenceTransformerEmbedder,
                   backend: str) -> dict[str, Any]:
    ids = list(dataset.corpus)
    texts = [dataset.corpus[i].document_text() for i in ids]
    cached = CachedEmbedder(embedder, CACHE / f"embed-speed-scifact-docs-{backend}")
    started = time.perf_counter()
    new = cached.warm(texts, batch=1024,
                      progress=lambda done, total: log(f"{backend}: embedded {done}/{total}"))
    corpus_seconds = time.perf_counter() - started
    corpus = matrix(cached.embed_documents(texts))
    queries = dataset.judged_queries()
    started = time.perf_counter()
    query_vectors = np.stack([matrix([embedder.embed_query(text)])[0] for _, text in queries])
    query_seconds = time.perf_counter() - started
    scores = query_vectors @ corpus.T
    top = np.argsort(-scores, axis=1)[:, :10]
    ndcg = mean(ndcg_at_k([ids[j] for j in row], dataset.qrels[qid], 10)
                for (qid, _), row in zip(queries, top, strict=True))
    return {"ndcg@10": round(ndcg, 4), "queries": len(queries), "documents": len(ids),
            "corpus_embedded_now": new, "corpus_seconds": round(corpus_seconds, 1),
            "query_ms_each": round(1000 * query_seconds / len(queries), 2),
            "corpus_matrix": corpus}


# ------------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-quality", action="store_true")
    parser.add_argument("--data", type=Path, default=DATA, help="BEIR SciFact folder")
    args = parser.parse_args()

    dataset = load_beir(args.data)
    docs = [entry.document_text() for entry in list(dataset.corpus.values())[:args.docs]]
    embedders = {b: SentenceTransformerEmbedder.bundled(backend=b) for b in BACKENDS}
    chunks = chunk_texts(docs, embedders["torch"])
    sets = {"docs": docs, "chunks": chunks}
    log(f"{len(docs)} documents, {len(chunks)} chunks, {available_cores()} cores")

    engines: dict[str, Encode] = {"st-fp32": sentence_transformers_encoder()}
    engines.update({b: ragloom_encoder(e) for b, e in embedders.items()})
    speed = measure_speed(engines, sets, args.rounds)

    agreement: dict[str, dict[str, Any]] = {}
    for set_name, texts in sets.items():
        reference = engines["torch"](texts)
        agreement[set_name] = {b: cosine_stats(engines[b](texts), reference)
                               for b in ("st-fp32", "onnx", "onnx-int8")}

    quality: dict[str, Any] = {}
    if not args.no_quality:
        for backend in ("torch", "onnx-int8"):
            quality[backend] = retrieval_ndcg(dataset, embedders[backend], backend)
        corpus_cosines = cosine_stats(quality["onnx-int8"].pop("corpus_matrix"),
                                      quality["torch"].pop("corpus_matrix"))
        quality["onnx-int8_vs_torch_corpus_cosine"] = corpus_cosines
        quality["ndcg_delta_int8_minus_torch"] = round(
            quality["onnx-int8"]["ndcg@10"] - quality["torch"]["ndcg@10"], 4)

    lines = [f"{'engine':10s} | {'docs/s':>8s} | {'x st-fp32':>9s} | {'chunks/s':>8s} | "
             f"{'x st-fp32':>9s} | {'cos docs min/mean':>17s} | {'cos chunks min/mean':>19s}"]
    for engine in engines:
        d, c = speed["docs"][engine], speed["chunks"][engine]
        cos_d = agreement["docs"].get(engine, {"min": 1.0, "mean": 1.0})
        cos_c = agreement["chunks"].get(engine, {"min": 1.0, "mean": 1.0})
        lines.append(
            f"{engine:10s} | {d['median_texts_per_s']:8.1f} | {d['median_ratio']:9.2f} | "
            f"{c['median_texts_per_s']:8.1f} | {c['median_ratio']:9.2f} | "
            f"{cos_d['min']:.4f}/{cos_d['mean']:.4f}     | {cos_c['min']:.4f}/{cos_c['mean']:.4f}"
        )
    for backend in ("torch", "onnx-int8"):
        if backend in quality:
            q = quality[backend]
            lines.append(f"SciFact nDCG@10 {backend}: {q['ndcg@10']:.4f} "
                         f"(query {q['query_ms_each']} ms each)")
    print("\n".join(lines))

    import onnxruntime
    import sentence_transformers
    import torch

    RESULTS.mkdir(parents=True, exist_ok=True)
    record = {
        "settings": {"documents": len(docs), "chunks": len(chunks), "rounds": args.rounds,
                     "batch_size": BATCH, "max_tokens": 256, "cores": available_cores(),
                     "processor": platform.processor() or platform.machine()},
        "versions": {"torch": torch.__version__, "onnxruntime": onnxruntime.__version__,
                     "sentence_transformers": sentence_transformers.__version__},
        "speed": speed, "cosine_to_torch": agreement, "quality": quality, "table": lines,
        "note": "another engineer's benchmarks shared the 2 cores: compare ratios "
                "within a round, not absolute rates across runs",
    }
    out = RESULTS / "embed_speed.json"
    out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    log(f"wrote {out}")


if __name__ == "__main__":
    main()

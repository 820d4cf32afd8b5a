"""CPU cost per token of the bundled all-MiniLM-L6-v2 on each engine, one thread each.

    .venv/bin/python bench/encoder_per_token.py [--data DIR] [--rounds 5]

Why: ``ragloom ingest`` must embed every token of every document, while the raw
sentence-transformers encode it is compared with stops at 256 tokens a text
(``bench/ingest_cli.py`` counts both). How much faster ingest can be than that encode
is then bounded by how much cheaper a token is on the fastest engine. This measures
that per token, on the same padded batch (32 SciFact documents cut at 192 tokens, the
length of a default chunk), process CPU time per batch, the median of ``--rounds``:

* ``torch fp32``: the reference, as sentence-transformers runs it;
* ``torch int8``: PyTorch dynamic quantisation of the Linear layers (fbgemm);
* ``onnxruntime fp32`` / ``onnxruntime int8``: ragloom's exported graphs (the int8 one
  is the default embedder), with the session options ragloom uses;
* ``ctranslate2 int8``: only when the ``ctranslate2`` package is installed (not a
  ragloom dependency; the model is converted into a temporary folder).

Prints a table with each engine's tokens per CPU-second and its speed over torch
fp32, and the CPU's vector extensions (int8 kernels differ most there); writes
bench/results/encoder_per_token.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ingest_cli import DATA, cpu_extensions
from ragloom.embeddings.local import bundled_model_path
from ragloom.embeddings.onnx import OnnxEmbedder, load_tokenizer
from ragloom.embeddings.onnx_export import FP32_FILE, INT8_FILE

RESULTS = Path(__file__).resolve().parent / "results" / "encoder_per_token.json"
BATCH, LENGTH = 32, 192


def batch_ids(data: Path) -> np.ndarray[Any, np.dtype[np.int64]]:
    texts: list[str] = []
    with (data / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            texts.append(f"{record.get('title', '')}\n\n{record.get('text', '')}")
            if len(texts) == 4 * BATCH:
                break
    tokenizer = load_tokenizer(bundled_model_path())
    rows = [item.ids for item in tokenizer.encode_batch(texts) if len(item.ids) >= LENGTH]
    if len(rows) < BATCH:
        raise SystemExit(f"need {BATCH} documents of {LENGTH}+ tokens in {data}")
    return np.array([row[:LENGTH] for row in rows[:BATCH]], dtype=np.int64)


def cpu_per_batch(run: Callable[[], object], rounds: int) -> float:
    run()  # warm up: first-run allocations and kernel selection
    times = []
    for _ in range(rounds):
        started = time.process_time()
        run()
        times.append(time.process_time() - started)
    return statistics.median(times)


def torch_runs(ids: np.ndarray[Any, np.dtype[np.int64]]) -> dict[str, Callable[[], object]]:
    import torch
    import transformers

    torch.set_num_threads(1)
    model = transformers.AutoModel.from_pretrained(str(bundled_model_path()),
                                                   local_files_only=True).eval()
    with warnings.catch_warnings():  # torch.ao's quantisation is deprecated, still works
        warnings.simplefilter("ignore")
        quantised = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear},
                                                           dtype=torch.qint8)
    tensor = torch.from_numpy(ids)
    mask = torch.ones_like(tensor)

    def run(module: Any) -> Callable[[], object]:
        def call() -> object:
            with torch.inference_mode():
                return module(input_ids=tensor, attention_mask=mask)
        return call

    return {"torch fp32": run(model), "torch int8 (fbgemm)": run(quantised)}


def onnx_runs(ids: np.ndarray[Any, np.dtype[np.int64]]) -> dict[str, Callable[[], object]]:
    import onnxruntime

    folder = OnnxEmbedder().warm_up()
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids),
             "token_type_ids": np.zeros_like(ids)}
    runs: dict[str, Callable[[], object]] = {}
    for label, file in (("onnxruntime fp32", FP32_FILE), ("onnxruntime int8 (default)", INT8_FILE)):
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = onnxruntime.InferenceSession(str(folder / file), options,
                                               providers=["CPUExecutionProvider"])
        runs[label] = lambda s=session: s.run(None, feeds)
    return runs


def ctranslate2_runs(ids: np.ndarray[Any, np.dtype[np.int64]],
                     scratch: Path) -> dict[str, Callable[[], object]]:
    try:
        import ctranslate2
    except ImportError:
        return {}
    out = scratch / "ct2"
    ctranslate2.converters.TransformersConverter(str(bundled_model_path())).convert(
        str(out), quantization="int8")
    encoder = ctranslate2.Encoder(str(out), device="cpu", compute_type="int8",
                                  intra_threads=1)
    rows = ids.tolist()
    return {"ctranslate2 int8": lambda: encoder.forward_batch(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="BEIR SciFact folder")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    ids = batch_ids(args.data)
    with tempfile.TemporaryDirectory() as scratch:
        runs = {**torch_runs(ids), **onnx_runs(ids), **ctranslate2_runs(ids, Path(scratch))}
        seconds = {label: cpu_per_batch(run, args.rounds) for label, run in runs.items()}
    reference = seconds["torch fp32"]
    rows = [{"engine": label, "cpu_s_per_batch": round(value, 3),
             "tokens_per_cpu_s": round(ids.size / value),
             "over_torch_fp32": round(reference / value, 2)} for label, value in seconds.items()]
    print(f"batch {BATCH} x {LENGTH} tokens, one thread; CPU: {cpu_extensions()}")
    print(f"{'engine':28} {'CPU s/batch':>11} {'tokens/CPU-s':>12} {'vs torch fp32':>13}")
    for row in rows:
        print(f"{row['engine']:28} {row['cpu_s_per_batch']:>11} {row['tokens_per_cpu_s']:>12} "
              f"{row['over_torch_fp32']:>12}x")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"batch": BATCH, "tokens": LENGTH, "rounds": args.rounds,
                                   "cpu_extensions": cpu_extensions(), "rows": rows},
                                  indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

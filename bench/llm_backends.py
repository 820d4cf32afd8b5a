"""The bundled SmolLM2 on its two runtimes: NumPy (``local:smollm2``) vs llama.cpp (xllamacpp).

    .venv/bin/python bench/llm_backends.py [--prompts 20] [--max-tokens 64]

Builds ``--prompts`` prompts of the kind ``ragloom ask`` sends: for the questions of
bench/answers/questions.jsonl (in file order, two per document, those whose document
loads), the three best BM25 passages of the question's own document, numbered into ragloom's default
prompt with its default system prompt. Then, in one process and one run, both runtimes
answer every prompt greedily with one thread, alternating per prompt so that load on
the machine falls on both alike.

Reports per runtime: load time (first call ready: the converted model opened, or the
GGUF loaded by llama.cpp), first-token latency (p50), decode tokens/s (output tokens
after the first, over the time after the first), whole-answer tokens/s, how many
answers contain an expected answer string, and how many answers are identical
between the two. Prints a table with the load average and writes
bench/results/llm_backends.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

from ragloom.knowledge_base import VectorKnowledgeBase  # noqa: E402
from ragloom.loaders import load_file  # noqa: E402
from ragloom.models.llamacpp import LlamaCppChatModel  # noqa: E402
from ragloom.models.local import LocalChatModel, smollm2_gguf_path  # noqa: E402
from ragloom.rag import DEFAULT_SYSTEM_PROMPT, augment_user_query  # noqa: E402
from ragloom.retrieval.options import SearchOptions  # noqa: E402
from ragloom.stores.memory import InMemoryVectorStore  # noqa: E402
from ragloom.testing.fakes import HashingEmbedder  # noqa: E402
from ragloom.types import ChatMessage  # noqa: E402

QUESTIONS = HERE / "answers" / "questions.jsonl"
DOCS = HERE / "answers" / "docs"
RESULTS = HERE / "results" / "llm_backends.json"


def prompts(count: int, per_source: int = 2) -> list[dict[str, Any]]:
    """Questions with their best passages, as the messages ragloom sends (at most
    ``per_source`` questions of one document, so that every kind of document shows)."""
    kept: list[dict[str, Any]] = []
    taken: dict[str, int] = {}
    bases: dict[str, VectorKnowledgeBase | None] = {}
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        source = item.get("source")
        if not source or taken.get(source, 0) >= per_source:
            continue
        if source not in bases:
            loaded = [r.document for r in load_file(DOCS / source) if r.document is not None]
            base = None
            if loaded:
                base = VectorKnowledgeBase(InMemoryVectorStore(), HashingEmbedder(64),
                                           name=source)
                base.ingest(loaded)
            bases[source] = base
        base = bases[source]
        if base is None:
            continue
        matches = base.retrieve(item["question"], options=SearchOptions(mode="keyword",
                                                                        top_k=3))
        if not matches:
            continue
        taken[source] = taken.get(source, 0) + 1
        user = augment_user_query(matches, item["question"])
        kept.append({"id": item["id"], "answers": item["answers"],
                     "messages": [ChatMessage.system(DEFAULT_SYSTEM_PROMPT),
                                  ChatMessage.user(user)]})
        if len(kept) == count:
            break
    return kept


def run_one(model: Any, messages: list[ChatMessage], max_tokens: int) -> dict[str, Any]:
    started = time.perf_counter()
    first = None
    final = None
    for delta in model.stream(messages, max_tokens=max_tokens):
        if delta.text and first is None:
            first = time.perf_counter() - started
        final = delta.response or final
    total = time.perf_counter() - started
    assert final is not None
    tokens = final.usage.output_tokens
    first = first if first is not None else total
    decode = (tokens - 1) / (total - first) if tokens > 1 and total > first else 0.0
    return {"text": final.text.strip(), "input_tokens": final.usage.input_tokens,
            "output_tokens": tokens, "first_token_s": first, "seconds": total,
            "decode_tokens_per_s": decode, "tokens_per_s": tokens / total if total else 0.0}


def correct(text: str, answers: list[str]) -> bool:
    lowered = text.lower()
    return any(answer.lower() in lowered for answer in answers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()

    load_before = os.getloadavg()
    items = prompts(args.prompts)
    gguf = smollm2_gguf_path()
    backends: dict[str, Any] = {}
    load_s: dict[str, float] = {}
    started = time.perf_counter()
    numpy_model = LocalChatModel(backend="numpy", threads=1)
    numpy_model.chat("Hi", max_tokens=1)
    load_s["numpy"] = time.perf_counter() - started
    backends["numpy"] = numpy_model
    started = time.perf_counter()
    backends["llamacpp"] = LlamaCppChatModel(gguf, context=numpy_model.context_length,
                                             threads=1).load()
    load_s["llamacpp"] = time.perf_counter() - started

    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in backends}
    for number, item in enumerate(items):
        order = list(backends) if number % 2 == 0 else list(reversed(backends))
        for name in order:
            result = run_one(backends[name], item["messages"], args.max_tokens)
            result["id"] = item["id"]
            result["correct"] = correct(result["text"], item["answers"])
            runs[name].append(result)
    load_after = os.getloadavg()

    identical = sum(a["text"] == b["text"] for a, b in zip(runs["numpy"], runs["llamacpp"],
                                                            strict=True))
    same_prompt = sum(a["input_tokens"] == b["input_tokens"]
                      for a, b in zip(runs["numpy"], runs["llamacpp"], strict=True))
    summary: dict[str, Any] = {}
    for name, results in runs.items():
        out_tokens = sum(r["output_tokens"] for r in results)
        decode_time = sum(r["seconds"] - r["first_token_s"] for r in results)
        decode_tokens = sum(max(0, r["output_tokens"] - 1) for r in results)
        summary[name] = {
            "load_s": round(load_s[name], 3),
            "first_token_p50_s": round(statistics.median(r["first_token_s"] for r in results), 3),
            "decode_tokens_per_s": round(decode_tokens / decode_time, 1) if decode_time else 0,
            "tokens_per_s": round(out_tokens / sum(r["seconds"] for r in results), 1),
            "prompt_tokens_mean": round(statistics.mean(r["input_tokens"] for r in results), 1),
            "output_tokens": out_tokens,
            "correct": sum(r["correct"] for r in results),
        }
    report = {
        "prompts": len(items), "max_tokens": args.max_tokens, "threads": 1,
        "greedy": True, "identical_answers": identical, "same_prompt_tokens": same_prompt,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "backends": summary, "answers": runs,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n",
                       encoding="utf-8")

    print(f"SmolLM2-135M-Instruct Q4_1, {len(items)} prompts, greedy, 1 thread, "
          f"max {args.max_tokens} tokens; load average {load_before[0]:.2f} -> "
          f"{load_after[0]:.2f}")
    header = ("runtime", "load s", "1st token p50 s", "decode tok/s", "tok/s", "prompt tok",
              "correct")
    print("  ".join(f"{h:>15}" for h in header))
    for name, row in summary.items():
        print("  ".join(f"{v!s:>15}" for v in (
            name, row["load_s"], row["first_token_p50_s"], row["decode_tokens_per_s"],
            row["tokens_per_s"], row["prompt_tokens_mean"], f"{row['correct']}/{len(items)}")))
    print(f"identical answers: {identical}/{len(items)}; same prompt token count: "
          f"{same_prompt}/{len(items)}")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

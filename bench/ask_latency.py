"""How long `ragloom ask` takes on the samples: as a fresh process and with models loaded.

    .venv/bin/python bench/ask_latency.py [--runs 5] [--warm-runs 3]

Ingests samples/ into a scratch database, then:

* **fresh**: runs ``ragloom ask QUESTION --db ...`` as a new process for each of five
  everyday questions, ``--runs`` times each (wall time, and the CPU time the process
  used: on a busy shared machine the wall time mostly measures the queue for a core);
* **warm**: one ``NaiveRag`` with the models loaded, each question ``--warm-runs`` times;
* **breakdown**: where one fresh ask spends its time (imports, opening the knowledge
  base, search with the embedder load, sentence ranking, model load and generation).

Prints tables with p50/p95 and the machine's load average, and writes
bench/results/ask_latency.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "ask_latency.json"
QUESTIONS = (
    "How long is the unpaid lunch break?",
    "How much is the staff discount on bicycles?",
    "When does the shop open?",
    "How often should I clean the e-bike chain?",
    "What is the password for the staff wifi?",
)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


def _stats(values: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(values), 3), "p95": round(_percentile(values, 0.95), 3),
            "min": round(min(values), 3), "max": round(max(values), 3), "n": len(values)}


def _ragloom() -> str:
    return str(Path(sys.executable).with_name("ragloom"))


def fresh(db: Path, runs: int) -> dict[str, Any]:
    walls: list[float] = []
    cpus: list[float] = []
    answers: dict[str, str] = {}
    for _ in range(runs):
        for question in QUESTIONS:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run([_ragloom(), "ask", question, "--db", str(db), "--json"],
                                  capture_output=True, text=True, check=True)
            walls.append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            answers[question] = json.loads(done.stdout)["answer"]
    return {"wall": _stats(walls), "cpu": _stats(cpus), "answers": answers}


def warm(db: Path, runs: int) -> dict[str, Any]:
    from ragloom.cli.common import open_knowledge_base, open_model
    from ragloom.rag import NaiveRag
    from ragloom.retrieval.options import SearchOptions

    rag = NaiveRag(open_knowledge_base(str(db), None, None, create=False),
                   open_model(None, None), search=SearchOptions(mode="hybrid", top_k=5))
    rag.query(QUESTIONS[0])  # loads both models
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        for question in QUESTIONS:
            cpu, started = time.process_time(), time.perf_counter()
            rag.query(question)
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
    rag.knowledge_base.store.close()
    return {"wall": _stats(walls), "cpu": _stats(cpus)}


_BREAKDOWN = r"""
import json, sys, time
marks = []
cpu, wall = time.process_time(), time.perf_counter()
def mark(label):
    global cpu, wall
    marks.append((label, time.process_time() - cpu, time.perf_counter() - wall))
    cpu, wall = time.process_time(), time.perf_counter()
import ragloom.cli.app
from ragloom.cli.common import open_knowledge_base, open_model
from ragloom.rag import NaiveRag
from ragloom.retrieval.options import SearchOptions
mark("imports (CLI, rag)")
kb = open_knowledge_base(sys.argv[1], None, None, create=False)
model = open_model(None, None)
rag = NaiveRag(kb, model, search=SearchOptions(mode="hybrid", top_k=5))
mark("open knowledge base and model")
question = sys.argv[2]
result = kb.search(question, rag.search_options)
mark("search (loads the embedder)")
evidence = rag.engine.ranker.rank(question, result.matches)
mark("rank sentences")
model.chat("Hi", max_tokens=1)
mark("load the language model")
answer = rag.query(question)
mark("answer (search, ranking, generation)")
print(json.dumps({"marks": marks, "torch": "torch" in sys.modules,
                  "transformers": "transformers" in sys.modules,
                  "output_tokens": answer.usage.output_tokens,
                  "input_tokens": answer.usage.input_tokens}))
"""


def breakdown(db: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", _BREAKDOWN, str(db), QUESTIONS[0]],
                          capture_output=True, text=True, check=True)
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    data["marks"] = [{"step": s, "cpu_s": round(c, 3), "wall_s": round(w, 3)}
                     for s, c, w in data["marks"]]
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warm-runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragloom-ask-") as scratch:
        db = Path(scratch) / "db"
        subprocess.run([_ragloom(), "ingest", str(ROOT / "samples"), "--db", str(db)],
                       capture_output=True, check=True)
        load_before = os.getloadavg()[0]
        parts = breakdown(db)
        cold = fresh(db, args.runs)
        hot = warm(db, args.warm_runs)
        load_after = os.getloadavg()[0]
    print(f"load average (1 min) {load_before:.1f} before, {load_after:.1f} after, "
          f"{os.cpu_count()} CPUs")
    print("| ask | wall p50 | wall p95 | CPU p50 | CPU p95 | runs |")
    print("|---|---|---|---|---|---|")
    for name, row in (("fresh process", cold), ("warm (models loaded)", hot)):
        print(f"| {name} | {row['wall']['p50']:.2f} s | {row['wall']['p95']:.2f} s | "
              f"{row['cpu']['p50']:.2f} s | {row['cpu']['p95']:.2f} s | {row['wall']['n']} |")
    print("\none fresh ask, step by step (torch imported: "
          f"{parts['torch']}, transformers imported: {parts['transformers']})")
    print("| step | CPU | wall |")
    print("|---|---|---|")
    for mark in parts["marks"]:
        print(f"| {mark['step']} | {mark['cpu_s']:.2f} s | {mark['wall_s']:.2f} s |")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "questions": list(QUESTIONS), "fresh": cold, "warm": hot, "breakdown": parts,
        "load_average": [round(load_before, 2), round(load_after, 2)],
        "cpus": os.cpu_count(), "python": sys.version.split()[0]}, indent=2) + "\n")
    print(f"saved to {RESULTS}")


if __name__ == "__main__":
    main()

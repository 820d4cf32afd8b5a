"""Requests per second through the official ``openai`` client, an older commit of the
server against this checkout's, measured in one run.

    .venv/bin/python bench/openai_compat_ab.py [--base c0970fe] [--docs 500] [--rounds 2]

Issue 24 and 26 ask that the new edge policy, tracing (off) and error mapping keep
``vector_stores.search`` throughput within 10 % of the code before them. Timings on
this shared 2-core machine drift with whatever else runs, so the two versions are
measured in alternating rounds (base, head, base, head, ...) on the same data, and
the ratio of their medians is reported, not absolute figures.

The base commit is checked out into a temporary git worktree and its server runs with
``PYTHONPATH`` pointing at that worktree's ``src``; this checkout's server runs with
its own. Both serve the same SciFact abstracts with the bundled MiniLM, the LLM off,
no rate limit; the head's query and result caches are off (``cache_entries=0``),
because the benchmark repeats its queries and the base has no cache.

Prints a table and writes ``bench/results/openai_compat_ab.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _serving import free_port, wait_ready
from openai_compat import MODES, latency, load, throughput

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "openai_compat_ab.json"


def serve(port: int, folder: str, extra: str) -> None:
    """Child process: whichever ``ragloom`` is first on the path, LLM off."""
    import uvicorn

    from ragloom.server.app import create_app
    from ragloom.server.settings import ServerSettings

    options: dict[str, Any] = json.loads(extra)
    settings = ServerSettings(port=port, db=Path(folder) / "ragloom.db", llm="none",
                              rate_limit=0, **options)
    uvicorn.run(create_app(settings), host="127.0.0.1", port=port, log_level="warning",
                access_log=False)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                flags = Path("/proc/cpuinfo").read_text(encoding="utf-8")
                simd = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "-"
                return f"{line.split(':', 1)[1].strip()} ({simd})"
    except OSError:
        pass
    return platform.processor() or "unknown"


def measure(label: str, src: Path, extra: dict[str, Any], docs: list[tuple[str, str]],
            queries: list[str], seconds: float) -> dict[str, Any]:
    import openai

    folder = tempfile.mkdtemp(prefix=f"ragloom-ab-{label}-")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(src)}
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), folder,
                               json.dumps(extra)], env=env, cwd=folder)
    try:
        wait_ready(url, server)
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="bench", max_retries=0)
        file_ids = [client.files.create(file=(name, text.encode("utf-8")),
                                        purpose="assistants").id for name, text in docs]
        vs = client.vector_stores.create(name="scifact")
        batch = client.vector_stores.file_batches.create_and_poll(
            vector_store_id=vs.id, file_ids=file_ids, poll_interval_ms=100)
        assert batch.file_counts.completed == len(docs), batch.file_counts
        row: dict[str, Any] = {}
        for mode in MODES:
            timing = latency(client, vs.id, queries, mode, server.pid)
            timing["rps_8"] = round(throughput(url, vs.id, queries, mode, 8, seconds), 1)
            row[mode] = timing
        return row
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="c0970fe", help="the commit to compare against")
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--serve", nargs=3, metavar=("PORT", "FOLDER", "EXTRA"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1], args.serve[2])
        return

    base_sha = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT,
                              check=True, capture_output=True, text=True).stdout.strip()
    head_sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              check=True, capture_output=True, text=True).stdout.strip()
    tree = Path(tempfile.mkdtemp(prefix="ragloom-ab-base-")) / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), args.base], cwd=ROOT,
                   check=True, capture_output=True)
    docs, queries = load(args.docs, args.queries)
    runs: dict[str, list[dict[str, Any]]] = {"base": [], "head": []}
    load_start = os.getloadavg()
    try:
        for round_no in range(args.rounds):
            for label, src, extra in (("base", tree / "src", {}),
                                      ("head", ROOT / "src", {"cache_entries": 0})):
                row = measure(label, src, extra, docs, queries, args.seconds)
                runs[label].append(row)
                print(f"round {round_no + 1} {label}: " + ", ".join(
                    f"{m} {row[m]['rps_8']} req/s, p50 {row[m]['p50_ms']} ms" for m in MODES),
                    flush=True)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT,
                       capture_output=True)
    table: dict[str, dict[str, float]] = {}
    for mode in MODES:
        base_rps = statistics.median(r[mode]["rps_8"] for r in runs["base"])
        head_rps = statistics.median(r[mode]["rps_8"] for r in runs["head"])
        base_p50 = statistics.median(r[mode]["p50_ms"] for r in runs["base"])
        head_p50 = statistics.median(r[mode]["p50_ms"] for r in runs["head"])
        table[mode] = {"base_rps_8": base_rps, "head_rps_8": head_rps,
                       "rps_ratio": round(head_rps / base_rps, 3),
                       "base_p50_ms": base_p50, "head_p50_ms": head_p50}
    cpu = cpu_model()
    print(f"\n{args.docs} SciFact abstracts, {args.rounds} alternating rounds, 8 clients, "
          f"{os.cpu_count()} cores: {cpu}; load avg {load_start[0]:.1f} -> "
          f"{os.getloadavg()[0]:.1f}\n")
    print(f"{'mode':8} {base_sha + ' rps':>12} {head_sha + ' rps':>12} {'ratio':>6} "
          f"{'base p50':>9} {'head p50':>9}")
    for mode, row in table.items():
        print(f"{mode:8} {row['base_rps_8']:12.1f} {row['head_rps_8']:12.1f} "
              f"{row['rps_ratio']:6.2f} {row['base_p50_ms']:9.1f} {row['head_p50_ms']:9.1f}")
    result = {"base": base_sha, "head": head_sha, "docs": args.docs, "rounds": args.rounds,
              "cpu": cpu, "cores": os.cpu_count(), "load_avg_start": load_start,
              "load_avg_end": os.getloadavg(), "modes": table, "runs": runs}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

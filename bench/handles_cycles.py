"""Create/delete cycles against a real ``ragloom serve``: file descriptors and memory
stay flat.

Each cycle creates a knowledge base (``/api``) and ingests a text into it, creates a
vector store (``/v1``, the official ``openai`` client) and attaches a file, searches
both, then deletes both. The server process's open file descriptors and RSS
(psutil) are sampled every ``--every`` cycles; a table is printed and the samples
are written as JSON.

    python bench/handles_cycles.py                 # 300 cycles
    python bench/handles_cycles.py --cycles 30 --out /tmp/cycles.json

The server runs with fake models (``fake:hashing-64``, ``fake:echo``): the figures
are about handles, not models.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

from _serving import free_port, wait_ready

HERE = Path(__file__).resolve().parent


def cycle(http: httpx.Client, oai: Any, n: int) -> None:
    kb = http.post("/api/knowledge-bases", json={"name": f"cycle-{n}"}).json()
    job = http.post(f"/api/knowledge-bases/{kb['id']}/documents/text?wait=30",
                    json={"text": f"Cycle {n} keeps notes about ships.", "source": "a"}).json()
    assert job["status"] == "completed", job
    store = oai.vector_stores.create(name=f"cycle-{n}")
    file = oai.files.create(file=(f"c{n}.txt", f"Cycle {n} notes about ships.".encode()),
                            purpose="assistants")
    done = oai.vector_stores.files.create_and_poll(vector_store_id=store.id, file_id=file.id,
                                                   poll_interval_ms=20)
    assert done.status == "completed", done.last_error
    hits = http.post("/api/search", json={"query": "ships", "knowledge_bases": [kb["id"]],
                                          "mode": "keyword"}).json()
    assert hits["matches"]
    assert oai.vector_stores.search(store.id, query="ships").data
    assert http.delete(f"/api/knowledge-bases/{kb['id']}").status_code == 200
    assert oai.vector_stores.delete(store.id).deleted
    oai.files.delete(file.id)


def main() -> None:
    import openai

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--every", type=int, default=25)
    parser.add_argument("--max-open-collections", type=int, default=64)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "handles_cycles.json")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ragloom-cycles-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (folder / "serve.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "ragloom", "serve", "--port", str(port), "--db",
         str(folder / "kb"), "--embedder", "fake:hashing-64", "--llm", "fake:echo",
         "--max-open-collections", str(args.max_open_collections), "--rate-limit", "0"],
        stdout=log, stderr=subprocess.STDOUT)
    samples: list[dict[str, Any]] = []
    try:
        wait_ready(url, server)
        process = psutil.Process(server.pid)
        oai = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        with httpx.Client(base_url=url, timeout=60) as http:
            started = time.perf_counter()
            for n in range(args.cycles + 1):
                if n % args.every == 0 or n == args.cycles:
                    samples.append({"cycle": n, "fds": process.num_fds(),
                                    "rss_mb": round(process.memory_info().rss / 2**20, 1),
                                    "seconds": round(time.perf_counter() - started, 1)})
                if n < args.cycles:
                    cycle(http, oai, n)
    finally:
        server.terminate()
        server.wait(20)
        log.close()
    print(f"{'cycle':>6} {'fds':>5} {'rss MB':>8} {'seconds':>8}")
    for row in samples:
        print(f"{row['cycle']:>6} {row['fds']:>5} {row['rss_mb']:>8} {row['seconds']:>8}")
    first = samples[1] if len(samples) > 1 else samples[0]  # after warm-up
    result = {"cycles": args.cycles, "max_open_collections": args.max_open_collections,
              "samples": samples, "fds_growth_after_warmup": samples[-1]["fds"] - first["fds"],
              "rss_growth_mb_after_warmup": round(samples[-1]["rss_mb"] - first["rss_mb"], 1)}
    print(f"after warm-up: fds {result['fds_growth_after_warmup']:+d}, "
          f"RSS {result['rss_growth_mb_after_warmup']:+.1f} MB")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()

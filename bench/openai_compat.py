"""The OpenAI-compatible API against OGX 1.5.0, measured the same way: the official
``openai`` client over HTTP, 1,000 SciFact abstracts, the bundled MiniLM.

    .venv/bin/python bench/openai_compat.py [--docs 1000] [--queries 200] [--seconds 10]

Starts ``create_app`` (LLM off) under uvicorn in a child process on 127.0.0.1, then
from this process:

1. uploads the abstracts as files (title, blank line, text) and attaches them with
   one file batch; "attach" is the time from the batch request to its completion
   (what OGX's 230 s measures), reported as documents per second;
2. ``vector_stores.search`` latency p50/p99 per mode (vector, keyword, hybrid), one
   client, one request at a time;
3. requests per second with 8 concurrent clients (threads, one client each) per mode.

Then, in this process and on the same data, the library itself: ``kb.ingest`` of the
first 100 abstracts and ``kb.search`` per mode, so the API's overhead over the
library is measured in the same run whatever else loads the machine (the OGX
figures were measured on a quiet machine; compare ratios when the load is high).

Last, with the server stopped, the model alone: one query's embedding CPU and the
CPU to embed every stored chunk. With the client's CPU per request they bound what
any server could reach on these cores (requests/s if it did nothing but embed the
query; documents/s if ingesting were nothing but embedding), printed beside the
issue's 5x-OGX targets.

Prints a table next to the OGX figures from the issue and writes
bench/results/openai_compat.json. Client and server share this machine's cores, as
they did for OGX.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _serving import free_port, wait_ready

ROOT = Path(__file__).resolve().parents[1]
SCIFACT = ROOT.parent / "shared" / "data" / "beir" / "scifact"
RESULTS = ROOT / "bench" / "results" / "openai_compat.json"
MODES = ("vector", "keyword", "hybrid")
# OGX 1.5.0 on this machine (issue #9): p50 ms and req/s with 8 clients.
OGX = {
    "attach_docs_per_s": 1000 / 230,
    "p50_ms": {"vector": 32.5, "keyword": 52.0, "hybrid": 74.9},
    "p50_note": "vector: faiss (sqlite-vec 43.5 ms); keyword and hybrid: sqlite-vec",
    "rps_8": {"vector": 33.8, "keyword": 20.9, "hybrid": 15.3},
    "rps_note": "vector: faiss; keyword: sqlite-vec vector figure (none published for "
                "keyword); hybrid: sqlite-vec",
}


def serve(port: int, folder: str) -> None:
    """Child process: the real server app, LLM off, on 127.0.0.1:port."""
    import uvicorn

    from ragloom.server.app import create_app
    from ragloom.server.settings import ServerSettings

    settings = ServerSettings(port=port, db=Path(folder) / "ragloom.db", llm="none",
                              rate_limit=0)
    uvicorn.run(create_app(settings), host="127.0.0.1", port=port, log_level="warning",
                access_log=False)


def load(limit: int, queries: int) -> tuple[list[tuple[str, str]], list[str]]:
    docs = []
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if len(docs) >= limit:
                break
            record = json.loads(line)
            docs.append((f"{record['_id']}.txt",
                         f"{record.get('title', '')}\n\n{record.get('text', '')}"))
    texts = []
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if len(texts) >= queries:
                break
            texts.append(json.loads(line)["text"])
    return docs, texts


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def cpu_seconds(pid: int) -> float:
    import psutil

    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def latency(client: Any, vs_id: str, queries: list[str], mode: str,
            server_pid: int) -> dict[str, float]:
    """Wall-clock latency, and the CPU time each request costs the server and the
    client (CPU time hardly changes with the machine's load; wall time does)."""
    for query in queries[:10]:  # warm: keyword index, matrix, caches
        client.vector_stores.search(vs_id, query=query, extra_body={"search_mode": mode})
    times = []
    server_before, client_before = cpu_seconds(server_pid), time.process_time()
    for query in queries:
        started = time.perf_counter()
        client.vector_stores.search(vs_id, query=query, extra_body={"search_mode": mode})
        times.append((time.perf_counter() - started) * 1000)
    server_cpu = (cpu_seconds(server_pid) - server_before) / len(queries) * 1000
    client_cpu = (time.process_time() - client_before) / len(queries) * 1000
    return {"p50_ms": round(statistics.median(times), 2),
            "p99_ms": round(percentile(times, 0.99), 2),
            "server_cpu_ms": round(server_cpu, 2), "client_cpu_ms": round(client_cpu, 2)}


def throughput(url: str, vs_id: str, queries: list[str], mode: str, clients: int,
               seconds: float) -> float:
    import openai

    counts = [0] * clients
    stop = time.monotonic() + seconds
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="bench", max_retries=0)
        n = index
        try:
            while time.monotonic() < stop:
                client.vector_stores.search(vs_id, query=queries[n % len(queries)],
                                            extra_body={"search_mode": mode})
                counts[index] += 1
                n += clients
        except BaseException as exc:
            errors.append(exc)

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return sum(counts) / (time.monotonic() - started)


def library(folder: str, vs_id: str, docs: list[tuple[str, str]], queries: list[str]
            ) -> dict[str, Any]:
    """The same work through the library in this process: ingest rate and search p50."""
    from ragloom.config import build_embedder, load_settings
    from ragloom.knowledge_base import VectorKnowledgeBase
    from ragloom.retrieval.options import SearchOptions
    from ragloom.stores.sqlite import SqliteVectorStore
    from ragloom.types import TextDocument

    embedder = build_embedder(load_settings({}))
    embedder.embed_query("warm up")
    sample = [TextDocument.create(text, source=name) for name, text in docs[:100]]
    scratch = VectorKnowledgeBase(SqliteVectorStore(Path(folder) / "library.sqlite"), embedder)
    started = time.perf_counter()
    scratch.ingest(sample)
    ingest_rate = len(sample) / (time.perf_counter() - started)
    store = SqliteVectorStore(Path(folder) / "openai-vectors.sqlite", collection=f"vs:{vs_id}")
    kb = VectorKnowledgeBase(store, embedder)
    p50 = {}
    for mode in MODES:
        options = SearchOptions(mode=mode, top_k=50)  # type: ignore[arg-type]
        for query in queries[:10]:
            kb.search(query, options)
        times = []
        for query in queries:
            begun = time.perf_counter()
            kb.search(query, options)
            times.append((time.perf_counter() - begun) * 1000)
        p50[mode] = round(statistics.median(times), 2)
    return {"ingest_docs_per_s": round(ingest_rate, 1), "search_p50_ms": p50}


def ceilings(folder: str, vs_id: str, queries: list[str]) -> dict[str, float]:
    """What the model alone costs, measured here after the server has stopped: the
    query embedding's CPU per query (one thread, as under concurrent load) and the CPU
    to embed every chunk the attach stored. No server can answer or ingest faster on
    this machine than these allow (see :func:`limits`)."""
    import sqlite3

    from ragloom.embeddings.onnx import OnnxEmbedder

    embedder = OnnxEmbedder(solo_query_threads=0)  # the default model, one thread a query
    for query in queries[:10]:
        embedder.embed_query(query)
    started = time.process_time()
    for query in queries:
        embedder.embed_query(query)
    query_ms = (time.process_time() - started) / len(queries) * 1000
    with sqlite3.connect(Path(folder) / "openai-vectors.sqlite") as conn:
        texts = [row[0] for row in conn.execute(
            "SELECT c.text FROM chunks c JOIN collections k ON k.id = c.collection_id "
            "WHERE k.name = ? ORDER BY c.pk", (f"vs:{vs_id}",))]
    started = time.process_time()
    embedder.encode_documents(texts)
    return {"query_embed_cpu_ms": round(query_ms, 2), "chunks": len(texts),
            "chunk_embed_cpu_s": round(time.process_time() - started, 1)}


def limits(model: dict[str, float], modes: dict[str, Any], docs: int) -> dict[str, Any]:
    """Upper bounds on this machine's cores, server and client sharing them as in the
    run: requests/s if the server spent nothing but the query embedding (keyword: if it
    spent nothing at all), and documents/s if ingestion were nothing but embedding."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2
    rps = {}
    for mode, row in modes.items():
        per_request = row["client_cpu_ms"] + (model["query_embed_cpu_ms"]
                                              if mode != "keyword" else 0.0)
        rps[mode] = round(cores * 1000 / per_request, 1)
    return {"cores": cores, "rps_8": rps,
            "attach_docs_per_s": round(docs / (model["chunk_embed_cpu_s"] / cores), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--serve", nargs=2, metavar=("PORT", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1])
        return

    load_before = os.getloadavg()
    docs, queries = load(args.docs, args.queries)
    folder = tempfile.mkdtemp(prefix="ragloom-bench-oai-")
    try:
        run(args, folder, docs, queries, load_before)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(args: argparse.Namespace, folder: str, docs: list[tuple[str, str]],
        queries: list[str], load_before: tuple[float, float, float]) -> None:
    import openai

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), folder],
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        wait_ready(url, server)
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="bench", max_retries=0)
        started = time.perf_counter()
        file_ids = [client.files.create(file=(name, text.encode("utf-8")),
                                        purpose="assistants").id for name, text in docs]
        upload_s = time.perf_counter() - started
        vs = client.vector_stores.create(name="scifact")
        started = time.perf_counter()
        batch = client.vector_stores.file_batches.create_and_poll(
            vector_store_id=vs.id, file_ids=file_ids, poll_interval_ms=100)
        attach_s = time.perf_counter() - started
        assert batch.file_counts.completed == len(docs), batch.file_counts
        probe = client.vector_stores.search(vs.id, query=docs[0][1][:200])
        assert probe.data[0].file_id == file_ids[0], "search must name the uploaded file"
        modes = {}
        for mode in MODES:
            row: dict[str, Any] = latency(client, vs.id, queries, mode, server.pid)
            row["rps_8"] = round(throughput(url, vs.id, queries, mode, 8, args.seconds), 1)
            row["rps_1"] = round(throughput(url, vs.id, queries, mode, 1, args.seconds / 2), 1)
            modes[mode] = row
    finally:
        server.terminate()
        server.wait(30)
    lib = library(folder, vs.id, docs, queries)
    model = ceilings(folder, vs.id, queries)
    bounds = limits(model, modes, len(docs))

    result = {
        "docs": len(docs), "queries": len(queries), "cpu_count": os.cpu_count(),
        "load_avg_start": load_before, "load_avg": os.getloadavg(), "upload_s": round(upload_s, 2),
        "attach_s": round(attach_s, 2), "attach_docs_per_s": round(len(docs) / attach_s, 1),
        "upload_and_attach_docs_per_s": round(len(docs) / (upload_s + attach_s), 1),
        "modes": modes, "library": lib, "model": model, "limits": bounds, "ogx": OGX,
    }
    ratio_ingest = result["attach_docs_per_s"] / OGX["attach_docs_per_s"]
    print(f"\n{len(docs)} SciFact abstracts through the official client "
          f"(load avg {load_before[0]:.1f} at the start, {result['load_avg'][0]:.1f} at the "
          f"end, on {os.cpu_count()} cores)\n")
    print(f"upload {upload_s:.1f} s; attach {attach_s:.1f} s = "
          f"{result['attach_docs_per_s']} docs/s (OGX {OGX['attach_docs_per_s']:.2f}; "
          f"{ratio_ingest:.1f}x); the library alone in this run: "
          f"{lib['ingest_docs_per_s']} docs/s\n")
    print(f"{'mode':8} {'p50 ms':>8} {'p99 ms':>8} {'lib p50':>8} {'OGX p50':>8} "
          f"{'srv cpu':>8} {'cli cpu':>8} {'rps@1':>7} {'rps@8':>7} {'OGX rps@8':>9} "
          f"{'ratio':>6}")
    for mode, row in modes.items():
        ogx_rps = OGX["rps_8"][mode]  # type: ignore[index]
        print(f"{mode:8} {row['p50_ms']:8.1f} {row['p99_ms']:8.1f} "
              f"{lib['search_p50_ms'][mode]:8.1f} "
              f"{OGX['p50_ms'][mode]:8.1f} {row['server_cpu_ms']:8.1f} "  # type: ignore[index]
              f"{row['client_cpu_ms']:8.1f} "
              f"{row['rps_1']:7.1f} "
              f"{row['rps_8']:7.1f} {ogx_rps:9.1f} {row['rps_8'] / ogx_rps:5.1f}x")
    print(f"\nthe model alone, measured after the server stopped: a query "
          f"{model['query_embed_cpu_ms']} ms CPU (one thread); the {model['chunks']} chunks "
          f"{model['chunk_embed_cpu_s']} CPU-s. On {bounds['cores']} cores shared with the "
          "client, no server could pass:")
    for mode, ceiling in bounds["rps_8"].items():
        target = 5 * OGX["rps_8"][mode]  # type: ignore[index]
        print(f"  {mode:8} {ceiling:7.1f} req/s (5x OGX is {target:.1f}; this run "
              f"{modes[mode]['rps_8']}, {modes[mode]['rps_8'] / ceiling:.0%} of the bound)")
    print(f"  attach   {bounds['attach_docs_per_s']:7.1f} docs/s (5x OGX is "
          f"{5 * OGX['attach_docs_per_s']:.1f}; this run {result['attach_docs_per_s']})")  # type: ignore[operator]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

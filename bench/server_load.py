"""Server under load: search latency against the library, and writers with readers.

    .venv/bin/python bench/server_load.py [--duration 600] [--docs 5183] [--queries 200]

1. Builds the SciFact knowledge base (5,183 abstracts, title + text, the default
   splitter and the bundled MiniLM) in a fresh folder through the library, with the
   benchmarks' embedding cache (bench/results/cache/, shared with
   retrieval_scifact.py), and registers it as the default tenant's ``scifact``.
   Then starts ``ragloom serve`` (no language model, no rate limit) on that folder
   and uploads ``--ingest-docs`` more abstracts through the native API, one file
   each, to measure documents/s of ingestion through the API (embedding included).
2. Hybrid search latency (p50, p99) and requests/s at concurrency 1, 8 and 32, over
   HTTP and through the library (the same knowledge base file, the same embedder and
   SearchOptions, in this process) in the same run. HTTP overhead = HTTP p50 /
   library p50 - 1 at concurrency 1, where each query goes, in turn, through httpx
   (the client of ``ragloom --server`` and of the ``openai`` package), through the
   standard library's ``http.client`` (one kept-alive connection) and through the
   library, so that drifts of the machine's speed hit all three alike. The two
   clients differ by about a millisecond of their own work per request (httpx
   builds more objects), which is the client's cost, not the server's.
3. Mixed load for ``--duration`` seconds: 4 writers upload new documents (each with
   a unique marker word) while 32 readers search. Counts every status, every 5xx and
   every "database is locked" (in responses and in the server's log); at the end
   waits for the jobs and checks that every uploaded document is listed and found by
   a keyword search for its marker.

Prints a table and writes bench/results/server_load.json; with ``--latency-only``
just step 2 runs and the result goes to bench/results/server_load_latency.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from _serving import free_port, wait_ready

ROOT = Path(__file__).resolve().parents[1]
SCIFACT = ROOT.parent / "shared" / "data" / "beir" / "scifact"
RESULTS = ROOT / "bench" / "results" / "server_load.json"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def start_server(folder: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "ragloom", "serve", "--db", str(folder / "ragloom.db"),
               "--port", str(port), "--llm", "none", "--rate-limit", "0",
               "--max-upload-mb", "200"]
    handle = log.open("wb")
    process = subprocess.Popen(command, cwd=folder, stdout=handle, stderr=subprocess.STDOUT)
    try:
        wait_ready(f"http://127.0.0.1:{port}", process)
    except RuntimeError as exc:
        process.kill()
        raise RuntimeError(f"{exc}:\n{log.read_text()[-3000:]}") from exc
    return process


def load_corpus(limit: int) -> list[tuple[str, str]]:
    docs = []
    with (SCIFACT / "corpus.jsonl").open() as handle:
        for line in handle:
            row = json.loads(line)
            docs.append((row["_id"], f"{row.get('title', '')}\n\n{row.get('text', '')}".strip()))
            if len(docs) >= limit:
                break
    return docs


def load_queries(limit: int) -> list[str]:
    with (SCIFACT / "queries.jsonl").open() as handle:
        return [json.loads(line)["text"] for line in handle][:limit]


def wait_batches(client: httpx.Client, batch_ids: list[str], timeout: float = 3600) -> Counter[str]:
    counts: Counter[str] = Counter()
    deadline = time.monotonic() + timeout
    for batch_id in batch_ids:
        while True:
            batch = client.get(f"/api/batches/{batch_id}").json()
            if batch["status"] != "in_progress" or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        counts.update(j["status"] for j in batch["jobs"])
    return counts


def prebuild(folder: Path) -> dict[str, Any]:
    """SciFact into the server's files through the library (cached embeddings)."""
    import hashlib

    from ragloom.evaluation.beir import load_beir
    from ragloom.evaluation.cache import CachedEmbedder
    from ragloom.knowledge_base import VectorKnowledgeBase, default_chunker
    from ragloom.registry import DEFAULT_EMBEDDER, make_embedder
    from ragloom.server.auth import KeyStore
    from ragloom.server.catalog import Catalog, SharedModels
    from ragloom.server.db import ServerDatabase
    from ragloom.stores.sqlite import SqliteVectorStore

    dataset = load_beir(SCIFACT)
    embedder = make_embedder(DEFAULT_EMBEDDER)
    chunker = default_chunker(embedder)
    key = hashlib.sha256(f"{chunker.settings_key()}|{embedder.name}".encode()).hexdigest()[:12]
    cached = CachedEmbedder(embedder, ROOT / "bench" / "results" / "cache" / f"scifact-{key}")
    cached.load()
    database = ServerDatabase(folder / "server.db")
    tenant = KeyStore(database).tenant("default")
    assert tenant is not None
    record = Catalog(database, folder / "ragloom.db",
                     SharedModels(DEFAULT_EMBEDDER, "none", None)).create(tenant, "scifact")
    database.close()
    started = time.perf_counter()
    store = SqliteVectorStore(folder / "ragloom.db", collection=record.collection)
    library = VectorKnowledgeBase(store, cached, chunker, name="scifact")
    library.ingest(dataset.documents())
    if cached.misses:
        cached.save()  # embed_documents keeps new rows in memory only
    stats = store.stats()
    store.close()
    return {"documents": stats.document_count, "chunks": stats.chunk_count,
            "kb_id": record.id, "seconds": round(time.perf_counter() - started, 1),
            "embedded_now": cached.misses}


def ingest_through_api(client: httpx.Client, docs: list[tuple[str, str]],
                       batch_size: int = 100) -> dict[str, Any]:
    client.post("/api/knowledge-bases", json={"name": "uploads"}).raise_for_status()
    started = time.perf_counter()
    batch_ids = []
    for start in range(0, len(docs), batch_size):
        files = [("files", (f"{doc_id}.txt", text.encode(), "text/plain"))
                 for doc_id, text in docs[start:start + batch_size]]
        response = client.post("/api/knowledge-bases/uploads/documents", files=files)
        response.raise_for_status()
        batch_ids.append(response.json()["id"])
    accepted = time.perf_counter() - started
    counts = wait_batches(client, batch_ids)
    seconds = time.perf_counter() - started
    info = client.get("/api/knowledge-bases/uploads").json()
    return {"documents": len(docs), "seconds": round(seconds, 1),
            "upload_seconds": round(accepted, 1),
            "documents_per_second": round(len(docs) / seconds, 2), "jobs": dict(counts),
            "stored_documents": info["document_count"], "chunks": info["chunk_count"]}


def run_concurrent(call: Callable[[str], None], queries: list[str], concurrency: int,
                   rounds: int = 1) -> dict[str, Any]:
    latencies: list[float] = []
    work = [q for _ in range(rounds) for q in queries]
    lock = threading.Lock()

    def one(query: str) -> None:
        started = time.perf_counter()
        call(query)
        elapsed = time.perf_counter() - started
        with lock:
            latencies.append(elapsed)

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, work))
    return summary(latencies, concurrency, time.perf_counter() - started)


def summary(latencies: list[float], concurrency: int, wall: float) -> dict[str, Any]:
    """p50, p99 and requests/s of one level's request times (seconds)."""
    return {"concurrency": concurrency, "requests": len(latencies),
            "p50_ms": round(percentile(latencies, 50) * 1000, 2),
            "p99_ms": round(percentile(latencies, 99) * 1000, 2),
            "requests_per_second": round(len(latencies) / wall, 1)}


def latency_table(url: str, folder: Path, kb_id: str, queries: list[str]) -> dict[str, Any]:
    from ragloom.config import build_embedder, load_settings
    from ragloom.knowledge_base import VectorKnowledgeBase
    from ragloom.retrieval.options import SearchOptions
    from ragloom.stores.sqlite import SqliteVectorStore

    store = SqliteVectorStore(folder / "ragloom.db", collection=kb_id)
    embedder = build_embedder(load_settings({}))
    library = VectorKnowledgeBase(store, embedder, name="scifact")
    # As `ragloom serve` does at start-up: without it the first timed library queries
    # run on FTS5 while the in-memory keyword copy builds in the background.
    store.warm_keyword_index()
    options = SearchOptions()
    local = threading.local()

    def client() -> httpx.Client:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=url, timeout=60)
        return local.client  # type: ignore[no-any-return]

    def over_http(query: str) -> None:
        response = client().post("/api/search", json={"query": query,
                                                      "knowledge_bases": ["scifact"]})
        if response.status_code != 200:
            raise RuntimeError(response.text)

    def in_library(query: str) -> None:
        library.search(query, options)

    stdlib = StdlibClient(url)

    def over_stdlib(query: str) -> None:
        stdlib.post_json("/api/search", {"query": query, "knowledge_bases": ["scifact"]})

    for query in queries[:20]:  # warm all sides: model, matrix, keyword index
        in_library(query)
        over_http(query)
        over_stdlib(query)
    first = one_client({"http": over_http, "http_stdlib": over_stdlib,
                        "library": in_library}, queries)
    rows = [{"concurrency": 1, **first}]
    for concurrency in (8, 32):
        # Interleaved per level so machine load drifts hit both sides alike.
        http = run_concurrent(over_http, queries, concurrency, 2)
        lib = run_concurrent(in_library, queries, concurrency, 2)
        rows.append({"concurrency": concurrency, "http": http, "library": lib})
    store.close()
    stdlib.close()
    lib_p50 = first["library"]["p50_ms"]
    return {"rows": rows,
            "http_overhead_at_1": round(first["http"]["p50_ms"] / lib_p50 - 1, 3),
            "http_overhead_at_1_stdlib": round(first["http_stdlib"]["p50_ms"] / lib_p50 - 1, 3)}


class StdlibClient:
    """One kept-alive ``http.client`` connection posting JSON (raises on non-200)."""

    def __init__(self, url: str) -> None:
        import http.client
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        self._connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1",
                                                      parts.port, timeout=60)

    def post_json(self, path: str, body: dict[str, Any]) -> bytes:
        self._connection.request("POST", path, body=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
        response = self._connection.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(data.decode(errors="replace"))
        return data

    def close(self) -> None:
        self._connection.close()


def one_client(calls: dict[str, Callable[[str], None]], queries: list[str]
               ) -> dict[str, dict[str, Any]]:
    """Each query through every call, one at a time, in a rotating order."""
    latencies: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for number, query in enumerate(queries):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.perf_counter()
            calls[name](query)
            latencies[name].append(time.perf_counter() - started)
    # One request at a time: each side's wall time is the sum of its own requests.
    return {name: summary(values, 1, sum(values)) for name, values in latencies.items()}


def mixed_load(url: str, corpus: list[tuple[str, str]], queries: list[str], duration: float,
               writers: int = 4, readers: int = 32) -> dict[str, Any]:
    statuses: Counter[str] = Counter()
    locked = 0
    uploaded: list[tuple[str, str]] = []
    batches: list[str] = []
    read_latencies: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + duration

    def record(response: httpx.Response) -> None:
        nonlocal locked
        with lock:
            statuses[str(response.status_code)] += 1
            if "database is locked" in response.text:
                locked += 1

    def writer(number: int) -> None:
        # A client that uploads a batch, waits for it, uploads the next: the offered
        # load follows what the worker ingests, as real uploaders' polling does.
        client = httpx.Client(base_url=url, timeout=120)
        count = 0
        while time.monotonic() < stop:
            files, names = [], []
            for _ in range(5):
                marker = f"zqmarker{number}x{count}"
                _, text = corpus[(number * 997 + count) % len(corpus)]
                name = f"load-{number}-{count}.txt"
                files.append(("files", (name, f"{marker}. {text[:300]}".encode(),
                                        "text/plain")))
                names.append((name, marker))
                count += 1
            response = client.post("/api/knowledge-bases/scifact/documents", files=files)
            record(response)
            if response.status_code != 202:
                continue
            batch_id = response.json()["id"]
            with lock:
                uploaded.extend(names)
                batches.append(batch_id)
            while time.monotonic() < stop:
                polled = client.get(f"/api/batches/{batch_id}")
                record(polled)
                if polled.status_code != 200 or polled.json()["status"] != "in_progress":
                    break
                time.sleep(0.5)

    def reader(number: int) -> None:
        client = httpx.Client(base_url=url, timeout=120)
        position = number
        while time.monotonic() < stop:
            query = queries[position % len(queries)]
            position += readers
            started = time.perf_counter()
            response = client.post("/api/search", json={"query": query,
                                                        "knowledge_bases": ["scifact"]})
            elapsed = time.perf_counter() - started
            record(response)
            with lock:
                read_latencies.append(elapsed)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    threads += [threading.Thread(target=reader, args=(n,)) for n in range(readers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client = httpx.Client(base_url=url, timeout=120)
    drained_from = time.perf_counter()
    jobs = wait_batches(client, batches)
    drain = time.perf_counter() - drained_from
    listed: set[str] = set()
    after: str | None = None
    while True:  # the list comes a page (at most 1,000) at a time
        page = client.get("/api/knowledge-bases/scifact/documents",
                          params={"limit": 1000, **({"after": after} if after else {})}).json()
        listed.update(d["source"] for d in page["data"])
        if not page.get("has_more"):
            break
        after = page["last"]
    missing_listed = [name for name, _ in uploaded if name not in listed]
    not_found = []
    for name, marker in uploaded:
        response = client.post("/api/search", json={"query": marker, "mode": "keyword",
                                                    "top_k": 1, "knowledge_bases": ["scifact"]})
        record(response)
        matches = response.json().get("matches", [])
        if not matches or matches[0]["source"] != name:
            not_found.append(name)
    return {"duration_s": duration, "writers": writers, "readers": readers,
            "statuses": dict(statuses), "server_errors": sum(
                v for k, v in statuses.items() if k.startswith("5")),
            "database_locked_in_responses": locked, "uploaded_documents": len(uploaded),
            "jobs": dict(jobs), "drain_seconds": round(drain, 1),
            "missing_from_list": len(missing_listed), "not_found_by_search": len(not_found),
            "search_p50_ms": round(percentile(read_latencies, 50) * 1000, 1),
            "search_p99_ms": round(percentile(read_latencies, 99) * 1000, 1),
            "searches_per_second": round(len(read_latencies) / duration, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=600.0,
                        help="seconds of mixed load (writers + readers)")
    parser.add_argument("--ingest-docs", type=int, default=200,
                        help="abstracts uploaded through the API to time ingestion")
    parser.add_argument("--queries", type=int, default=200, help="queries per latency level")
    parser.add_argument("--latency-only", action="store_true",
                        help="only the latency table (step 2), into server_load_latency.json")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ragloom-load-"))
    try:
        run(args, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # 65 MB of databases and logs


def run(args: argparse.Namespace, folder: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = folder / "server.log"
    load_before = os.getloadavg()
    built = prebuild(folder)
    print(f"built scifact: {built['documents']} documents, {built['chunks']} chunks "
          f"({built['embedded_now']} embedded now) in {built['seconds']} s", flush=True)
    process = start_server(folder, port, log)
    try:
        client = httpx.Client(base_url=url, timeout=600)
        queries = load_queries(args.queries)
        latency = latency_table(url, folder, built["kb_id"], queries)
        print(f"latency done; overhead at 1: {latency['http_overhead_at_1']:.1%} (httpx), "
              f"{latency['http_overhead_at_1_stdlib']:.1%} (http.client)", flush=True)
        if args.latency_only:
            print_latency(latency)
            write(RESULTS.with_name("server_load_latency.json"),
                  {"machine_load_before": [round(x, 2) for x in load_before],
                   "machine_load_after": [round(x, 2) for x in os.getloadavg()],
                   "prebuilt": built, "latency": latency})
            return
        corpus = load_corpus(5183)
        mixed = mixed_load(url, corpus, load_queries(1000), args.duration)
        print("mixed load done", flush=True)
        ingestion = ingest_through_api(client, corpus[-args.ingest_docs:])
        print(f"ingested {ingestion['stored_documents']} documents through the API in "
              f"{ingestion['seconds']} s: {ingestion['documents_per_second']} docs/s",
              flush=True)
    finally:
        process.terminate()
        process.wait(30)
    server_log = log.read_text(errors="replace")
    mixed["database_locked_in_log"] = server_log.count("database is locked")
    result = {"machine_load_before": [round(x, 2) for x in load_before],
              "machine_load_after": [round(x, 2) for x in os.getloadavg()],
              "prebuilt": built, "ingestion_through_api": ingestion, "latency": latency,
              "mixed": mixed}
    print_table(result)
    write(RESULTS, result)


def write(path: Path, result: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {path}")


def print_latency(latency: dict[str, Any]) -> None:
    print("\nhybrid search on SciFact, default SearchOptions (ms, requests/s)")
    print(f"{'clients':>8} {'client':>12} {'http p50':>9} {'http p99':>9} {'http r/s':>9} "
          f"{'lib p50':>8} {'lib p99':>8} {'lib r/s':>8}")
    for row in latency["rows"]:
        lib = row["library"]
        for key, client in (("http", "httpx"), ("http_stdlib", "http.client")):
            if key not in row:
                continue
            http = row[key]
            print(f"{row['concurrency']:>8} {client:>12} {http['p50_ms']:>9} "
                  f"{http['p99_ms']:>9} {http['requests_per_second']:>9} {lib['p50_ms']:>8} "
                  f"{lib['p99_ms']:>8} {lib['requests_per_second']:>8}")
    print(f"HTTP overhead at 1 client (p50): {latency['http_overhead_at_1']:.1%} with httpx, "
          f"{latency['http_overhead_at_1_stdlib']:.1%} with http.client")


def print_table(result: dict[str, Any]) -> None:
    print_latency(result["latency"])
    api = result["ingestion_through_api"]
    print(f"ingestion through the API: {api['documents']} abstracts in {api['seconds']} s "
          f"= {api['documents_per_second']} docs/s (jobs {api['jobs']})")
    mixed = result["mixed"]
    print(f"\nmixed load {mixed['duration_s']:.0f} s, {mixed['writers']} writers + "
          f"{mixed['readers']} readers: statuses {mixed['statuses']}")
    print(f"5xx {mixed['server_errors']}, 'database is locked' "
          f"{mixed['database_locked_in_responses']} in responses / "
          f"{mixed['database_locked_in_log']} in log; uploaded {mixed['uploaded_documents']}, "
          f"missing from list {mixed['missing_from_list']}, not found by search "
          f"{mixed['not_found_by_search']}; search p50 {mixed['search_p50_ms']} ms, p99 "
          f"{mixed['search_p99_ms']} ms, {mixed['searches_per_second']} searches/s")


if __name__ == "__main__":
    main()

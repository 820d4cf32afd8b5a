"""``ragloom search/ask/ingest --server URL`` (or ``$RAGLOOM_SERVER``): the same commands
against a running ``ragloom serve``, with the same output.

The API key, when the server needs one, comes from ``$RAGLOOM_API_KEY`` (never a flag:
flags end up in shell history). Answers and matches are rebuilt as the library's own
objects, so the commands print them with the code they use locally.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from ragloom.errors import (
    ConfigurationError,
    InvalidInputError,
    KnowledgeBaseNotFoundError,
    MissingDependencyError,
    RagError,
)
from ragloom.ingestion.report import IngestReport
from ragloom.types import QueryMatch, TextChunk, Usage

ServerOption = Annotated[
    str | None,
    typer.Option("--server", help="Use a ragloom server at this URL instead of the local "
                 "database [default: $RAGLOOM_SERVER]; its key from $RAGLOOM_API_KEY.",
                 show_default=False),
]
UPLOAD_FILES = 50
UPLOAD_BYTES = 50 * 1024 * 1024


def server_url(option: str | None) -> str | None:
    url = option or os.environ.get("RAGLOOM_SERVER") or None
    return url.rstrip("/") if url else None


class RemoteClient:
    """A small JSON client of the native API; server errors become ragloom errors."""

    def __init__(self, url: str, key: str | None = None, timeout: float = 600.0) -> None:
        try:
            import httpx
        except ImportError as exc:
            raise MissingDependencyError("httpx", "server", "--server") from exc
        key = key if key is not None else os.environ.get("RAGLOOM_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.url = url
        self._http = httpx.Client(base_url=url, headers=headers, timeout=timeout)

    def request(self, method: str, path: str, **options: Any) -> Any:
        import httpx

        try:
            response = self._http.request(method, path, **options)
        except httpx.HTTPError as exc:
            raise RagError(f"cannot reach the ragloom server at {self.url}: {exc}") from exc
        if response.status_code < 400:
            return response.json()
        try:
            message = str(response.json()["error"]["message"])
        except (ValueError, KeyError, TypeError):
            message = response.text[:200] or response.reason_phrase
        if response.status_code == 404:
            raise KnowledgeBaseNotFoundError(f"server: {message}")
        if response.status_code == 401:
            raise ConfigurationError(f"server: {message} (set RAGLOOM_API_KEY)")
        if response.status_code in (400, 409, 413):
            raise InvalidInputError(f"server: {message}")
        raise RagError(f"server answered {response.status_code}: {message}")


def _filters(raw: str | None) -> Any:
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"--filter is not valid JSON: {exc.msg} at character "
                                f"{exc.pos}") from exc


def match_from_wire(data: dict[str, Any]) -> QueryMatch:
    metadata = dict(data.get("metadata") or {})
    metadata.setdefault("source", data.get("source", ""))
    chunk = TextChunk(id=data["chunk_id"], document_id=data["document_id"],
                      index=int(data.get("index", 0)), start=int(metadata.get("start", 0)),
                      end=int(metadata.get("end", 0)), page=data.get("page"),
                      text=data.get("text", ""), metadata=metadata)
    return QueryMatch(chunk=chunk, score=float(data["score"]),
                      raw_score=float(data.get("raw_score", 0.0)),
                      knowledge_base=data.get("knowledge_base", ""))


def remote_search(url: str, query: str, *, kb: Sequence[str], mode: str, ranker: str,
                  alpha: float, top_k: int, score_threshold: float | None,
                  filter_json: str | None, documents: bool, graph: bool = False
                  ) -> tuple[Any, list[QueryMatch]]:
    from ragloom.retrieval.search import SearchResult

    body = {"query": query, "knowledge_bases": list(kb) or [_default_kb()], "mode": mode,
            "ranker": ranker, "alpha": alpha, "top_k": top_k,
            "score_threshold": score_threshold, "filters": _filters(filter_json),
            "documents": documents}
    if graph:
        body["graph"] = True
    data = RemoteClient(url).request("POST", "/api/search", json=body)
    matches = [match_from_wire(m) for m in data["matches"]]
    return SearchResult(matches, degraded=data["degraded"], notice=data["notice"]), matches


def _default_kb() -> str:
    from ragloom.cli.common import resolve_kb

    return resolve_kb(None)


def remote_ask(url: str, question: str, *, kb: str | None, mode: str, top_k: int,
               score_threshold: float | None, filter_json: str | None,
               graph: bool = False) -> Any:
    from ragloom.rag import RagAnswer

    body: dict[str, Any] = {"question": question, "knowledge_bases": [kb or _default_kb()],
                            "mode": mode, "top_k": top_k, "score_threshold": score_threshold,
                            "filters": _filters(filter_json)}
    if graph:
        body["graph"] = True
    data = RemoteClient(url).request("POST", "/api/ask", json=body)
    usage = data.get("usage") or {}
    values: dict[str, Any] = {
        "question": data["question"], "answer": data["answer"],
        "sources": [match_from_wire(m) for m in data["sources"]],
        "usage": Usage(input_tokens=int(usage.get("input_tokens", 0)),
                       output_tokens=int(usage.get("output_tokens", 0)),
                       latency_s=float(usage.get("latency_s", 0.0))),
        "degraded": data["degraded"], "notice": data["notice"],
        "retrieval_seconds": float(usage.get("retrieval_s", 0.0)), "model": data["model"]}
    optional = {"quote": data.get("quote", ""),
                "citations": [c["number"] for c in data.get("citations", [])],
                "refused": data.get("refused", False), "origin": data.get("origin", "")}
    known = set(RagAnswer.__dataclass_fields__)
    values.update({k: v for k, v in optional.items() if k in known})
    return RagAnswer(**values)


def remote_ingest(url: str, paths: Sequence[str], *, kb: str | None, embedder: str | None,
                  include: Sequence[str], exclude: Sequence[str], hidden: bool,
                  progress: Any = None) -> IngestReport:
    """Upload files in batches, wait for their jobs, and report like a local ingest."""
    from ragloom.ingestion import FileSelection
    from ragloom.ingestion.sources import list_files

    client = RemoteClient(url)
    name = kb or _default_kb()
    try:
        client.request("GET", f"/api/knowledge-bases/{name}")
    except KnowledgeBaseNotFoundError:
        client.request("POST", "/api/knowledge-bases",
                       json={"name": name, "embedder": embedder})
    report = IngestReport()
    started = time.perf_counter()
    selection = FileSelection(include=tuple(include) or ("**/*",), exclude=tuple(exclude),
                              hidden=hidden)
    files = []
    for item in list_files([p for p in paths if p != "-"], selection):
        if item.reason is not None:
            report.skipped.append((item.path, item.reason))
        else:
            files.append(item.path)
    if "-" in paths:
        import sys

        text = sys.stdin.read()
        job = client.request("POST", f"/api/knowledge-bases/{name}/documents/text?wait=300",
                             json={"text": text, "source": "stdin"})
        _record(report, [job])
    batch: list[str] = []
    size = 0
    for path in files:
        length = os.path.getsize(path)
        if batch and (len(batch) >= UPLOAD_FILES or size + length > UPLOAD_BYTES):
            _upload(client, name, batch, report)
            batch, size = [], 0
        batch.append(path)
        size += length
    if batch:
        _upload(client, name, batch, report)
    report.seconds = time.perf_counter() - started
    return report


def _display(path: str) -> str:
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


def _upload(client: RemoteClient, kb: str, paths: Sequence[str], report: IngestReport) -> None:
    handles = [open(path, "rb") for path in paths]  # noqa: SIM115 - closed below
    try:
        files = [("files", (_display(path), handle)) for path, handle in zip(paths, handles,
                                                                             strict=True)]
        batch = client.request("POST", f"/api/knowledge-bases/{kb}/documents", files=files)
    finally:
        for handle in handles:
            handle.close()
    while batch["status"] == "in_progress":
        time.sleep(0.2)
        batch = client.request("GET", f"/api/batches/{batch['id']}")
    _record(report, batch["jobs"])


def _record(report: IngestReport, jobs: Sequence[dict[str, Any]]) -> None:
    for job in jobs:
        if job["status"] != "completed":
            error = job.get("error") or {}
            report.skipped.append((job["source"], error.get("message") or job["status"]))
            continue
        for document in job["documents"]:
            outcome = document["outcome"]
            getattr(report, outcome if outcome in ("new", "unchanged", "replaced")
                    else "new").append(document["source"])
            if outcome in ("new", "replaced"):
                report.chunks_written += int(document["chunks"])
                report.texts_embedded += int(document["chunks"])

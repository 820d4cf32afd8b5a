"""``/api/search`` and ``/api/ask`` (JSON, or server-sent events with ``stream``).

The stream: ``sources`` (the passages, before any token), ``delta`` events with
``{"text": ...}``, then ``done`` with the answer, citations, supporting quotes and
usage; if the model fails midway, an ``error`` event with the error body instead of
``done``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import Response, StreamingResponse

from ragloom import json_codec
from ragloom.errors import FilterError, RagError
from ragloom.filters import parse_filters
from ragloom.rag import RagAnswer
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import SearchResult
from ragloom.server.answering import (
    Target,
    answer_payload,
    make_rag,
    match_dict,
    search_targets,
    sources_payload,
)
from ragloom.server.auth import Tenant, current_tenant
from ragloom.server.caches import matches_size, store_failures_logged
from ragloom.server.errors import ApiError, bad_request, from_rag_error
from ragloom.server.native.schemas import (
    AskIn,
    AskOut,
    AskSettings,
    RetrievalSettings,
    SearchIn,
    SearchOut,
)
from ragloom.server.state import ServerState, get_state
from ragloom.types import ChatMessage

router = APIRouter(tags=["search and answers"])
log = logging.getLogger("ragloom.server.ask")

STREAM_RESPONSE: dict[int | str, dict[str, Any]] = {200: {
    "content": {"application/json": {}, "text/event-stream": {
        "schema": {"type": "string", "description": "events: sources, delta..., done | error"}}},
    "description": "The answer (JSON), or with stream=true server-sent events"}}


def search_options(body: RetrievalSettings) -> SearchOptions:
    filters = None
    if body.filters is not None:
        try:
            filters = parse_filters(body.filters)
        except FilterError as exc:
            raise bad_request(str(exc), "filters") from exc
    extra = {} if body.normalization == "minmax" else {"normalization": body.normalization}
    try:
        return SearchOptions(mode=body.mode, top_k=body.top_k,
                             score_threshold=body.score_threshold, ranker=body.ranker,
                             impact_factor=body.impact_factor, alpha=body.alpha,
                             filters=filters, candidates=body.candidates, extra=extra,
                             graph=body.graph, graph_hops=body.graph_hops,
                             graph_fan_out=body.graph_fan_out, graph_weight=body.graph_weight)
    except RagError as exc:
        raise from_rag_error(exc) from exc


def targets_for(state: ServerState, tenant: Tenant, names: Sequence[str]) -> list[Target]:
    targets = []
    seen = set()
    for name in names:
        record = state.catalog.get(tenant, name)
        if record.id in seen:
            continue
        seen.add(record.id)
        targets.append(Target(record.name, state.catalog.open(record)))
    return targets


@router.post("/search", response_model=SearchOut)
async def search(body: SearchIn, tenant: Tenant = Depends(current_tenant),
                 state: ServerState = Depends(get_state)) -> Response:
    """Retrieve passages from one or several knowledge bases, without a model."""
    options = search_options(body)
    if body.documents:
        options = options.with_(top_k=max(body.top_k * 10, 100))

    def work(targets: Sequence[Target]) -> tuple[bytes, bool]:
        result = retrieve(state, tenant, targets, body.query, options)
        matches = list(result.matches)
        if body.documents:
            from ragloom.retrieval.documents import documents_from_matches

            matches = [doc.best for doc in documents_from_matches(matches, body.top_k)]
        # Built to SearchOut's shape by match_dict; encoded directly, since validating it
        # again would cost more than the search itself on small knowledge bases.
        return json_codec.encode({
            "object": "search_result", "query": body.query,
            "matches": [match_dict(n, m) for n, m in enumerate(matches, 1)],
            "degraded": result.degraded, "notice": result.notice}), not result.degraded

    def cached() -> bytes:
        targets = targets_for(state, tenant, body.knowledge_bases)
        key = state.caches.search_key(tenant.id, "api.search",
                                      [t.knowledge_base.store for t in targets],
                                      tuple(t.name for t in targets), body.model_dump_json())
        if body.graph:  # the graph may grow after ingestion (extraction runs later)
            key = None
        return state.caches.cached(tenant.id, key, lambda: work(targets), len)

    return Response(await state.run_cpu(cached), media_type="application/json")


def retrieve(state: ServerState, tenant: Tenant, targets: Sequence[Target], query: str,
             options: SearchOptions) -> SearchResult:
    """Search the targets with the tenant's cached query embeddings; a failing store is
    logged with the request's id and answered with a clean error."""
    with store_failures_logged(", ".join(t.name for t in targets)):
        return search_targets(targets, query, options,
                              lambda embedder: state.caches.query_embedder(tenant.id, embedder))


def cached_retrieval(state: ServerState, tenant: Tenant, targets: Sequence[Target],
                     query: str, options: SearchOptions) -> SearchResult:
    """:func:`retrieve`, answered from the search cache when nothing changed since."""
    key = state.caches.search_key(tenant.id, "api.retrieve",
                                  [t.knowledge_base.store for t in targets],
                                  tuple(t.name for t in targets), repr(options), query)
    if options.graph:  # the graph may grow after ingestion (extraction runs later)
        key = None

    def compute() -> tuple[SearchResult, bool]:
        result = retrieve(state, tenant, targets, query, options)
        return result, not result.degraded

    found = state.caches.cached(tenant.id, key, compute,
                                lambda result: matches_size(result.matches))
    # A copy of the list: the answer may reorder its passages, never the cached ones.
    return SearchResult(list(found.matches), found.degraded, found.notice)


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


async def answer(state: ServerState, tenant: Tenant, body: AskSettings, names: Sequence[str],
                 *, history: Sequence[ChatMessage] = (), retrieval_query: str | None = None,
                 on_done: Callable[[dict[str, Any]], None] | None = None,
                 extra: dict[str, Any] | None = None) -> Any:
    """Retrieve, then answer as JSON or as a stream of events."""
    options = search_options(body)

    def retrieved() -> tuple[list[Target], Any]:
        targets = targets_for(state, tenant, names)
        return targets, cached_retrieval(state, tenant, targets,
                                         retrieval_query or body.question, options)

    targets, result = await state.run_cpu(retrieved)
    rag = make_rag(result, targets, state.models.model(), options, history)
    rag.max_tokens_in_context = body.max_tokens_in_context
    rag.settings = rag.settings.with_(max_tokens=body.max_answer_tokens,
                                      temperature=body.temperature,
                                      system_prompt=body.system_prompt,
                                      grounding=body.grounding)
    if not body.stream:
        try:
            reply: RagAnswer = await state.run_model(rag.query, body.question)
        except RagError as exc:
            raise from_rag_error(exc) from exc
        payload = {**answer_payload(reply), **(extra or {})}
        if on_done is not None:
            await state.run_cpu(on_done, payload)
        return payload
    return StreamingResponse(_events(state, rag, body.question, result, on_done, extra or {}),
                             media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def _events(state: ServerState, rag: Any, question: str, result: Any,
                  on_done: Callable[[dict[str, Any]], None] | None,
                  extra: dict[str, Any]) -> AsyncIterator[bytes]:
    yield sse("sources", sources_payload(result))
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    stop = threading.Event()

    def put(kind: str, item: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, (kind, item))

    def produce() -> None:
        try:
            for item in rag.stream(question):
                if stop.is_set():
                    return
                put("item", item)
        except Exception as exc:  # reported to the client as an error event
            put("error", exc)
        finally:
            put("end", None)

    task = asyncio.ensure_future(state.run_model(produce))
    try:
        while True:
            kind, item = await queue.get()
            if kind == "end":
                break
            if kind == "error":
                error = (from_rag_error(item) if isinstance(item, RagError) else
                         ApiError(500, "the answer failed midway", type="server_error",
                                  code="server_error"))
                if not isinstance(item, RagError):
                    log.error("streamed answer failed", exc_info=item)
                yield sse("error", error.body())
            elif isinstance(item, str):
                yield sse("delta", {"text": item})
            else:
                payload = {**answer_payload(item), **extra}
                if on_done is not None:
                    await state.run_cpu(on_done, payload)
                yield sse("done", payload)
    finally:
        stop.set()
        if task.done():
            task.result()


@router.post("/ask", response_model=AskOut, responses=STREAM_RESPONSE)
async def ask(body: AskIn, tenant: Tenant = Depends(current_tenant),
              state: ServerState = Depends(get_state)) -> Any:
    """Answer a question from knowledge bases, with numbered sources and citations."""
    return await answer(state, tenant, body, body.knowledge_bases)

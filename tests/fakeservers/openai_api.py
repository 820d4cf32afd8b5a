"""The OpenAI wire format: /v1/chat/completions (JSON and SSE) and /v1/embeddings."""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

import numpy as np

from fakeservers.base import Recorded, Reply, Response, sse


def cut(text: str, stop: Any) -> str:
    for marker in ([stop] if isinstance(stop, str) else stop or []):
        text = text.split(marker, 1)[0]
    return text


def fake_vector(text: str, dimension: int) -> list[float]:
    rng = np.random.default_rng(zlib.crc32(text.encode()))
    return [round(float(x), 6) for x in rng.standard_normal(dimension)]


def app(request: Recorded, reply: Reply) -> Response:
    body = request.body or {}
    if request.path == "/v1/embeddings":
        return embeddings(body)
    if request.path != "/v1/chat/completions":
        return Response(404, {"error": {"message": f"no route {request.path}"}})
    text = cut(reply.text, body.get("stop"))
    calls = [{"id": f"call_{i}", "type": "function",
              "function": {"name": name, "arguments": json.dumps(args)}}
             for i, (name, args) in enumerate(reply.tool_calls)]
    finish = "tool_calls" if calls else "stop"
    usage = {"prompt_tokens": reply.input_tokens, "completion_tokens": reply.output_tokens,
             "total_tokens": reply.input_tokens + reply.output_tokens}
    head = {"id": "chatcmpl-1", "created": 1700000000, "model": body.get("model")}
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": text if not calls else None}
        if calls:
            message["tool_calls"] = calls
        return Response(body={**head, "object": "chat.completion", "usage": usage, "choices": [
            {"index": 0, "message": message, "finish_reason": finish}]})
    chunk = {**head, "object": "chat.completion.chunk"}
    events: list[tuple[str | None, Any]] = []

    def delta(d: dict[str, Any], finish_reason: str | None = None) -> None:
        events.append((None, {**chunk, "choices": [
            {"index": 0, "delta": d, "finish_reason": finish_reason}]}))

    delta({"role": "assistant", "content": ""})
    for word in text.split(" ") if text else []:
        delta({"content": word if not events[1:] else " " + word})
    for i, call in enumerate(calls):
        args = call["function"]["arguments"]
        delta({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                               "function": {"name": call["function"]["name"], "arguments": ""}}]})
        for start in range(0, len(args), 5):
            delta({"tool_calls": [{"index": i, "function": {"arguments": args[start:start + 5]}}]})
    delta({}, finish)
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append((None, {**chunk, "choices": [], "usage": usage}))
    events.append((None, "[DONE]"))
    return Response(chunks=sse(events), content_type="text/event-stream")


def embeddings(body: dict[str, Any]) -> Response:
    inputs = body.get("input")
    texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
    dimension = int(body.get("dimensions") or 8)
    data = []
    for index, text in enumerate(texts):
        vector = fake_vector(text, dimension)
        value: Any = vector
        if body.get("encoding_format") == "base64":
            value = base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()
        data.append({"object": "embedding", "index": index, "embedding": value})
    tokens = sum(len(t.split()) for t in texts)
    return Response(body={"object": "list", "data": data, "model": body.get("model"),
                          "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

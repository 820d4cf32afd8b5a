"""The Anthropic wire format: POST /v1/messages, JSON or SSE events."""

from __future__ import annotations

import json
from typing import Any

from fakeservers.base import Recorded, Reply, Response, sse
from fakeservers.openai_api import cut


def app(request: Recorded, reply: Reply) -> Response:
    body = request.body or {}
    if request.path != "/v1/messages":
        return Response(404, {"type": "error", "error": {"type": "not_found_error",
                                                         "message": request.path}})
    text = cut(reply.text, body.get("stop_sequences"))
    stopped = text != reply.text
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args}
                for i, (name, args) in enumerate(reply.tool_calls)]
    stop_reason = "tool_use" if reply.tool_calls else ("stop_sequence" if stopped else "end_turn")
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model"),
               "stop_reason": None, "stop_sequence": None}
    if not body.get("stream"):
        return Response(body={**message, "content": content, "stop_reason": stop_reason,
                              "usage": {"input_tokens": reply.input_tokens,
                                        "output_tokens": reply.output_tokens}})
    events: list[tuple[str | None, Any]] = [("message_start", {
        "type": "message_start", "message": {**message, "content": [], "usage": {
            "input_tokens": reply.input_tokens, "output_tokens": 1}}})]
    for index, block in enumerate(content):
        start = dict(block, text="") if block["type"] == "text" else dict(block, input={})
        events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": start}))
        if block["type"] == "text":
            for word in block["text"].split(" "):
                events.append(("content_block_delta", {
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": word + " "}}))
        else:
            raw = json.dumps(block["input"])
            for at in range(0, len(raw), 4):
                events.append(("content_block_delta", {
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": raw[at:at + 4]}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("ping", {"type": "ping"}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                     "usage": {"output_tokens": reply.output_tokens}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return Response(chunks=sse(events), content_type="text/event-stream")

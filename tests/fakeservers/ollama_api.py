"""The Ollama wire format: /api/chat (JSON or NDJSON stream) and /api/embed."""

from __future__ import annotations

import json
from typing import Any

from fakeservers.base import Recorded, Reply, Response
from fakeservers.openai_api import cut, fake_vector

CREATED = "2025-01-01T00:00:00Z"


def app(request: Recorded, reply: Reply) -> Response:
    body = request.body or {}
    if request.path == "/api/embed":
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        dimension = int(body.get("dimensions") or 6)
        return Response(body={"model": body.get("model"),
                              "embeddings": [fake_vector(t, dimension) for t in texts],
                              "total_duration": 1000, "prompt_eval_count": len(texts)})
    if request.path != "/api/chat":
        return Response(404, {"error": f"model '{body.get('model')}' not found"})
    text = cut(reply.text, (body.get("options") or {}).get("stop"))
    calls = [{"function": {"name": name, "arguments": args}} for name, args in reply.tool_calls]
    head = {"model": body.get("model"), "created_at": CREATED}
    final = {"done": True, "done_reason": "stop", "total_duration": 5000,
             "prompt_eval_count": reply.input_tokens, "eval_count": reply.output_tokens}
    if body.get("stream") is False:
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = calls
        return Response(body={**head, "message": message, **final})
    lines = []
    if calls:
        lines.append({**head, "message": {"role": "assistant", "content": "",
                                          "tool_calls": calls}, "done": False})
    for word in text.split(" ") if text else []:
        lines.append({**head, "message": {"role": "assistant", "content": word + " "},
                      "done": False})
    lines.append({**head, "message": {"role": "assistant", "content": ""}, **final})
    return Response(chunks=[(json.dumps(line) + "\n").encode() for line in lines],
                    content_type="application/x-ndjson")

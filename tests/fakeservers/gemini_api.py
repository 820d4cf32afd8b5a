"""The Gemini API wire format: models/{m}:generateContent, :streamGenerateContent SSE
and :batchEmbedContents."""

from __future__ import annotations

from typing import Any

from fakeservers.base import Recorded, Reply, Response, sse
from fakeservers.openai_api import cut, fake_vector


def app(request: Recorded, reply: Reply) -> Response:
    body = request.body or {}
    model, _, method = request.path.rpartition("/")[2].partition(":")
    if method == "batchEmbedContents":
        return embed(model, body)
    if method not in ("generateContent", "streamGenerateContent"):
        return Response(404, {"error": {"code": 404, "message": f"no route {request.path}",
                                        "status": "NOT_FOUND"}})
    text = cut(reply.text, (body.get("generationConfig") or {}).get("stopSequences"))
    usage = {"promptTokenCount": reply.input_tokens, "candidatesTokenCount": reply.output_tokens,
             "totalTokenCount": reply.input_tokens + reply.output_tokens}
    calls = [{"functionCall": {"name": name, "args": args}} for name, args in reply.tool_calls]

    def answer(parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model}

    if method == "generateContent":
        parts = ([{"text": text}] if text else []) + calls
        return Response(body=answer(parts, "STOP"))
    words = text.split(" ") if text else []
    events: list[tuple[str | None, Any]] = [
        (None, answer([{"text": (" " if i else "") + word}], None)) for i, word in enumerate(words)]
    events.append((None, answer(calls or [{"text": ""}], "STOP")))
    return Response(chunks=sse(events), content_type="text/event-stream")


def embed(model: str, body: dict[str, Any]) -> Response:
    """One vector per request: ``fake_vector`` of its text (``outputDimensionality``
    or 8 values); a request for another model or with no text is a 400, as Gemini says."""
    embeddings = []
    for item in body.get("requests", []):
        if item.get("model") != f"models/{model}":
            return Response(400, {"error": {"code": 400, "status": "INVALID_ARGUMENT",
                                            "message": "model mismatch in batch"}})
        text = "".join(p.get("text", "") for p in item.get("content", {}).get("parts", []))
        if not text:
            return Response(400, {"error": {"code": 400, "status": "INVALID_ARGUMENT",
                                            "message": "empty content"}})
        embeddings.append({"values": fake_vector(text, int(item.get("outputDimensionality")
                                                           or 8))})
    return Response(body={"embeddings": embeddings})

"""Structured output: ``response_format`` (chat completions) and ``text.format``
(responses), checked, handed to models that can honour it, refused for those that
cannot.

A model honours a format when it says so (``supports_response_format``: the hosted
OpenAI-compatible and Ollama providers, which pass it to their API). The local models
have no constrained decoding, so a ``json_schema`` or ``json_object`` request to them
is a 400 naming the model, never a reply that merely looks like JSON. The reply of a
model that honours the format is checked: it must parse as JSON and, for
``json_schema`` when ``jsonschema`` is installed, match the schema (else 502).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ragloom.protocols import ModelProvider
from ragloom.server.v1.errors import OpenAIError, bad_request

FORMATS = ("text", "json_object", "json_schema")


def chat_format(raw: Mapping[str, Any] | None, param: str = "response_format"
                ) -> dict[str, Any] | None:
    """A chat completion's ``response_format``, checked; None for plain text."""
    if raw is None:
        return None
    kind = raw.get("type")
    if kind not in FORMATS:
        raise bad_request(f"{param}.type must be one of {', '.join(FORMATS)}",
                          f"{param}.type", code="unsupported_value")
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    spec = raw.get("json_schema")
    if not isinstance(spec, Mapping):
        raise bad_request("a json_schema response_format needs a 'json_schema' object",
                          f"{param}.json_schema")
    return {"type": "json_schema", "json_schema": _schema_spec(spec, f"{param}.json_schema")}


def text_format(text: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A response's ``text.format`` as a chat ``response_format``; None for plain text."""
    if text is None:
        return None
    raw = text.get("format")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise bad_request("text.format must be an object", "text.format")
    if raw.get("type") == "json_schema":
        return {"type": "json_schema", "json_schema": _schema_spec(raw, "text.format")}
    return chat_format(raw, "text.format")


def _schema_spec(spec: Mapping[str, Any], param: str) -> dict[str, Any]:
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise bad_request("a json_schema format needs a 'name'", f"{param}.name")
    schema = spec.get("schema", {})
    if not isinstance(schema, Mapping):
        raise bad_request("'schema' must be a JSON Schema object", f"{param}.schema")
    try:
        import jsonschema
    except ImportError:  # the schema is still handed on; the model's API checks it
        pass
    else:
        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise bad_request(f"'schema' is not a valid JSON Schema: {exc.message}",
                              f"{param}.schema") from exc
    out: dict[str, Any] = {"name": name, "schema": dict(schema)}
    if spec.get("strict") is not None:
        out["strict"] = bool(spec["strict"])
    if spec.get("description"):
        out["description"] = str(spec["description"])
    return out


def responses_text(fmt: dict[str, Any] | None) -> dict[str, Any]:
    """The ``text`` object a response echoes for ``fmt``."""
    if fmt is None:
        return {"format": {"type": "text"}}
    if fmt["type"] == "json_object":
        return {"format": {"type": "json_object"}}
    return {"format": {"type": "json_schema", **fmt["json_schema"]}}


def require_support(model: ModelProvider, fmt: dict[str, Any] | None, param: str) -> None:
    """A 400 when ``model`` cannot honour ``fmt``."""
    if fmt is None or getattr(model, "supports_response_format", False):
        return
    raise bad_request(
        f"the model '{model.name}' cannot produce structured output ({fmt['type']}): it "
        "has no constrained decoding. Serve a hosted model (openai:..., ollama:...) for "
        "structured output, or ask for plain text", param, code="unsupported_value")


def model_options(fmt: dict[str, Any] | None) -> dict[str, Any]:
    """Keyword arguments for ``model.chat``/``stream`` (none for plain text)."""
    return {} if fmt is None else {"response_format": fmt}


def check_reply(text: str, fmt: dict[str, Any] | None) -> None:
    """A 502 when a model's reply breaks the format it was asked for."""
    if fmt is None:
        return
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise OpenAIError(502, f"the model's reply is not JSON although {fmt['type']} "
                          f"was asked for: {exc}", code="invalid_model_output",
                          type="server_error") from exc
    if fmt["type"] != "json_schema":
        return
    try:
        import jsonschema
    except ImportError:
        return
    error = jsonschema.exceptions.best_match(
        jsonschema.validators.validator_for(fmt["json_schema"]["schema"])(
            fmt["json_schema"]["schema"]).iter_errors(value))
    if error is not None:
        raise OpenAIError(502, f"the model's reply does not match the schema: "
                          f"{error.message}", code="invalid_model_output",
                          type="server_error")

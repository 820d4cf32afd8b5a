"""The language-model extractor: any configured chat model, asked for JSON.

Each chunk is one request. The reply must be a JSON object that fits
:data:`GRAPH_JSON_SCHEMA` (checked by :func:`validate_graph_json`); a reply that is not
JSON or does not fit is asked again, with what was wrong, up to ``retries`` times.
Entities whose name the chunk does not contain are dropped (a model's invention has
no evidence), and so are relations whose ends were dropped. Each document has a
budget (model calls and seconds): chunks left when it runs out, and chunks that
never gave valid JSON, are returned as :class:`ExtractionFailure`\\ s with the reason,
and the store keeps them (``ragloom graph show --json`` lists them).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragloom.errors import RagError
from ragloom.graph.model import ChunkGraph, DocumentGraph, Entity, ExtractionFailure, Relation
from ragloom.protocols import ModelProvider
from ragloom.types import ChatMessage, TextChunk, TextDocument

GRAPH_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["entities", "relations"],
    "properties": {
        "entities": {"type": "array", "items": {
            "type": "object", "required": ["name", "type"],
            "properties": {"name": {"type": "string"}, "type": {"type": "string"},
                           "aliases": {"type": "array", "items": {"type": "string"}}}}},
        "relations": {"type": "array", "items": {
            "type": "object", "required": ["source", "relation", "target"],
            "properties": {"source": {"type": "string"}, "relation": {"type": "string"},
                           "target": {"type": "string"}, "evidence": {"type": "string"}}}},
    },
}

SYSTEM_PROMPT = (
    "You extract a knowledge graph from a text passage. Reply with one JSON object and "
    "nothing else, with this JSON schema:\n" + json.dumps(GRAPH_JSON_SCHEMA) + "\n"
    "entities: the people, organisations, places, products, dates and key concepts the "
    "passage names, each with a short type. relations: facts linking two of those "
    "entities; evidence is the sentence of the passage that states the fact.\n"
    'Example: {"entities": [{"name": "Ada Lovelace", "type": "person"}, {"name": '
    '"Analytical Engine", "type": "machine"}], "relations": [{"source": "Ada Lovelace", '
    '"relation": "wrote about", "target": "Analytical Engine", "evidence": "Ada Lovelace '
    'wrote notes on the Analytical Engine."}]}'
)


class SchemaError(ValueError):
    """A reply that is JSON but does not fit the schema; says where."""


def validate_graph_json(data: object) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The entities and relations of a reply, or :class:`SchemaError` saying what is wrong."""
    if not isinstance(data, dict):
        raise SchemaError(f"the reply is a JSON {type(data).__name__}, not an object")
    for key in ("entities", "relations"):
        if not isinstance(data.get(key), list):
            raise SchemaError(f'"{key}" must be a list')
    entities: list[dict[str, Any]] = data["entities"]
    relations: list[dict[str, Any]] = data["relations"]
    for position, item in enumerate(entities):
        _check_item(item, f"entities[{position}]", ("name", "type"), ("aliases",))
    for position, item in enumerate(relations):
        _check_item(item, f"relations[{position}]", ("source", "relation", "target"),
                    (), ("evidence",))
    return entities, relations


def _check_item(item: object, where: str, required: Sequence[str],
                lists: Sequence[str] = (), optional: Sequence[str] = ()) -> None:
    if not isinstance(item, dict):
        raise SchemaError(f"{where} must be an object")
    for key in required:
        if not isinstance(item.get(key), str) or not item[key].strip():
            raise SchemaError(f'{where}."{key}" must be a non-empty string')
    for key in optional:
        if key in item and not isinstance(item[key], str):
            raise SchemaError(f'{where}."{key}" must be a string')
    for key in lists:
        value = item.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SchemaError(f'{where}."{key}" must be a list of strings')


def parse_reply(text: str) -> object:
    """The first JSON object in a reply (code fences and chatter around it are ignored)."""
    start = text.find("{")
    if start < 0:
        raise SchemaError("the reply holds no JSON object")
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        raise SchemaError(f"the reply is not valid JSON ({exc.msg} at character "
                          f"{exc.pos})") from exc
    return data


_SPACES = re.compile(r"\s+")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def _flat(text: str) -> str:
    return _SPACES.sub(" ", text).strip().casefold()


def _sentence_with(text: str, *names: str) -> str:
    for sentence in _SENTENCES.split(text):
        flat = _flat(sentence)
        if all(_flat(name) in flat for name in names):
            return sentence.strip()[:300]
    return ""


@dataclass(frozen=True)
class LlmExtractor:
    """Entities and relations from a chat model, validated, with retries and a budget.

    ``retries``: extra requests for a chunk whose reply was unusable.
    ``max_calls`` / ``max_seconds``: the budget of one document (model requests and
    wall time); chunks past it are recorded as failures, not extracted.
    """

    model: ModelProvider
    retries: int = 2
    max_calls: int = 60
    max_seconds: float = 300.0
    max_tokens: int = 512

    @property
    def name(self) -> str:
        return f"llm-v1({self.model.name})"

    def extract(self, document: TextDocument, chunks: Sequence[TextChunk]) -> DocumentGraph:
        started = time.perf_counter()
        calls = 0
        graphs: list[ChunkGraph] = []
        failures: list[ExtractionFailure] = []
        for chunk in chunks:
            spent = time.perf_counter() - started
            if calls >= self.max_calls or spent >= self.max_seconds:
                failures.append(ExtractionFailure(
                    chunk_id=chunk.id, attempts=0,
                    reason=f"budget exhausted: {calls} model calls, {spent:.0f} s for this "
                           f"document (max_calls={self.max_calls}, "
                           f"max_seconds={self.max_seconds:g})"))
                continue
            graph, failure, used = self._chunk(chunk, self.max_calls - calls)
            calls += used
            if graph is not None:
                graphs.append(graph)
            if failure is not None:
                failures.append(failure)
        return DocumentGraph(document_id=document.id, extractor=self.name, chunks=tuple(graphs),
                             failures=tuple(failures), seconds=time.perf_counter() - started)

    def _chunk(self, chunk: TextChunk, calls_left: int
               ) -> tuple[ChunkGraph | None, ExtractionFailure | None, int]:
        messages = [ChatMessage.system(SYSTEM_PROMPT),
                    ChatMessage.user(f"Passage:\n{chunk.text}\n\nJSON:")]
        reason = ""
        attempts = 0
        for _ in range(min(self.retries + 1, calls_left)):
            attempts += 1
            try:
                reply = self.model.chat(messages, temperature=0.0,
                                        max_tokens=self.max_tokens).text
            except RagError as exc:
                reason = f"the model failed: {exc}"
                continue
            try:
                entities, relations = validate_graph_json(parse_reply(reply))
            except SchemaError as exc:
                reason = f"unusable reply: {exc}"
                messages = [*messages, ChatMessage.assistant(reply[:2000]), ChatMessage.user(
                    f"That reply was not usable: {exc}. Reply with the JSON object only.")]
                continue
            return self._graph(chunk, entities, relations), None, attempts
        return None, ExtractionFailure(chunk_id=chunk.id, reason=reason or "no attempt left",
                                       attempts=attempts), attempts

    @staticmethod
    def _graph(chunk: TextChunk, entities: list[dict[str, Any]],
               relations: list[dict[str, Any]]) -> ChunkGraph:
        """Keep what the chunk supports: names it contains, relations between those."""
        text = _flat(chunk.text)
        kept: dict[str, Entity] = {}
        for item in entities:
            names = [item["name"].strip(), *(a.strip() for a in item.get("aliases", []))]
            present = [n for n in names if n and _flat(n) in text]
            if not present:
                continue  # not in the passage: the model made it up
            evidence = _sentence_with(chunk.text, present[0])
            if evidence:
                kept[_flat(names[0])] = Entity(
                    name=names[0], type=item["type"].strip().lower()[:40] or "concept",
                    aliases=tuple(present[1:] if present[0] == names[0] else present),
                    evidence=evidence)
        found: list[Relation] = []
        for item in relations:
            source, target = item["source"].strip(), item["target"].strip()
            if _flat(source) not in kept or _flat(target) not in kept:
                continue
            quote = str(item.get("evidence", "")).strip()
            evidence = quote if quote and _flat(quote) in text else _sentence_with(
                chunk.text, source, target)
            if evidence:
                found.append(Relation(source=source, relation=item["relation"].strip()[:80],
                                      target=target, evidence=evidence[:300]))
        return ChunkGraph(chunk_id=chunk.id, entities=tuple(kept.values()),
                          relations=tuple(found))

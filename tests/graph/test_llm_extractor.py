"""The language-model extractor with a scripted model: schema, retries, budget, evidence."""

from __future__ import annotations

import json

import pytest

from ragloom.chunking import RecursiveSplitter
from ragloom.errors import ProviderTimeoutError
from ragloom.graph import LlmExtractor, merge_document, validate_graph_json
from ragloom.graph.llm import SchemaError, parse_reply
from ragloom.testing import ScriptedModel
from ragloom.types import ChatMessage, TextDocument

TEXT = "The Harbor Bridge was designed by Elena Varga. It opened in 1998."
GOOD = json.dumps({
    "entities": [{"name": "Harbor Bridge", "type": "Bridge"},
                 {"name": "Elena Varga", "type": "person", "aliases": ["Varga"]},
                 {"name": "Atlantis", "type": "place"}],
    "relations": [{"source": "Elena Varga", "relation": "designed", "target": "Harbor Bridge",
                   "evidence": "The Harbor Bridge was designed by Elena Varga."},
                  {"source": "Atlantis", "relation": "near", "target": "Harbor Bridge"}]})


def _extract(model: ScriptedModel, text: str = TEXT, **options: object) -> object:
    document = TextDocument.create(text, source="bridge.txt")
    chunks = RecursiveSplitter(chunk_size=80, chunk_overlap=0).split(document)
    return LlmExtractor(model, **options).extract(document, chunks)  # type: ignore[arg-type]


def test_valid_reply_keeps_only_what_the_chunk_supports() -> None:
    graph = _extract(ScriptedModel([f"Sure! ```json\n{GOOD}\n```"]), TEXT.split(" It")[0])
    entities, relations = merge_document(graph)  # type: ignore[arg-type]
    assert {e.name for e in entities} == {"Harbor Bridge", "Elena Varga"}  # no Atlantis
    assert [(r.source, r.relation, r.target) for r in relations] == [
        ("Elena Varga", "designed", "Harbor Bridge")]
    assert all(m.evidence for e in entities for m in e.mentions)


def test_unusable_replies_are_retried_then_recorded() -> None:
    model = ScriptedModel(["not json at all", '{"entities": "x", "relations": []}', GOOD])
    graph = _extract(model, TEXT.split(" It")[0], retries=2)
    assert not graph.failures and len(model.calls) == 3  # type: ignore[attr-defined]
    # the retry tells the model what was wrong
    assert "not usable" in model.calls[1][-1].content
    failing = _extract(ScriptedModel(["{broken"]), retries=1)
    assert failing.failures  # type: ignore[attr-defined]
    assert all(f.attempts == 2 and "not valid JSON" in f.reason
               for f in failing.failures)  # type: ignore[attr-defined]


def test_budget_and_model_errors_are_recorded_per_chunk() -> None:
    long_text = " ".join(f"Sentence {i} mentions the Harbor Bridge." for i in range(20))
    graph = _extract(ScriptedModel([GOOD]), long_text, max_calls=2)
    failures = graph.failures  # type: ignore[attr-defined]
    assert len(graph.chunks) == 2 and failures  # type: ignore[attr-defined]
    assert all("budget exhausted" in f.reason for f in failures)

    def fail(_: list[ChatMessage]) -> str:
        raise ProviderTimeoutError("no answer in 30 s")

    broken = _extract(ScriptedModel([fail]), TEXT.split(" It")[0], retries=0)
    assert "the model failed" in broken.failures[0].reason  # type: ignore[attr-defined]


def test_schema_validation_says_where() -> None:
    with pytest.raises(SchemaError, match=r"entities\[0\].*name"):
        validate_graph_json({"entities": [{"type": "x"}], "relations": []})
    with pytest.raises(SchemaError, match="aliases"):
        validate_graph_json({"entities": [{"name": "a", "type": "x", "aliases": [1]}],
                             "relations": []})
    with pytest.raises(SchemaError, match="no JSON"):
        parse_reply("I cannot do that")

import numpy as np
import pytest

from ragloom.types import (
    ChatMessage,
    Prompt,
    TextChunk,
    TextDocument,
    Vector,
    content_id,
)


def test_document_id_is_content_addressed() -> None:
    a = TextDocument.create("hello", source="a.txt")
    b = TextDocument.create("hello", source="a.txt")
    c = TextDocument.create("hello!", source="a.txt")
    d = TextDocument.create("hello", source="b.txt")
    assert a.id == b.id
    assert len({a.id, c.id, d.id}) == 3


def test_content_id_separates_parts() -> None:
    assert content_id("ab", "c") != content_id("a", "bc")


def test_chunk_keeps_document_metadata_and_its_own() -> None:
    doc = TextDocument.create("one two three", source="x.md", metadata={"lang": "en"})
    chunk = TextChunk.create(doc, "two", index=1, start=4, end=7, page=2)
    assert chunk.metadata["lang"] == "en"
    assert chunk.metadata["source"] == "x.md"
    assert (chunk.metadata["index"], chunk.metadata["start"], chunk.metadata["page"]) == (1, 4, 2)
    assert doc.text[chunk.start:chunk.end] == chunk.text
    assert TextChunk.from_dict(chunk.to_dict()) == chunk


def test_round_trip_and_version_check() -> None:
    doc = TextDocument.create("x", source="s", metadata={"n": 1})
    assert TextDocument.from_dict(doc.to_dict()) == doc
    bad = dict(doc.to_dict(), version=99)
    with pytest.raises(ValueError, match="version 99"):
        TextDocument.from_dict(bad)


def test_vector_is_float32_one_dimensional() -> None:
    v = Vector(np.array([1, 2, 3], dtype=np.float64))
    assert v.values.dtype == np.float32 and v.dimension == 3
    with pytest.raises(ValueError):
        Vector(np.zeros((2, 2)))


def test_prompt_keeps_documents_as_parts_and_renders_text() -> None:
    doc = TextDocument.create("the passage", source="p")
    prompt = Prompt("Context: {context}\nQ: {question}")
    parts = prompt.fill(context=[doc, "extra"], question="why?")
    assert doc in parts
    assert prompt.render(context=[doc, "extra"], question="why?") == (
        "Context: the passage\n\nextra\nQ: why?"
    )
    with pytest.raises(KeyError, match="question"):
        prompt.render(context="x")


def test_chat_message_helpers() -> None:
    assert ChatMessage.user("hi").role == "user"
    assert ChatMessage.tool("42", "call_1").tool_call_id == "call_1"


@pytest.mark.parametrize("metadata, expected", [
    ({"a": "x\x00y", "n": 3}, {"a": "x\ufffdy", "n": 3}),
    ({"k\x00": 1.5, "b": None}, {"k\ufffd": 1.5, "b": None}),
    ({"deep": {"list": [1, {"v": "\x00"}], "t": True}},
     {"deep": {"list": [1, {"v": "\ufffd"}], "t": True}}),
    ({"tags": ["ok", "no\x00"]}, {"tags": ["ok", "no\ufffd"]}),
    ({"clean": {"list": [1, "two", None, 2.5]}}, {"clean": {"list": [1, "two", None, 2.5]}}),
])
def test_nul_characters_anywhere_in_chunk_metadata_are_replaced(
    metadata: dict[str, object], expected: dict[str, object]
) -> None:
    chunk = TextChunk(id="c", document_id="d", index=0, start=0, end=1, text="t",
                      metadata=metadata)
    assert chunk.metadata == expected

"""Documents in prompts: Prompt.to_message and each provider's wire shape for attachments."""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakeservers import FakeServer, anthropic_api, gemini_api, ollama_api, openai_api
from ragloom.errors import InvalidInputError
from ragloom.models import attachments
from ragloom.models.chat_template import template_messages
from ragloom.registry import make_model
from ragloom.types import BinaryDocument, ChatMessage, Prompt, TextChunk, TextDocument

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\n%%EOF\n"
B64_PNG = base64.b64encode(PNG).decode()
B64_PDF = base64.b64encode(PDF).decode()


def image() -> BinaryDocument:
    return BinaryDocument.create(PNG, mime_type="image/png", source="photos/cat.png")


def pdf() -> BinaryDocument:
    return BinaryDocument.create(PDF, mime_type="application/pdf", source="docs/report.pdf")


def zip_file() -> BinaryDocument:
    return BinaryDocument.create(b"PK\x03\x04", mime_type="application/zip")


def with_image(text: str = "What is in the picture?") -> list[ChatMessage]:
    return [ChatMessage.system("Be brief."),
            ChatMessage(role="user", content=text, attachments=(image(),))]


# ------------------------------------------------------------------------ types (unit)


def test_binary_document_ids_are_content_addressed_and_repr_hides_bytes() -> None:
    doc = image()
    assert doc.id == image().id
    assert doc.id != BinaryDocument.create(PNG + b"x", mime_type="image/png",
                                           source="photos/cat.png").id
    assert doc.metadata["mime_type"] == "image/png" and doc.metadata["source"] == doc.source
    assert "PNG" not in repr(doc) and "image/png" in repr(doc)
    anonymous = BinaryDocument.create(PNG, mime_type="image/png")
    assert anonymous.source.startswith("bytes:") and anonymous.placeholder() == (
        "[attachment: image/png]")
    assert BinaryDocument.from_dict(doc.to_dict()) == doc


def test_prompt_to_message_renders_text_and_moves_binaries_to_attachments() -> None:
    doc = TextDocument.create("The handbook says 42.", source="handbook.txt")
    chunk = TextChunk.create(doc, "Chapter two.", index=1, start=0, end=12)
    picture = image()
    prompt = Prompt("Context:\n{context}\n\nFigure: {figure}\nQ: {question}")
    message = prompt.to_message(context=[doc, chunk], figure=picture, question="Why?")
    assert message.role == "user"
    assert message.content == ("Context:\nThe handbook says 42.\n\nChapter two.\n\n"
                               "Figure: [attachment 1: image/png, photos/cat.png]\nQ: Why?")
    assert message.attachments == (picture,)
    # Without binaries the text is exactly what render gives.
    plain = prompt.to_message(role="system", context=doc, figure="none", question="Q")
    assert plain.role == "system" and plain.attachments == ()
    assert plain.content == prompt.render(context=doc, figure="none", question="Q")


def test_text_only_paths_render_a_placeholder() -> None:
    note = TextDocument.create("A note.", source="note.txt")
    message = ChatMessage(role="user", content="Look:", attachments=(note, image()))
    assert attachments.text_of_attachments(message) == (
        "A note.\n\n[attachment 1: image/png, photos/cat.png]")
    rendered = template_messages([message])
    assert rendered == [{"role": "user",
                         "content": "Look:\n\nA note.\n\n[attachment: image/png, photos/cat.png]"}]


def test_helpers_classify_and_encode() -> None:
    assert attachments.is_image(image()) and not attachments.is_pdf(image())
    assert attachments.is_pdf(pdf()) and not attachments.is_image(pdf())
    assert not attachments.is_image(zip_file()) and not attachments.is_pdf(zip_file())
    assert attachments.data_url(image()) == f"data:image/png;base64,{B64_PNG}"
    assert attachments.filename(pdf(), 1) == "report.pdf"
    assert attachments.filename(zip_file(), 3) == "attachment-3.zip"


# ---------------------------------------------------------- providers (fake servers)


ENVS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
        "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_HOST", "GEMINI_BASE_URL")


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENVS:
        monkeypatch.delenv(name, raising=False)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, "sk-test")


@pytest.fixture
def openai_server(env: None) -> Iterator[FakeServer]:
    with FakeServer(openai_api.app) as server:
        yield server


@pytest.fixture
def anthropic_server(env: None) -> Iterator[FakeServer]:
    with FakeServer(anthropic_api.app) as server:
        yield server


@pytest.fixture
def gemini_server(env: None) -> Iterator[FakeServer]:
    with FakeServer(gemini_api.app) as server:
        yield server


@pytest.fixture
def ollama_server(env: None) -> Iterator[FakeServer]:
    with FakeServer(ollama_api.app) as server:
        yield server


def openai_model(server: FakeServer) -> Any:
    return make_model("openai:gpt-test", base_url=server.url + "/v1", timeout=5)


def anthropic_model(server: FakeServer) -> Any:
    return make_model("anthropic:claude-test", base_url=server.url, timeout=5)


@pytest.mark.integration
def test_openai_sends_images_and_pdfs_as_content_parts(openai_server: FakeServer) -> None:
    model = openai_model(openai_server)
    note = TextDocument.create("A note.", source="note.txt")
    message = ChatMessage(role="user", content="Compare these.",
                          attachments=(image(), note, pdf()))
    assert model.chat([message]).text.startswith("Hello")
    (sent,) = openai_server.requests[-1].body["messages"]
    assert sent["content"] == [
        {"type": "text", "text": "Compare these."},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64_PNG}"}},
        {"type": "text", "text": "A note."},
        {"type": "file", "file": {"filename": "report.pdf",
                                  "file_data": f"data:application/pdf;base64,{B64_PDF}"}},
    ]
    # Text attachments alone keep the plain string form every compatible server reads.
    model.chat([ChatMessage(role="user", content="Read:", attachments=(note,))])
    assert openai_server.requests[-1].body["messages"][0]["content"] == "Read:\n\nA note."


@pytest.mark.integration
def test_anthropic_sends_image_and_document_blocks(anthropic_server: FakeServer) -> None:
    model = anthropic_model(anthropic_server)
    message = ChatMessage(role="user", content="Compare these.", attachments=(image(), pdf()))
    assert model.chat([ChatMessage.system("Be brief."), message]).text.startswith("Hello")
    body = anthropic_server.requests[-1].body
    assert body["system"] == "Be brief."
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Compare these."},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": B64_PNG}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                        "data": B64_PDF}},
    ]}]


@pytest.mark.integration
def test_gemini_sends_inline_data(gemini_server: FakeServer) -> None:
    model: Any = make_model("gemini:gemini-test", base_url=gemini_server.url, timeout=5)
    assert model.chat(with_image()).text.startswith("Hello")
    body = gemini_server.requests[-1].body
    (content,) = body["contents"]
    text, blob = content["parts"]
    assert text == {"text": "What is in the picture?"}
    inline = blob.get("inlineData") or blob["inline_data"]
    assert inline.get("mimeType", inline.get("mime_type")) == "image/png"
    assert base64.b64decode(inline["data"]) == PNG


@pytest.mark.integration
def test_ollama_sends_images_as_base64(ollama_server: FakeServer) -> None:
    model: Any = make_model("ollama:llama-test", host=ollama_server.url, timeout=5)
    note = TextDocument.create("A note.", source="note.txt")
    message = ChatMessage(role="user", content="Look.", attachments=(note, image()))
    assert model.chat([message]).text.startswith("Hello")
    (sent,) = ollama_server.requests[-1].body["messages"]
    assert sent["content"] == "Look.\n\nA note."
    assert sent["images"] == [B64_PNG]


@pytest.mark.integration
def test_streaming_sends_the_same_attachments(openai_server: FakeServer) -> None:
    deltas = list(openai_model(openai_server).stream(with_image()))
    assert deltas[-1].response is not None
    parts = openai_server.requests[-1].body["messages"][1]["content"]
    assert parts[1]["image_url"]["url"].endswith(B64_PNG)


@pytest.mark.integration
def test_unsupported_types_are_refused_before_any_request(
        openai_server: FakeServer, anthropic_server: FakeServer, gemini_server: FakeServer,
        ollama_server: FakeServer) -> None:
    zipped = ChatMessage(role="user", content="Unpack.", attachments=(zip_file(),))
    models: dict[str, Any] = {"openai": openai_model(openai_server),
              "anthropic": anthropic_model(anthropic_server),
              "gemini": make_model("gemini:gemini-test", base_url=gemini_server.url),
              "ollama": make_model("ollama:llama-test", host=ollama_server.url)}
    for name, model in models.items():
        with pytest.raises(InvalidInputError, match=f"{name} cannot take a application/zip"):
            model.chat([zipped])
    with pytest.raises(InvalidInputError, match="ollama cannot take a application/pdf"):
        models["ollama"].chat([ChatMessage(role="user", content="Read.",
                                           attachments=(pdf(),))])
    with pytest.raises(InvalidInputError, match="only in user messages"):
        models["openai"].chat([ChatMessage(role="system", content="x",
                                           attachments=(image(),))])
    servers = (openai_server, anthropic_server, gemini_server, ollama_server)
    assert all(not server.requests for server in servers)

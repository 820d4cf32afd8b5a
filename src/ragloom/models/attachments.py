"""Turning a message's attachments into what each provider accepts.

Text documents and chunks are always sent as text. Binary documents (images, PDFs)
go through as data to providers that read them; text-only paths get a placeholder
naming the type and source, so the model at least knows something was attached.
"""

from __future__ import annotations

import base64
from collections.abc import Collection, Iterator
from pathlib import PurePosixPath

from ragloom.errors import InvalidInputError
from ragloom.types import BinaryDocument, ChatMessage, Chunk, Document, part_text

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
PDF_TYPE = "application/pdf"


def is_image(doc: BinaryDocument) -> bool:
    return doc.mime_type.lower() in IMAGE_TYPES


def is_pdf(doc: BinaryDocument) -> bool:
    return doc.mime_type.lower() == PDF_TYPE


def base64_of(doc: BinaryDocument) -> str:
    return base64.b64encode(doc.data).decode("ascii")


def data_url(doc: BinaryDocument) -> str:
    """``data:<mime>;base64,...``, the form OpenAI-style APIs take inline files in."""
    return f"data:{doc.mime_type};base64,{base64_of(doc)}"


def filename(doc: BinaryDocument, number: int) -> str:
    """A file name for APIs that want one: the source's last path segment if given."""
    name = PurePosixPath(doc.named_source.replace("\\", "/")).name
    if name:
        return name
    extension = doc.mime_type.rpartition("/")[2] or "bin"
    return f"attachment-{number}.{extension}"


def parts(message: ChatMessage) -> Iterator[str | BinaryDocument]:
    """The attachments in order: text for text items, the document for binary ones."""
    for item in message.attachments:
        yield item if isinstance(item, BinaryDocument) else part_text(item)


def text_of(item: Document | Chunk, number: int | None = None) -> str:
    """One attachment as text: its text, or a placeholder for binary content."""
    if isinstance(item, BinaryDocument):
        return item.placeholder(number)
    return part_text(item)


def text_of_attachments(message: ChatMessage) -> str:
    """All attachments as text, for models that read text only.

    Binary documents are numbered in order of appearance, as ``Prompt.to_message``
    numbers them in the message text.
    """
    texts: list[str] = []
    number = 0
    for item in message.attachments:
        if isinstance(item, BinaryDocument):
            number += 1
            texts.append(text_of(item, number))
        else:
            texts.append(text_of(item))
    return "\n\n".join(texts)


def joined(content: str, texts: list[str]) -> str:
    """The message text followed by text attachments, blank-line separated."""
    return "\n\n".join([content, *texts]) if content else "\n\n".join(texts)


def unsupported(doc: BinaryDocument, provider: str, accepts: Collection[str]) -> InvalidInputError:
    where = f" ({doc.named_source})" if doc.named_source else ""
    return InvalidInputError(
        f"{provider} cannot take a {doc.mime_type} attachment{where}; it accepts "
        f"{', '.join(sorted(accepts))}: convert the file, or load its text and attach a "
        "TextDocument instead")


def check_role(message: ChatMessage, provider: str) -> None:
    """Providers read images and files only in user turns; say so instead of dropping them."""
    if message.role == "user":
        return
    for item in message.attachments:
        if isinstance(item, BinaryDocument):
            raise InvalidInputError(
                f"{provider} accepts binary attachments ({item.mime_type}) only in user "
                f"messages, not in a {message.role} message; attach it to a user message")

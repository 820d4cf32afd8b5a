"""Text given directly (standard input, an API call) as a document."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragloom.errors import InvalidInputError
from ragloom.loaders.base import sha256_hex
from ragloom.loaders.detect import MIME_TYPES, mime_format
from ragloom.loaders.parsers.html_page import html_to_text
from ragloom.loaders.parsers.markdown import markdown_title
from ragloom.loaders.parsers.plain_text import normalise_newlines
from ragloom.types import TextDocument


def load_text(
    text: str,
    source: str = "stdin",
    *,
    mime_type: str = "text/plain",
    metadata: Mapping[str, Any] | None = None,
) -> TextDocument:
    """A document from text; ``mime_type`` may be text/plain, text/markdown or text/html."""
    fmt = mime_format(mime_type)
    if fmt not in ("text", "markdown", "html"):
        raise InvalidInputError(
            f"load_text reads text/plain, text/markdown or text/html, not {mime_type!r}; "
            "write other formats to a file and use load_path")
    raw = text.encode("utf-8", "surrogatepass")
    body = normalise_newlines(text)
    extra: dict[str, Any] = {}
    if fmt == "markdown":
        title = markdown_title(body)
    elif fmt == "html":
        body, title = html_to_text(body)
    else:
        title = None
    if title:
        extra["title"] = title
    base = {**extra, **dict(metadata or {}), "source": source, "mime_type": MIME_TYPES[fmt],
            "format": fmt, "size": len(raw), "content_hash": sha256_hex(raw)}
    return TextDocument.create(body, source=source, metadata=base)

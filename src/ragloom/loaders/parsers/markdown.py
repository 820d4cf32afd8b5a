"""Markdown: the text is kept as is; the title is the first ``#`` header."""

from __future__ import annotations

import re

from ragloom.loaders.base import Parsed, ParseLimits
from ragloom.loaders.parsers.plain_text import decode_text

_H1 = re.compile(r"^ {0,3}#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_FRONT_MATTER_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)


def markdown_title(text: str) -> str | None:
    """The front matter's ``title:`` when there is one, else the first level-1 header."""
    if text.startswith("---\n"):
        end = text.find("\n---", 3)
        front = _FRONT_MATTER_TITLE.search(text, 4, end) if end > 0 else None
        if front:
            return front.group(1).strip("\"'")
    match = _H1.search(text)
    return match.group(1) if match else None


def parse(data: bytes, name: str, limits: ParseLimits) -> list[Parsed]:
    text = decode_text(data, name)
    title = markdown_title(text)
    return [Parsed(text=text, metadata={"title": title} if title else {})]

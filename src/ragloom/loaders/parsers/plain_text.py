"""Plain text: UTF-8 (with or without BOM), UTF-16 with BOM, or nearly-UTF-8."""

from __future__ import annotations

from ragloom.errors import ParseError
from ragloom.loaders.base import Parsed, ParseLimits

# Up to 1 replaced character in 100 is a stray Latin-1 byte in a UTF-8 file;
# more means the file is in another encoding or not text at all.
MAX_REPLACEMENT_RATIO = 0.01


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_text(data: bytes, name: str) -> str:
    """The text of ``data``; ParseError("not valid UTF-8 text") when it is not text."""
    if data.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8-sig"
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    else:
        encoding = "utf-8"
    try:
        return normalise_newlines(data.decode(encoding))
    except UnicodeDecodeError:
        pass
    text = data.decode(encoding, errors="replace")
    replaced = text.count("\ufffd") - data.decode("utf-8", "ignore").count("\ufffd")
    if replaced <= max(1, len(text) * MAX_REPLACEMENT_RATIO):
        return normalise_newlines(text)
    raise ParseError(name, "not valid UTF-8 text")


def parse(data: bytes, name: str, limits: ParseLimits) -> list[Parsed]:
    return [Parsed(text=decode_text(data, name))]

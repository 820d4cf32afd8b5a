"""Glob patterns for include / exclude: ``*`` stays within a folder, ``**`` crosses
folders, ``?`` is one character, ``[abc]`` a set. A pattern without ``/`` matches the
file name anywhere (``*.md``); one with ``/`` matches the path from the root."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache


@lru_cache(maxsize=256)
def _compile(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 1:]:
            end = pattern.index("]", i + 2 if pattern[i + 1:i + 2] == "]" else i + 1)
            body = pattern[i + 1:end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def glob_match(relative_path: str, pattern: str) -> bool:
    """Whether a ``/``-separated path relative to the root matches ``pattern``."""
    pattern = pattern.strip().lstrip("/") if pattern.strip().startswith("/") else pattern
    if "/" not in pattern:
        return bool(_compile(pattern).match(relative_path.rsplit("/", 1)[-1]))
    return bool(_compile(pattern).match(relative_path))


def any_match(relative_path: str, patterns: Sequence[str]) -> bool:
    return any(glob_match(relative_path, pattern) for pattern in patterns)

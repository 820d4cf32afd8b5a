"""``file_citation`` annotations for an answer, with or without markers in it.

The model is asked to cite passages as ``[1]``; markers (and OGX-style
``<|file-…|>``) are removed from the text and become annotations whose ``index`` is
the offset in the cleaned text. When the model writes no marker, each sentence is
attributed to the passage sharing the most content words with it, and if none
shares enough, the best passage is cited at the end: an answer drawn from files
always says which.

:class:`MarkerStripper` does the same cleaning on a stream of deltas, holding back
only what could still turn out to be a marker, so the streamed text equals the
final text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_MARKER = re.compile(r" ?(?:\[(\d+(?:\s*,\s*\d+)*)\]|<\|(file-[A-Za-z0-9_-]+)\|>|【(\d+)[^】]*】)")
_PARTIAL = re.compile(r"(?:\[[\d,\s]*|<(?:\|[A-Za-z0-9_-]*\|?)?|【[^】]*)$")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
_STOP = frozenset(re.findall(r"\S+", """
a an the is are was were be been of in on at to for from by with and or not it its this
that these those as than then there their they them he she his her we you your i our
has have had do does did can could should would may might will shall which who what when
where why how into about over under also only any some all each per""".lower()))
_REFUSAL = re.compile(r"\b(don'?t know|do not know|could not find|couldn'?t find|"
                      r"no information|not (?:mentioned|found|in the (?:context|documents)))\b",
                      re.IGNORECASE)


@dataclass(frozen=True)
class Passage:
    """A numbered passage given to the model, from one file."""

    number: int
    file_id: str
    filename: str
    text: str


def _words(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP}


def clean(text: str, passages: Sequence[Passage]) -> tuple[str, list[dict[str, Any]]]:
    """The text without markers, and the annotations the markers meant."""
    by_number = {p.number: p for p in passages}
    by_file = {p.file_id: p for p in passages}
    out: list[str] = []
    annotations: list[dict[str, Any]] = []
    position = 0
    length = 0
    for match in _MARKER.finditer(text):
        out.append(text[position:match.start()])
        length += match.start() - position
        position = match.end()
        cited: list[Passage] = []
        if match.group(1):
            cited = [by_number[n] for n in (int(x) for x in match.group(1).split(","))
                     if n in by_number]
        elif match.group(2) and match.group(2) in by_file:
            cited = [by_file[match.group(2)]]
        elif match.group(3) and int(match.group(3)) in by_number:
            cited = [by_number[int(match.group(3))]]
        for passage in cited:
            annotations.append(annotation(passage, length))
    out.append(text[position:])
    return "".join(out), _unique(annotations)


def annotation(passage: Passage, index: int) -> dict[str, Any]:
    return {"type": "file_citation", "file_id": passage.file_id,
            "filename": passage.filename, "index": index}


def _unique(annotations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[tuple[str, int]] = set()
    kept = []
    for item in annotations:
        key = (item["file_id"], item["index"])
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def inferred(text: str, passages: Sequence[Passage]) -> list[dict[str, Any]]:
    """Annotations for a text without markers: by word overlap, else the best passage."""
    if not passages or not text.strip() or _REFUSAL.search(text):
        return []
    passage_words = [_words(p.text) for p in passages]
    found: list[dict[str, Any]] = []
    for sentence in _SENTENCE.finditer(text):
        words = _words(sentence.group())
        if not words:
            continue
        overlaps = [len(words & pw) for pw in passage_words]
        best = max(range(len(passages)), key=lambda i: (overlaps[i], -i))
        if overlaps[best] >= 2 or overlaps[best] >= max(1, len(words) // 2):
            end = sentence.end()
            stripped = sentence.group().rstrip()
            while stripped and stripped[-1] in ".!?":
                stripped = stripped[:-1]
            end = sentence.start() + len(stripped)
            found.append(annotation(passages[best], end))
    if not found:
        found.append(annotation(passages[0], len(text.rstrip())))
    return _unique(found)


def cite(text: str, passages: Sequence[Passage]) -> tuple[str, list[dict[str, Any]]]:
    """The cleaned, stripped text and its file citations."""
    cleaned, annotations = clean(text, passages)
    stripped = cleaned.lstrip()
    shift = len(cleaned) - len(stripped)
    stripped = stripped.rstrip()
    annotations = [{**a, "index": min(max(0, a["index"] - shift), len(stripped))}
                   for a in annotations]
    if not annotations:
        annotations = inferred(stripped, passages)
    return stripped, annotations


class MarkerStripper:
    """Cleans a stream of deltas; ``feed`` and ``finish`` return text safe to send."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        self.passages = passages
        self.raw = ""
        self.sent = 0

    def _emit(self, upto: int) -> str:
        cleaned, _ = clean(self.raw[:upto], self.passages)
        # Trailing space is held back: a marker may follow and take it with it.
        cleaned = cleaned.strip()
        delta = cleaned[self.sent:]
        self.sent = max(self.sent, len(cleaned))
        return delta

    def feed(self, delta: str) -> str:
        self.raw += delta
        end = len(self.raw)
        partial = _PARTIAL.search(self.raw)
        if partial is not None:
            end = partial.start()
        return self._emit(end)

    def finish(self) -> str:
        return self._emit(len(self.raw))

"""Values inside sentences and table records: which figure belongs to which label,
and arithmetic on figures with units.

A record sentence (``label: value; label: value``) says which value is which; prose
does not, so there the figure nearest the attribute's words is taken. Figures are
parsed with their unit ("£2.40m", "1.29 kg", "3 minutes 40 seconds"), so a
difference keeps the unit and durations add up their parts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragloom.answering.gate import term_present
from ragloom.answering.grounding import content_words
from ragloom.retrieval.stemmer import porter_stem

_CELL = re.compile(r"(?:^|;\s*)([^:;]{1,60}):\s*([^;]+)")
_UNITS = ("kg|g|grams?|kilograms?|lbs?|tonnes?|km|kilometres?|kilometers?|miles?|mm|cm|m|"
          "metres?|meters?|litres?|liters?|l|ml|w|watts?|kw|kwh|wh|mah|v|volts?|gb|mb|tb|"
          "ghz|mhz|hz|inch(?:es)?|ft|feet|p|pence|percent|per cent|points?|hours?|hrs?|"
          "minutes?|mins?|seconds?|secs?|days?|weeks?|months?|years?|people|spaces|seats|"
          "items|rooms|pages|euros?|pounds?|dollars?")
_FIGURE = re.compile(r"([£$€]?)\s?(-?\d[\d,]*(?:\.\d+)?)(%|[a-zA-Z°]+\b|\s(?:" + _UNITS +
                     r")\b)?", re.I)
_YEAR = re.compile(r"^(?:1[5-9]|20)\d{2}$")
_TIME_UNITS = {"second": 1, "seconds": 1, "sec": 1, "secs": 1, "s": 1, "minute": 60,
               "minutes": 60, "min": 60, "mins": 60, "hour": 3600, "hours": 3600, "hr": 3600,
               "hrs": 3600, "h": 3600, "day": 86400, "days": 86400}


def cells(sentence: str) -> list[tuple[str, str]]:
    """The ``(label, value)`` cells of a record sentence (empty for prose)."""
    found = [(m.group(1).strip(), m.group(2).strip()) for m in _CELL.finditer(sentence)]
    return found if len(found) >= 2 else []


def holds(text: str, words: Sequence[str]) -> bool:
    """Whether ``text`` holds every one of ``words`` (or a word of the same stem); true
    for no words."""
    held = set(content_words(text))
    stems = {porter_stem(w) for w in held}
    return all(term_present(w, held, stems) for w in words)


def _present(words: Sequence[str], text: str) -> bool:
    return bool(words) and holds(text, words)


def _named(text: str, words: Sequence[str]) -> int:
    """How many of ``words`` ``text`` names."""
    held = set(content_words(text.replace("_", " ")))
    stems = {porter_stem(w) for w in held}
    return sum(1 for w in words if term_present(w, held, stems))


def _names_any(text: str, words: Sequence[str]) -> bool:
    return _named(text, words) > 0


def labelled(sentence: str, words: Sequence[str]) -> str:
    """The value of the cell whose label holds the most of ``words`` (the first of
    those, at least one: "high season" is the "High season" column, not the first
    column naming a season); in a row whose first cell names the attribute
    (``Feature: Weight; Value: 1.1 kg``), the next cell's value."""
    pairs = cells(sentence)
    counts = [_named(label, words) for label, _ in pairs]
    if counts and max(counts) > 0:
        return pairs[counts.index(max(counts))][1]
    if len(pairs) >= 2 and _names_any(pairs[0][1], words):
        return pairs[1][1]
    return ""


def cell_for(sentence: str, name: str) -> str:
    """The value of the cell whose label is ``name`` (a column named after a side)."""
    words = content_words(name)
    for label, value in cells(sentence):
        if _present(words, label) and any(ch.isdigit() for ch in value):
            return value
    return ""


_LABEL_SIGNS = {"gbp": "\u00a3", "\u00a3": "\u00a3", "usd": "$", "$": "$", "eur": "\u20ac",
                "\u20ac": "\u20ac"}
_LABEL_UNIT = re.compile(r"(?:_|\(|\[)\s*([\u00a3$\u20ac%]|[a-z]+)\s*[)\]]?\s*$", re.I)


def label_unit(label: str) -> tuple[str, str]:
    """The currency sign or unit a column's label gives its values: ``price_gbp``,
    ``Weight (kg)``, ``charge (\u00a3)``; ``("", "")`` when it names none."""
    found = _LABEL_UNIT.search(label.strip())
    if not found:
        return "", ""
    token = found.group(1).lower()
    if token in _LABEL_SIGNS:
        return _LABEL_SIGNS[token], ""
    if token == "%" or re.fullmatch(_UNITS, token):
        return "", token
    return "", ""


def with_label_unit(sentence: str, value: str) -> str:
    """``value`` with the sign or unit its column's label gives it, when it has none
    (``price_gbp: 549`` -> "\u00a3549")."""
    bare = re.fullmatch(r"\s*-?\d[\d,]*(?:\.\d+)?\s*", value)
    if not bare:
        return value
    for label, cell in cells(sentence):
        if cell.strip() == value.strip():
            sign, unit = label_unit(label)
            if sign:
                return sign + value.strip()
            if unit:
                return f"{value.strip()}{'' if unit == '%' else ' '}{unit}"
            break
    return value


@dataclass(frozen=True)
class Figure:
    """A parsed figure: its value, currency sign, unit, and the text it came from."""

    value: float
    sign: str
    unit: str
    text: str

    def same_kind(self, other: Figure) -> bool:
        if self.unit in _TIME_UNITS and other.unit in _TIME_UNITS:
            return True
        return self.sign == other.sign and self.unit == other.unit


def duration_seconds(text: str) -> float | None:
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*(seconds?|secs?|minutes?|mins?|hours?|hrs?|days?)\b",
                       text.lower())
    if not parts:
        return None
    return sum(float(n) * _TIME_UNITS[u] for n, u in parts)


def figures(text: str, *, avoid: str = "") -> list[Figure]:
    """Figures in ``text`` (years and numbers inside ``avoid`` left out)."""
    avoided = {m for m in re.findall(r"\d[\d.,]*", avoid)}
    found: list[Figure] = []
    for match in _FIGURE.finditer(text):
        number = match.group(2)
        before = text[max(0, match.start(2) - 1): match.start(2)]
        scale = text[max(0, match.start(2) - 8): match.start(2)].lower().endswith("out of ")
        if (number in avoided or (_YEAR.match(number) and not match.group(1))
                or before.isalpha() or scale):
            continue
        try:
            value = float(number.replace(",", ""))
        except ValueError:
            continue
        unit = (match.group(3) or "").strip().lower()
        found.append(Figure(value, match.group(1), unit, match.group(0).strip(" ,;")))
    return found


def first_figure(text: str, avoid: str = "") -> Figure | None:
    seconds = duration_seconds(text)
    if seconds is not None:
        return Figure(seconds, "", "seconds", text.strip())
    found = figures(text, avoid=avoid)
    return found[0] if found else None


def _number(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") if abs(value) >= 1000 else f"{value:.6g}"


def show(value: float, like: Figure) -> str:
    """``value`` written the way ``like`` is ("£0.2m", "0.06 kg", "70 seconds")."""
    if like.unit in _TIME_UNITS:
        total = round(value)
        minutes, seconds = divmod(total, 60)
        if minutes and seconds:
            return (f"{minutes} minute{'s' if minutes != 1 else ''} {seconds} second"
                    f"{'s' if seconds != 1 else ''} ({total} seconds)")
        return f"{minutes} minutes" if minutes else f"{seconds} seconds"
    unit = like.unit
    glue = "" if unit in ("%", "m", "k", "bn") or not unit else " "
    written = _number(value)
    if like.sign and not unit and re.search(r"\.\d\d(?!\d)", like.text) and value % 1:
        written = f"{value:,.2f}"  # pence stay two digits: "£1.10", not "£1.1"
    return f"{like.sign}{written}{glue}{unit}"


def difference(first: Figure, second: Figure) -> str:
    """``|first - second|`` in their shared unit ("" when they do not share one)."""
    if not first.same_kind(second):
        return ""
    return show(abs(first.value - second.value), first)

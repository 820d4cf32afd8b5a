"""Checking an answer against the passages it cites: claims, support, refusals.

Pure functions over text, shared by the answering pipeline (which falls back to a
quote when a model's answer is not supported) and the answer evaluation (which
counts unsupported claims). A *claim* is a number or a name in the answer: the
things a small model most often changes or invents. A number is supported when
the same value appears in the passages ("3.4" matches "3.40", "1,200" matches
"1200"); a name when its words appear in the passages or the question.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)*")
_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z'\u2019-]*[a-z][A-Za-z'\u2019-]*"
                          r"(?:\s+[A-Z][A-Za-z'\u2019-]*[a-z][A-Za-z'\u2019-]*)*")
_CITATION = re.compile(r"\s*\[(\d+)(?:\s*,\s*\d+)*\]")
_CITED_NUMBERS = re.compile(r"\d+")
_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE_START = re.compile(r"(^|[.!?:]\s+|\n)\s*[\"'(]*$")

# Words that start sentences or questions and are never names in themselves.
_COMMON_WORDS = """a an the it its this that these those there they them their he she his her
we our you your i yes no not if in on at by for from to of and or but so as is are was were
be been being do does did can could may might must should would will shall please note
answer according context passage passages source sources question based only also each every
all any some one two three four five six seven eight nine ten first second third monday
tuesday wednesday thursday friday saturday sunday january february march april may june july
august september october november december"""
_COMMON = frozenset(_COMMON_WORDS.split())

_REFUSALS = (
    "not found in the documents", "could not find", "couldn't find", "can't find",
    "cannot find", "do not know", "don't know", "dont know", "no information", "not mentioned",
    "not specified", "not stated", "not provided", "does not say", "doesn't say",
    "does not mention", "doesn't mention", "does not contain", "doesn't contain",
    "cannot answer", "can't answer", "unable to answer", "not available in the",
    "no answer", "not in the context", "not in the documents", "there is no mention",
)


@dataclass(frozen=True)
class Claim:
    """A number or a name found in an answer."""

    kind: str  # "number" or "name"
    text: str


def strip_citations(text: str) -> str:
    """The answer without its ``[1]``-style citation markers."""
    return _CITATION.sub("", text).strip()


def cited_numbers(text: str) -> list[int]:
    """Passage numbers cited as ``[1]`` or ``[1, 2]``, in order of first mention."""
    seen: dict[int, None] = {}
    for match in _CITATION.finditer(text):
        for number in _CITED_NUMBERS.findall(match.group()):
            seen.setdefault(int(number), None)
    return list(seen)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).replace("\u2019", "'")


def number_value(text: str) -> str:
    """A canonical form of a number: thousands separators dropped, trailing zeros of
    decimals dropped, so "3.40" and "3.4" compare equal; times ("9:30") kept as written."""
    if ":" in text:
        return text
    plain = text.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", text) else text
    plain = plain.replace(",", ".")
    if "." in plain:
        whole, _, fraction = plain.partition(".")
        fraction = fraction.rstrip("0")
        return f"{int(whole)}.{fraction}" if fraction else str(int(whole))
    return str(int(plain)) if plain.isdigit() else plain


def numbers_in(text: str) -> list[str]:
    return [match.group() for match in _NUMBER.finditer(_fold(strip_citations(text)))]


def claims_in(answer: str, *, question: str = "") -> list[Claim]:
    """Numbers and names the answer states (names the question itself uses are not claims)."""
    text = _fold(strip_citations(answer))
    claims = [Claim("number", n) for n in dict.fromkeys(numbers_in(text))]
    asked = set(_WORD.findall(_fold(question).lower()))
    for match in _CAPITALISED.finditer(text):
        name = match.group()
        if _SENTENCE_START.search(text[: match.start()]):
            # The first word of a sentence is capitalised anyway: not a name by itself.
            name = name.split(None, 1)[1] if " " in name else ""
        words = [w for w in _WORD.findall(name.lower()) if w not in _COMMON]
        if words and not set(words) <= asked:
            claims.append(Claim("name", name))
    return list(dict.fromkeys(claims))


def _as_float(text: str) -> float | None:
    try:
        return float(number_value(text))
    except ValueError:
        return None


def _differences(values: Iterable[str]) -> set[float]:
    """Every difference of two numbers of the evidence (rounded): a comparison that
    shows its arithmetic states a difference the passages imply."""
    numbers = [v for v in (_as_float(t) for t in values) if v is not None][:60]
    return {round(abs(a - b), 6) for i, a in enumerate(numbers) for b in numbers[i + 1:]}


def unsupported_claims(answer: str, passages: Iterable[str], *, question: str = "") -> list[Claim]:
    """The claims of ``answer`` that none of ``passages`` (nor the question) supports.

    A number is supported when the passages hold it, or when the answer shows it as
    the difference of two of their numbers (``a - b = c``, "Difference: c").
    """
    evidence = _fold("\n".join(passages))
    values = {number_value(n) for n in numbers_in(evidence + "\n" + question)}
    words = set(_WORD.findall((evidence + "\n" + question).lower()))
    shows_arithmetic = bool(re.search(r"\b(difference|change|short of|above it|up|down)\b|"
                                      r"\u2212|=", answer, re.I))
    differences = _differences(values) if shows_arithmetic else set()
    missing: list[Claim] = []
    for claim in claims_in(answer, question=question):
        if claim.kind == "number":
            value = _as_float(claim.text)
            derived = value is not None and round(value, 6) in differences
            if number_value(claim.text) not in values and not derived:
                missing.append(claim)
        else:
            named = [w for w in _WORD.findall(claim.text.lower()) if w not in _COMMON]
            if any(word not in words for word in named):
                missing.append(claim)
    return missing


def is_refusal(text: str) -> bool:
    """Whether an answer says the documents do not hold the answer."""
    folded = _fold(text).lower()
    return not folded.strip() or any(phrase in folded for phrase in _REFUSALS)


def content_words(text: str, stop: Sequence[str] = ()) -> list[str]:
    """Lower-case words of ``text`` that carry meaning (no stop words, no 1-letter words)."""
    skip = _STOP | set(stop)
    return [w for w in _WORD.findall(_fold(text).lower()) if len(w) > 1 and w not in skip]


_COMPOUND = re.compile(r"\b([A-Za-z]+)[-\u2010\u2011 ]([A-Za-z]+)\b")


def compound_words(text: str) -> list[str]:
    """Hyphenated or split compounds of ``text`` written as one word ("Wi-Fi" ->
    "wifi", "check in" -> "checkin"), as people type them."""
    return [(a + b).lower() for a, b in _COMPOUND.findall(_fold(text)) if len(a) + len(b) >= 4]


_STOP_WORDS = """a an the is are was were be been being am do does did doing have has had
having of to in on at by for from with about as into through over under after before between
and or but not no nor so than too very can could should would will shall may might must what
which who whom whose when where why how much many long often i me my we our you your he him
his she her it its they them their this that these those there here if then else also just
only any some each every all both more most other such own same per up down out off again
further once get gets got give given take takes taken need needs needed use used using s t
whats wheres whos hows whens whys thats theres im ive id youre dont doesnt didnt cant
wont isnt arent wasnt werent""" # the last two lines: contractions typed without the apostrophe
_STOP = frozenset(_STOP_WORDS.split())

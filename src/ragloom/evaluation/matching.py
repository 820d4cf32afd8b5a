"""Does an answer contain an accepted answer? Two normalisations.

* ``ragloom`` (the default): lower case, NFKC, currency and percent signs spaced out,
  punctuation dropped except inside numbers, a unit written against a number split
  off ("£2.40m" is "£ 2.4 m", "50p" is "50 p"), numbers compared by value ("3.40"
  is "3.4", "1,000" is "1000").
* ``squad``: SQuAD's own (lower case, every ASCII punctuation mark removed, the
  articles a/an/the removed, single spaces), as the SQuAD 2.0 evaluation script
  normalises answers.

Either way the accepted answer must appear on word boundaries, so "6" does not
match "16". An accepted string may hold alternatives separated by ``|``
("30 minutes|half an hour"): any one of them counts.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable

from ragloom.answering.grounding import number_value

MATCHINGS = ("ragloom", "squad")

_SYMBOLS = re.compile(r"([£$€%°])")
_SOFT = re.compile(r"(?<!\d)[.:,/](?!\d)|[.:,/](?=\s|$)|-")
_OTHER = re.compile(r"[^\w\s£$€%°.:,\-/]")
_NUMERIC = re.compile(r"\d+(?:[.,:]\d+)*")
_UNIT = re.compile(r"(\d)([a-z]+)\b")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def normalise(text: str) -> str:
    """Lower case, NFKC, symbols spaced out, punctuation dropped except inside numbers."""
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")
    text = _SYMBOLS.sub(r" \1 ", _OTHER.sub(" ", text))
    text = _UNIT.sub(r"\1 \2", _SOFT.sub(" ", text))
    return " ".join(number_value(w) if _NUMERIC.fullmatch(w) else w for w in text.split())


def normalise_squad(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no a/an/the, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def alternatives(accepted: str) -> list[str]:
    """The alternatives of one accepted string ("a|b" is "a" or "b")."""
    return [part.strip() for part in accepted.split("|") if part.strip()]


def contains_answer(answer: str, accepted: Iterable[str], matching: str = "ragloom") -> bool:
    """Whether ``answer`` holds any accepted answer (or any of its alternatives)."""
    return hits(answer, [alt for gold in accepted for alt in alternatives(gold)], matching) > 0


def hits(answer: str, items: Iterable[str], matching: str = "ragloom") -> int:
    """How many of ``items`` (each possibly "a|b" alternatives) ``answer`` holds."""
    norm = normalise_squad if matching == "squad" else normalise
    padded = f" {norm(answer)} "
    found = 0
    for item in items:
        forms = [norm(alt) for alt in alternatives(item)]
        if any(form and f" {form} " in padded for form in forms):
            found += 1
    return found

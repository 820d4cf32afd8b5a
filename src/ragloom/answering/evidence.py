"""What a question asks for, and whether retrieved text covers it.

Two cheap signals that a 135M model cannot give reliably:

* the *kind* of answer a question expects ("how much" -> an amount, "what time" -> a
  time, "who" -> a name...), used to rank sentences that hold such an answer higher
  and to check that the evidence holds one at all;
* the question's *key terms* the retrieved passages lack: a question about a
  "pension" answered from passages that never say "pension" is not answered by
  them, however similar their embeddings are. Words that frame a question ("cost",
  "take place") rather than name its subject are not key terms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ragloom.answering.grounding import content_words
from ragloom.retrieval.stemmer import porter_stem

# Words that say what kind of answer is wanted, not what the question is about.
_FRAME_WORDS = """amount cost costs price prices fee fees charge charges pay paid much many
long often
time times take takes took taken place happen happens mean means meaning allowed allow need
needed required require get gets find found located kind sort type name named called tell
told say says said give given contain contains include includes start starts end ends open opens
close closes run runs usually normally exactly current currently available one two three
four five six seven eight nine ten first
go goes going went gone come comes coming make makes made let lets put puts keep keeps kept
number numbers date dates last latest earliest final"""
# The last two lines: light verbs ("go up", "going to cost"), nouns that name the
# kind of answer ("phone number", "date of the next meeting"), which the answer's
# typed value stands for, and words that pick one of several values ("last bus",
# like "first" above), which a timetable does not write.
_FRAME = frozenset(_FRAME_WORDS.split())

_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("phone", re.compile(r"\b(phone|telephone|call)\b.*\bnumber\b|\bnumber\b.*\b(phone|call)\b",
                         re.I)),
    ("frequency", re.compile(r"\bhow often\b", re.I)),
    ("duration", re.compile(r"\bhow long\b|\bfor how (long|many (days|weeks|months|years|"
                            r"hours|minutes))\b", re.I)),
    ("time", re.compile(r"\bwhat time\b|\bwhen does\b.*\b(open|close|start)\b|"
                        r"\b(opening|what) hours\b", re.I)),
    ("money", re.compile(r"\bhow much\b.*\b(cost|costs|charge|pay|fee|price|is|are|extra)\b|"
                         r"\b(price|cost|fee|limit|allowance)\b", re.I)),
    ("count", re.compile(r"\bhow many\b|\bwhat (number|percentage)\b", re.I)),
    ("person", re.compile(r"^\s*who\b", re.I)),
)

_PATTERNS = {
    "phone": re.compile(r"\d{3,}[\s-]\d{3,}"),
    "frequency": re.compile(r"\b(every|each|once|twice|daily|weekly|monthly|yearly|annually|"
                            r"per)\b", re.I),
    "duration": re.compile(r"(\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|twelve|"
                           r"fifteen|twenty|thirty))\s*(-\s*)?(seconds?|minutes?|hours?|days?|"
                           r"weeks?|months?|years?)\b", re.I),
    "time": re.compile(r"\d{1,2}[:.]\d{2}|\b\d{1,2}\s*(am|pm)\b", re.I),
    "money": re.compile(r"[£$€]\s?\d|\d\s?(euros?|pounds?|dollars?|p)\b|\d+\.\d+|"
                        r"price|\bfree\b", re.I),
    "count": re.compile(r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|twelve|"
                        r"fifteen|twenty|thirty)\b", re.I),
    "person": re.compile(r"\b[A-Z][a-z]+\s+[A-Z][a-z]+"),
}


def expected_kind(question: str) -> str | None:
    """The kind of answer the question asks for, if it says."""
    for kind, pattern in _KINDS:
        if pattern.search(question):
            return kind
    return None


def has_kind(text: str, kind: str | None) -> bool:
    """Whether ``text`` holds an answer of ``kind`` (always true for no kind)."""
    return kind is None or bool(_PATTERNS[kind].search(text))


def key_terms(question: str) -> list[str]:
    """The question's content words that name its subject (frame words left out;
    numbers stay: "the Fibre 1000 plan" is not answered by text about Fibre 500)."""
    return [w for w in content_words(question) if w not in _FRAME]


def missing_terms(question: str, passages: Iterable[str]) -> list[str]:
    """Key terms of the question found in none of the passages (compared stemmed)."""
    present: set[str] = set()
    for text in passages:
        present.update(porter_stem(w) for w in content_words(text))
    return [w for w in key_terms(question) if porter_stem(w) not in present]

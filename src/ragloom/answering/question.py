"""Understanding a question without asking the model: what kind of answer it wants and
what it is about.

The kind decides the strategy (:mod:`ragloom.answering.strategies`): a *lookup* wants
one fact (a value, a date, a name, a yes/no), a *list* every matching item, a
*comparison* two facts side by side, a *summary* the main points of a document, a
*procedure* the steps as written, *mentions* every passage naming something. The
rules read the question's grammatical form ("summarise …", "which … are …", "… than
…", "how do I …"), never words of one document set, so they carry over to documents
nobody has seen.

The *subject* is what the evidence must be about: names, model numbers, codes and
numbers the question mentions ("model 14", "Kingsbridge council", "2025"). Evidence
about another subject ("model 13") never answers the question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from ragloom.answering.evidence import key_terms

Kind = Literal["lookup", "list", "comparison", "summary", "procedure", "mentions"]
KINDS: tuple[str, ...] = ("lookup", "list", "comparison", "summary", "procedure", "mentions")

_SUMMARY = re.compile(
    r"^\s*(please\s+)?(summari[sz]e|sum up|give (me )?(a |an )?(short |brief |quick )?"
    r"(summary|overview|outline|rundown)|tl;?dr|overview of)\b"
    r"|\b(main|key|important|major) (points?|takeaways?|ideas?|messages?|findings?|changes?|"
    r"rules?|decisions?)\b"
    r"|\bwhat (was|were|got|has been|have been) (decided|agreed|concluded|discussed)\b"
    r"|\b(summary|overview|gist) of\b|\bwhat (is|are) .{1,60} about\s*\??$"
    r"|\bwhat (happened|happend|went on|was said|was agreed)\b", re.I)
_MENTIONS = re.compile(
    r"\b(find|list|show|give)( me)? (all|every|each) (the )?(mentions?|references?|"
    r"occurrences?|places?|passages?)\b|\bwhere (is|are|does|do) .{1,60} (mentioned|"
    r"referenced|appear|come up)\b|\b(which|what) (documents?|files?|passages?|pages?) "
    r"(mention|refer to|talk about|discuss)\b"
    r"|^\s*(tell me )?(everything|anything|all) (about|on|regarding|mentioning)\b"
    r"|\bwhat do(es)? (the|these|my|our) (documents?|files?|docs?) say (about|on)\b", re.I)
_COMPARISON = re.compile(
    r"\b(compare|comparison|difference|differ|versus|vs\.?)\b"
    r"|\b(more|less|fewer|bigger|smaller|lighter|heavier|cheaper|dearer|costlier|faster|"
    r"quicker|slower|longer|shorter|higher|lower|older|newer|larger|greater|wider|narrower|"
    r"warmer|colder|hotter|better|worse|earlier|later|thinner|thicker)\b.{0,60}"
    r"\b(than|compared (to|with))\b"
    r"|\bdid\b.{1,80}\b(hit|meet|reach|exceed|beat|miss|make|achieve)\b.{0,30}"
    r"\b(target|goal|budget|forecast|plan|quota)s?\b"
    r"|\b(above|below|over|under) (its|their|the) (target|goal|budget|forecast)\b"
    r"|\b(cheapest|dearest|lightest|heaviest|quickest|fastest|slowest|longest|shortest|"
    r"biggest|largest|smallest|highest|lowest|most expensive|least expensive|thinnest|"
    r"thickest|widest|narrowest)\b"
    r"|\b(cheaper|dearer|lighter|heavier|quicker|faster|slower|bigger|smaller|larger|"
    r"thinner|thicker)\b"
    r".{0,50}\bor\b"
    r"|\bhow much (did|has|have|does|do)\b.{1,60}\b(go up|gone up|go down|increase|rise|"
    r"grow|fall|drop|decrease|change|improve)", re.I)
_PROCEDURE = re.compile(
    r"^\s*(how (do|can|should|would|to)\s+(i|you|we|one|they)?\b|how to\b|"
    r"what (are the )?steps?\b|what (should|do|must) (i|we|you) do\b)"
    r"|\bsteps? (to|for)\b|\binstructions? (to|for)\b|\bprocedure (to|for)\b", re.I)
# "which X are/have...", "what Xs ...", "list the ...", "name all ..."
_LIST = re.compile(
    r"^\s*(list|name|enumerate)\b|\b(all|every) (the )?\w+s\b(?! of the)"
    r"|^\s*(which|what) (\w+ ){0,2}\w+s (are|were|have|has|do|does|can|will|is|open|"
    r"offer|need|take|support|include|accept)\b|^\s*what (are|were) (all )?the \w+s\b"
    r"|^\s*(\w+ )?\w+s (with|without|that|which|where|under|over|open|in stock|out of)\b"
    r"|^\s*which \w+s\b",  # "which plants at trelowen aren't safe for pets"
    re.I)
_NOT_PLURAL = frozenset([
    "is", "was", "has", "does", "this", "its", "his", "hers", "yours", "ours", "theirs",
    "always", "perhaps", "plus", "less", "unless", "across", "thus", "bus", "gas", "yes",
    "news", "series", "species"])
_YES_NO = re.compile(r"^\s*(is|are|was|were|do|does|did|can|could|will|would|should|has|"
                     r"have|had|may|must)\b", re.I)
# Names, codes and numbers the evidence must share with the question.
_CODE = re.compile(r"\b(?=[A-Za-z0-9-]*[A-Za-z])(?=[A-Za-z-]*\d)[A-Za-z0-9][A-Za-z0-9-]*\b"
                   r"|\b(?:1[5-9]|20)\d{2}\b")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z\u00c0-\u00de][\w'\u2019-]+"
                   r"(?:\s+[A-Z\u00c0-\u00de][\w'\u2019-]+)*")


@dataclass(frozen=True)
class Question:
    """A question read for its kind, its subject and its key terms."""

    text: str
    kind: Kind
    yes_no: bool = False
    subject: tuple[str, ...] = field(default_factory=tuple)
    terms: tuple[str, ...] = field(default_factory=tuple)

    @property
    def focus(self) -> str:
        """The question without its frame ("summarise the X" -> "the X")."""
        text = re.sub(r"^\s*(please\s+)?(can you\s+)?(summari[sz]e|sum up|list|name|"
                      r"(find|list|show|give)( me)? (all|every|each) (the )?(mentions?|"
                      r"references?|occurrences?|places?|passages?)( of| to| about)?|give (me )?"
                      r"(a |an )?(summary|overview) of|what are the (main|key) points "
                      r"(of|in|from)|(tell me )?(everything|anything|all) (about|on|regarding|"
                      r"mentioning)|what do(es)? (the|these|my|our) (documents?|files?|docs?) "
                      r"say (about|on)|where (is|are|does|do))\s*", "", self.text, flags=re.I)
        text = re.sub(r"\s+(mentioned|referenced|appear|come up)\s*\??\s*$", "", text,
                      flags=re.I)
        return text.strip(" ?.") or self.text


def _plural_list(question: str) -> bool:
    match = _LIST.search(question)
    if not match:
        return False
    plural = re.findall(r"\b(\w+s)\b", match.group(0).lower())
    return any(word not in _NOT_PLURAL and not word.endswith("ss") for word in plural) or \
        bool(re.match(r"^\s*(list|name|enumerate)\b", question, re.I))


#: A word followed by a one-letter label: "band d", "type c", "plan b", "zone a".
_LETTER_LABEL = re.compile(r"\b([A-Za-z]{3,})\s+([A-Za-z])\b(?![.'\u2019]\w)")
_UNLABELLED = ("a an the is are was were be for of to in on at by from with and or but not "
               "what which who how when where why does do did can could should would will "
               "has have had")
_NOT_LABELLED = frozenset(_UNLABELLED.split())


def letter_labels(question: str) -> tuple[str, ...]:
    """The question's one-letter labels with the word they label ("band d"): a letter
    is no word of its own, so without this "band d" and "band c" read the same. "a"
    and "i" count only written as capitals ("band A"; "want a bin" has no label)."""
    found = []
    for match in _LETTER_LABEL.finditer(question):
        word, letter = match.group(1), match.group(2)
        if word.lower() in _NOT_LABELLED or (letter in "ai"):
            continue
        found.append(f"{word.lower()} {letter.lower()}")
    return tuple(dict.fromkeys(found))


def holds_label(label: str, text: str) -> bool:
    """Whether ``text`` names ``label`` ("band d"): "Band D", "band: D", "BAND-D"."""
    word, letter = label.split()
    return re.search(rf"\b{re.escape(word)}\W{{1,3}}{re.escape(letter)}\b", text,
                     re.IGNORECASE) is not None


def subject_of(question: str) -> tuple[str, ...]:
    """Codes, numbers, one-letter labels ("band d") and proper names in the question
    (its first word excepted)."""
    found: list[str] = list(letter_labels(question))
    for match in _CODE.finditer(question):
        found.append(match.group(0).strip(".-/"))
    body = question.strip()
    for match in _NAME.finditer(body):
        if match.start() == 0:
            continue
        found.append(match.group(0))
    return tuple(dict.fromkeys(item for item in found if item))


_WHY = re.compile(r"^\s*(why|how come|what (was|is) the reason)\b", re.I)


def classify(question: str) -> Kind:
    """The kind of answer a question asks for, from its form."""
    if _MENTIONS.search(question):
        return "mentions"
    if _SUMMARY.search(question):
        return "summary"
    if _COMPARISON.search(question) and not _WHY.match(question):
        # "why did the south miss its target" asks for a reason, not the figures.
        return "comparison"
    if _PROCEDURE.search(question):
        return "procedure"
    if _plural_list(question):
        return "list"
    return "lookup"


def read_question(question: str, kind: Kind | None = None) -> Question:
    """The question's kind (or the one given), subject and key terms."""
    return Question(text=question, kind=kind or classify(question),
                    yes_no=bool(_YES_NO.match(question)), subject=subject_of(question),
                    terms=tuple(key_terms(question)))

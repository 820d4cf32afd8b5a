"""Supporting sentences: the retrieved passages cut into sentences and ranked.

A small model answers best from a few sentences rather than whole passages, and a
sentence is what a user can check. Each sentence keeps the number of the passage it
came from (as numbered in the answer's sources), so a citation follows it.

Ranking mixes three signals, each in [0, 1]: the embedder's cosine between the
question and the sentence, the share of the question's content words the sentence
holds (stemmed, weighted by idf over the candidate sentences), and the retrieval
score of the passage. Table rows, slide bullets and list items are sentences of
their own: a line break ends a sentence unless the line looks wrapped (a long line
that does not end a sentence, as PDF text lines are).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import PurePath

import numpy as np

from ragloom.answering.evidence import expected_kind, has_kind
from ragloom.answering.grounding import compound_words, content_words, numbers_in
from ragloom.answering.question import holds_label, letter_labels
from ragloom.answering.tables import with_records
from ragloom.chunking.sentences import sentence_spans
from ragloom.errors import RagError
from ragloom.protocols import EmbeddingProvider
from ragloom.retrieval.stemmer import porter_stem
from ragloom.types import QueryMatch, Vector

WRAPPED_LINE = 70  # a line at least this long that ends mid-sentence was wrapped
_SENTENCE_END = re.compile(r"[.!?:;)\]\"'\u201d]\s*$")
_RECORD = re.compile(r"^\s*[^:\n]{1,40}: \S")  # "item: Espresso; size: single" rows
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)|\*\*|__|`")


@dataclass(frozen=True)
class Sentence:
    """One sentence of a retrieved passage and how well it answers the question."""

    text: str
    number: int  # the passage's number among the answer's sources (1-based)
    position: int  # order of the sentence within its passage
    source: str = ""
    score: float = 0.0
    dense: float = 0.0
    lexical: float = 0.0


def _unwrap(text: str) -> str:
    """Join wrapped lines (long lines that end mid-sentence) with a space."""
    lines = text.split("\n")
    joined: list[str] = []
    for line in lines:
        previous = joined[-1] if joined else ""
        if (previous.strip() and line.strip() and len(previous) >= WRAPPED_LINE
                and not _SENTENCE_END.search(previous)
                and not (_RECORD.match(previous) and _RECORD.match(line))):
            joined[-1] = f"{previous.rstrip()} {line.strip()}"
        else:
            joined.append(line)
    return "\n".join(joined)


def split_sentences(text: str) -> list[str]:
    """Sentences of a passage: sentence ends, blank lines and unwrapped line breaks.

    A lead-in of one or two words ("Hotels.") stays with the sentence after it. Table
    rows become ``header: value; ...`` records (:mod:`ragloom.answering.tables`).
    """
    text = _unwrap(with_records(text))
    pieces: list[str] = []
    for start, end in sentence_spans(text):
        pieces.extend(line.strip() for line in text[start:end].split("\n") if line.strip())
    cleaned = [_MARKUP.sub("", piece).strip() for piece in pieces]
    cleaned = [piece for piece in cleaned if any(ch.isalnum() for ch in piece)]
    merged: list[str] = []
    carry = ""
    for piece in cleaned:
        piece = f"{carry} {piece}" if carry else piece
        carry = ""
        if re.fullmatch(r"\d+(\.\d+)*\.?", piece):
            continue  # a section number ("6.") on its own says nothing
        if len(piece.split()) <= 2 and piece.endswith("."):
            carry = piece
        else:
            merged.append(piece)
    if carry:
        merged.append(carry)
    return merged


def _echoes(text: str, asked: set[str]) -> bool:
    """Whether a sentence says nothing the question does not already say."""
    return not numbers_in(text) and set(_stems(text)) <= asked


_LABEL = re.compile(r"(?:^|;\s*)([^:;]{1,60}):\s*[^;]+")


def _names_column(text: str, asked: set[str]) -> bool:
    """Whether ``text`` reads ``label: value`` and a label holds a word of the question."""
    labels = _LABEL.findall(text)
    if not labels or (len(labels) == 1 and len(text) > 120):
        return False
    return any(set(_stems(label.replace("_", " "))) & asked for label in labels)


def is_record(text: str) -> bool:
    """A table row read as ``header: value; header: value`` (two labels or more)."""
    return len(_LABEL.findall(text)) >= 2


def is_heading(text: str) -> bool:
    """A title or heading: short, no sentence end, mostly capitalised words (or up to
    four words with no number, such as "Error codes")."""
    words = [w for w in re.findall(r"[^\W_]+", text) if not w.isdigit()]
    if not words or len(words) > 8 or _SENTENCE_END.search(text) or ";" in text:
        return False
    if len(words) <= 4 and not any(ch.isdigit() for ch in text):
        return True
    capitalised = sum(1 for w in words if w[0].isupper())
    return capitalised / len(words) >= 0.6 or text.lower().startswith(("slide ", "sheet:"))


def candidate_sentences(matches: Sequence[QueryMatch]) -> list[Sentence]:
    """Every sentence of the passages, numbered by passage (duplicates kept once)."""
    seen: set[str] = set()
    found: list[Sentence] = []
    for number, match in enumerate(matches, start=1):
        for position, text in enumerate(split_sentences(match.chunk.text)):
            key = " ".join(text.lower().split())
            if key in seen:
                continue
            seen.add(key)
            found.append(Sentence(text=text, number=number, position=position,
                                  source=match.chunk.source))
    return found


def document_name_parts(match: QueryMatch) -> list[str]:
    """The names a passage's document goes by: its file name (without extension, dashes
    and underscores as spaces), its title and its section heading (those it has)."""
    chunk = match.chunk
    stem = PurePath(chunk.source).stem.replace("-", " ").replace("_", " ") if chunk.source else ""
    title = str(chunk.metadata.get("title", "") or "")
    section = str(chunk.metadata.get("section", "") or chunk.metadata.get("heading", "") or "")
    return [part for part in (stem, title, section) if part]


def document_names(match: QueryMatch) -> str:
    """:func:`document_name_parts` as one text, a line each."""
    return " \n".join(document_name_parts(match))


def _stems(text: str) -> list[str]:
    return [porter_stem(word) for word in content_words(text)]


def lexical_scores(question: str, sentences: Sequence[str],
                   names: Sequence[str] | None = None) -> list[float]:
    """Share of the question's content words (idf-weighted) that each sentence holds.

    ``names`` (one per sentence: its document's file name, title and section) count
    as held by the sentence: the words that name a document locate the document, and
    every sentence of it is about them; the question's other words (what it asks
    about the subject) then decide between its sentences ("who presented the 2025
    sales review" is answered by "Presented by Helen Marsh" in the 2025 review, not
    by its title line that repeats "Sales Review 2025").
    """
    asked = list(dict.fromkeys(_stems(question)))
    if not asked or not sentences:
        return [0.0] * len(sentences)
    held = [set(_stems(text)) | {porter_stem(w) for w in compound_words(text)}
            for text in sentences]
    if names is not None:
        held = [terms | set(_stems(name)) for terms, name in zip(held, names, strict=True)]
    frequency = Counter(term for terms in held for term in terms if term in asked)
    total = len(sentences)
    # Lucene's idf stays positive, so a word found in every sentence still counts a little.
    weight = {t: math.log(1 + (total - frequency[t] + 0.5) / (frequency[t] + 0.5)) for t in asked}
    norm = sum(weight.values()) or 1.0
    return [sum(weight[t] for t in asked if t in terms) / norm for terms in held]


@dataclass(frozen=True)
class SentenceWeights:
    """How the signals mix; tuned on the dev half of bench/answers."""

    dense: float = 0.5
    lexical: float = 0.4
    retrieval: float = 0.1
    kind: float = 0.15  # bonus when the sentence holds the kind of answer asked for
    # Factor for titles, headings, questions and sentences that only repeat the
    # question's words (an FAQ's question line): they rarely answer anything.
    heading: float = 0.6
    # Bonus for a table row with a column the question names ("weight of the kx200"
    # -> ``Weight (empty): 1.1 kg``; "capacity" -> ``capacity: 120``).
    label: float = 0.15


class SentenceRanker:
    """Ranks the sentences of retrieved passages for a question.

    ``embedder`` is usually the knowledge base's; without one, only words count.
    """

    def __init__(self, embedder: EmbeddingProvider | None = None, *,
                 weights: SentenceWeights | None = None) -> None:
        self.embedder = embedder
        self.weights = weights or SentenceWeights()

    def rank(self, question: str, matches: Sequence[QueryMatch]) -> list[Sentence]:
        """Sentences best first, each with its ``score``, ``dense`` and ``lexical`` parts."""
        sentences = candidate_sentences(matches)
        if not sentences:
            return []
        texts = [s.text for s in sentences]
        lexical = lexical_scores(question, texts,
                                 [document_names(matches[s.number - 1]) for s in sentences])
        dense = self._dense(question, texts)
        retrieval = [matches[s.number - 1].score for s in sentences]
        w = self.weights
        kind = expected_kind(question)
        asked = set(_stems(question))
        labels = letter_labels(question)
        scored = []
        for s, d, lx, r in zip(sentences, dense, lexical, retrieval, strict=True):
            score = w.dense * d + w.lexical * lx + w.retrieval * r
            if kind is not None and has_kind(s.text, kind):
                score += w.kind
            if _names_column(s.text, asked):
                score += w.label
            if labels and any(holds_label(label, s.text) for label in labels):
                score += w.label  # "band d" -> the row "band: D; ..."
            if is_heading(s.text) or s.text.rstrip().endswith("?") or _echoes(s.text, asked):
                score *= w.heading
            scored.append(replace(s, score=score, dense=d, lexical=lx))
        return sorted(scored, key=lambda s: (-s.score, s.number, s.position))

    def _dense(self, question: str, texts: list[str]) -> list[float]:
        if self.embedder is None:
            return [0.0] * len(texts)
        try:
            query = self.embedder.embed_query(question)
            documents = self.embedder.embed_documents(texts)
        except RagError:
            # The embedder is down (search has already fallen back to keywords and
            # says so): words alone still pick the supporting sentence.
            return [0.0] * len(texts)
        if not isinstance(query, Vector) or not all(isinstance(d, Vector) for d in documents):
            return [0.0] * len(texts)
        q = query.values / max(float(np.linalg.norm(query.values)), 1e-12)
        scores = []
        for document in documents:
            values = document.values  # type: ignore[union-attr]
            scores.append(float(np.dot(q, values) / max(float(np.linalg.norm(values)), 1e-12)))
        return [max(0.0, s) for s in scores]

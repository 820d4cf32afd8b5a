"""The offline extractor: entities and co-occurrence relations without a language model.

Entities are of two kinds:

* **names**: runs of capitalised words and acronyms ("Harbor Transit Authority",
  "HTA", "Elena Varga"), the spans a named-entity recogniser would mostly find in
  English prose. A capitalised word that starts a sentence counts only when the
  document also capitalises it elsewhere, so "Never" or "Cleaning" are not names.
* **key phrases**: the top phrases of each chunk by YAKE (``yake`` on PyPI, the
  ``graph`` extra), a statistical keyword extractor that needs no model or download.

Every entity keeps the sentence it was found in as evidence. Two entities in one
sentence are related (weight 1 per sentence; the label is the few words between them
when they read as a verb phrase, e.g. "was designed by", else ``co_occurs_with``);
two in one chunk but not one sentence are related more weakly (``same_passage``,
weight 0.25). Weights add up across chunks and documents in the store.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ragloom.errors import MissingDependencyError
from ragloom.graph.merge import name_key
from ragloom.graph.model import ChunkGraph, DocumentGraph, Entity, Relation
from ragloom.types import TextChunk, TextDocument

_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")
_WORD = r"(?:[A-Z][\w'\u2019\-]*\w|[A-Z])"
_NAME = re.compile(
    rf"\b{_WORD}(?:(?:\s+(?:of|de|du|da|van|von|&)\s+|[ \t]+){_WORD}|[ \t]+\d[\w\-]*)*")
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9]{1,7}$")
_LABEL = re.compile(r"^[a-z][a-z'\- ]*$")
_MAX_EVIDENCE = 300
_SAME_SENTENCE = 1.0
_SAME_PASSAGE = 0.25


@dataclass(frozen=True)
class OfflineExtractor:
    """Names and key phrases per chunk, related by co-occurrence; no model, no network.

    ``key_phrases`` is how many YAKE phrases each chunk contributes (0: names only,
    and then ``yake`` is not needed); ``max_words`` the longest key phrase;
    ``max_per_chunk`` caps the entities of one chunk that take part in
    ``same_passage`` relations (the most salient ones), bounding relations per chunk.
    """

    key_phrases: int = 10
    max_words: int = 3
    max_per_chunk: int = 8

    @property
    def name(self) -> str:
        return f"offline-v1(k={self.key_phrases},n={self.max_words})"

    @cached_property
    def _yake(self) -> Any:
        try:
            import yake
        except ImportError as exc:
            raise MissingDependencyError("yake", "graph", "offline graph extraction") from exc
        return yake.KeywordExtractor(lan="en", n=self.max_words, top=self.key_phrases)

    @cached_property
    def _stopwords(self) -> frozenset[str]:
        if self.key_phrases <= 0:
            return _FEW_STOPWORDS
        return frozenset(self._yake.stopword_set) | _FEW_STOPWORDS

    def extract(self, document: TextDocument, chunks: Sequence[TextChunk]) -> DocumentGraph:
        started = time.perf_counter()
        sentences = [_sentences(chunk.text) for chunk in chunks]
        vocabulary = self._vocabulary(sentences)
        pattern = _pattern(vocabulary)
        graphs = tuple(self._chunk_graph(chunk, chunk_sentences, vocabulary, pattern)
                       for chunk, chunk_sentences in zip(chunks, sentences, strict=True))
        return DocumentGraph(document_id=document.id, extractor=self.name, chunks=graphs,
                             seconds=time.perf_counter() - started)

    # ----------------------------------------------------------------- vocabulary
    def _vocabulary(self, sentences: list[list[str]]
                    ) -> dict[str, tuple[str, str]]:
        """key -> (display name, type) of every entity the document names."""
        mid_capitals: set[str] = set()
        spans: list[tuple[str, bool]] = []
        for chunk_sentences in sentences:
            for sentence in chunk_sentences:
                for match in _NAME.finditer(sentence):
                    at_start = not sentence[:match.start()].strip(" \t#*->•\"'(0123456789.")
                    spans.append((match.group(0), at_start))
                    if not at_start and " " not in match.group(0):
                        mid_capitals.add(match.group(0))
        vocabulary: dict[str, tuple[str, str]] = {}
        for span, at_start in spans:
            name = self._clean_name(span, at_start, mid_capitals)
            if name:
                kind = "acronym" if _ACRONYM.match(name) else "name"
                vocabulary.setdefault(name_key(name), (name, kind))
        if self.key_phrases > 0:
            name_words = {word for name in vocabulary for word in name.split()}
            document_text = name_key(" ".join(" ".join(s) for s in sentences))
            for chunk_sentences in sentences:
                # Sentences joined with full stops: a heading is not part of the next line.
                text = " ".join(s if s[-1:] in ".!?:" else s + "." for s in chunk_sentences)
                phrases = [p for p, _ in self._yake.extract_keywords(text)]
                keys = [name_key(p) for p in phrases]
                kept = [k for p, k in zip(phrases, keys, strict=True) if self._is_phrase(p, k)]
                for phrase, key in zip(phrases, keys, strict=True):
                    # A phrase sharing a word with a name ("Monday to Saturday", "designed
                    # by Elena") would hide the name: names win.
                    inside = any(word in name_words for word in key.split())
                    # A lone word is a key concept only if the document repeats it.
                    rare = " " not in key and document_text.count(key) < 2
                    if key in kept and key not in vocabulary and not inside and not rare:
                        vocabulary[key] = (phrase.lower() if phrase[1:].islower() else phrase,
                                           "concept")
        return vocabulary

    def _clean_name(self, span: str, at_start: bool, mid_capitals: set[str]) -> str:
        words = span.split()
        while words and words[0].lower() in self._stopwords:
            words, at_start = words[1:], False
        while words and words[-1].lower() in self._stopwords | _CONNECTORS:
            words = words[:-1]
        if not words:
            return ""
        if at_start and len(words) == 1 and words[0] not in mid_capitals:
            return ""  # a sentence's first word, capitalised only because it is first
        name = " ".join(words)
        return name if len(name) > 1 and not name.isdigit() else ""

    def _is_phrase(self, phrase: str, key: str) -> bool:
        words = key.split()
        return (len(key) >= 4 and not any(c.isdigit() for c in key)
                and not all(w in self._stopwords for w in words)
                and words[0] not in self._stopwords and words[-1] not in self._stopwords
                and not (len(words) == 1 and key.endswith(("ed", "ly", "ing")))
                and "\n" not in phrase)

    # ------------------------------------------------------------------- per chunk
    def _chunk_graph(self, chunk: TextChunk, sentences: list[str],
                     vocabulary: dict[str, tuple[str, str]], pattern: re.Pattern[str] | None
                     ) -> ChunkGraph:
        found: dict[str, list[Any]] = {}  # key -> [evidence, count]
        relations: dict[tuple[str, str], Relation] = {}
        for sentence in sentences:
            hits = [] if pattern is None else [
                (m.start(), m.end(), name_key(m.group(0))) for m in pattern.finditer(sentence)]
            hits = [h for h in hits if h[2] in vocabulary]
            for _, _, key in hits:
                entry = found.setdefault(key, [_evidence(sentence), 0])
                entry[1] += 1
            for (_s1, e1, left), (s2, _e2, right) in itertools.pairwise(hits):
                if left == right:
                    continue
                label = _label(sentence[e1:s2])
                pair = (left, right)
                old = relations.get(pair)
                weight = _SAME_SENTENCE + (old.weight if old is not None else 0.0)
                relations[pair] = Relation(
                    source=vocabulary[left][0], target=vocabulary[right][0],
                    relation=old.relation if old is not None else label,
                    evidence=old.evidence if old is not None else _evidence(sentence),
                    weight=weight)
        entities = tuple(
            Entity(name=vocabulary[key][0], type=vocabulary[key][1], evidence=evidence,
                   weight=count * (2.0 if vocabulary[key][1] != "concept" else 1.0))
            for key, (evidence, count) in found.items())
        salient = sorted(found, key=lambda k: (-found[k][1], vocabulary[k][1] == "concept",
                                               k))[:self.max_per_chunk]
        linked = {frozenset(pair) for pair in relations}
        for i, left in enumerate(salient):
            for right in salient[i + 1:]:
                if frozenset((left, right)) in linked:
                    continue
                relations[(left, right)] = Relation(
                    source=vocabulary[left][0], target=vocabulary[right][0],
                    relation="same_passage", evidence=found[left][0] if found[left][0] ==
                    found[right][0] else f"{found[left][0]} … {found[right][0]}",
                    weight=_SAME_PASSAGE)
        return ChunkGraph(chunk_id=chunk.id, entities=entities,
                          relations=tuple(relations.values()))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def _evidence(sentence: str) -> str:
    return sentence if len(sentence) <= _MAX_EVIDENCE else sentence[:_MAX_EVIDENCE - 1] + "…"


def _label(between: str) -> str:
    words = between.strip().lower().split()
    text = " ".join(words)
    if 1 <= len(words) <= 4 and _LABEL.match(text) and text not in _WEAK_LABELS:
        return text
    return "co_occurs_with"


def _pattern(vocabulary: dict[str, tuple[str, str]]) -> re.Pattern[str] | None:
    """One case-insensitive alternation of every name, longest first (longest match wins)."""
    names = sorted({name for name, _ in vocabulary.values()}, key=lambda n: (-len(n), n))
    if not names:
        return None
    body = "|".join(re.escape(n).replace(r"\ ", r"\s+") + r"(?:e?s)?" for n in names)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)


_CONNECTORS = frozenset({"of", "de", "du", "da", "van", "von", "&"})
_WEAK_LABELS = frozenset({"and", "or", "the", "a", "an", "of", "to", "in", "with"})
# Used when no YAKE stopword list is loaded (key_phrases=0).
_FEW_STOPWORDS = frozenset(str.split(
    "a an and are as at be by do for from has have he her his i if in is it its may "
    "no not of on or our she so the their there these they this those to we what when "
    "where which who will with you your all any each every never some"))

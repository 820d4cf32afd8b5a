"""Summaries and main points of a document: read it whole, pick the key sentences.

The document is the one the question names (its file name or title sharing the
question's words) or else the source of the best passage. All of its chunks are read
in order; each sentence is scored by how central it is (cosine to the document's mean
embedding), where it stands (the first sentence of a section says what it is about)
and whether it carries content (headings and questions are never points; table rows
score lower than prose). The best few, one per section first, are given in document
order, each cited: one point per section and one more, at least ``MIN_POINTS``. When
the question names a part of the document ("summarise the uniform policy" of a
school's handbook), the sections headed by it are summarised. Long documents are
bounded: at most ``MAX_SENTENCES`` sentences are embedded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

import numpy as np

from ragloom.answering.corpus import Corpus
from ragloom.answering.gather import merge_sources
from ragloom.answering.grounding import content_words
from ragloom.answering.question import Question
from ragloom.answering.result import EngineAnswer, refusal
from ragloom.answering.sentences import is_heading, split_sentences
from ragloom.answering.values import cells
from ragloom.errors import RagError
from ragloom.protocols import EmbeddingProvider
from ragloom.retrieval.stemmer import porter_stem
from ragloom.types import QueryMatch, Vector

MAX_SENTENCES = 600
_ENDS = re.compile(r"[.!)\u201d\"']\s*$")


@dataclass(frozen=True)
class _Candidate:
    text: str
    match: QueryMatch
    section: int
    first_in_section: bool
    order: int
    row: bool = False  # a table row: a point only where prose does not say more


def _stems(text: str) -> set[str]:
    return {porter_stem(w) for w in content_words(text)}


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")


def _dated(name: str) -> str:
    """A file name with its ``YYYY-MM`` dates also written as month names."""
    return re.sub(r"(?<!\d)(\d{4})[-_](\d{2})(?!\d)",
                  lambda m: f"{m.group(0)} {_MONTHS[int(m.group(2)) - 1]}"
                  if 1 <= int(m.group(2)) <= 12 else m.group(0), name)


def pick_document(question: Question, matches: Sequence[QueryMatch]) -> str:
    """The source the question names best (file name, title, opening lines), else the
    best passage's source."""
    asked = _stems(question.focus)
    scores: dict[str, float] = {}
    for rank, match in enumerate(matches):
        chunk = match.chunk
        if not chunk.source:
            continue
        name = _dated(PurePath(chunk.source).stem).replace("-", " ").replace("_", " ")
        title = str(chunk.metadata.get("title", "") or "")
        opening = chunk.text[:300] if chunk.index == 0 else ""
        named = len(asked & (_stems(name) | _stems(title)))
        score = 2.0 * named + len(asked & _stems(opening)) + 0.5 / (1 + rank)
        scores[chunk.source] = max(scores.get(chunk.source, 0.0), score)
    if not scores:
        return matches[0].chunk.source if matches else ""
    return max(scores, key=lambda source: scores[source])


def _candidates(chunks: Sequence[QueryMatch],
                headings: dict[int, str] | None = None) -> list[_Candidate]:
    """The sentences that may be points, with their sections; ``headings`` gets each
    section's heading."""
    found: list[_Candidate] = []
    section = 0
    fresh = True
    seen: set[str] = set()
    for match in chunks:
        for text in split_sentences(match.chunk.text):
            if is_heading(text):
                section += 1
                fresh = True
                if headings is not None:
                    headings[section] = text
                continue
            key = " ".join(text.lower().split())
            if key in seen or text.rstrip().endswith("?") or len(content_words(text)) < 3:
                continue
            row = bool(cells(text))
            if not row and not _ENDS.search(text) and len(text.split()) < 10:
                continue  # a label is not a point
            seen.add(key)
            found.append(_Candidate(text, match, section, fresh and not row, len(found), row))
            fresh = fresh and row
            if len(found) >= MAX_SENTENCES:
                return found
    return found


def _centrality(texts: list[str], embedder: EmbeddingProvider | None) -> list[float]:
    if embedder is None or not texts:
        return [0.0] * len(texts)
    try:
        vectors = embedder.embed_documents(texts)
    except RagError:
        return [0.0] * len(texts)
    if not all(isinstance(v, Vector) for v in vectors):
        return [0.0] * len(texts)
    matrix = np.array([v.values for v in vectors], dtype=np.float32)  # type: ignore[union-attr]
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    centre = matrix.mean(axis=0)
    centre /= max(float(np.linalg.norm(centre)), 1e-12)
    return [float(x) for x in matrix @ centre]


#: A summary gives at least this many points (when the document has them), and one
#: more than its number of sections up to the caller's limit.
MIN_POINTS = 8
#: A table row scores this much below a sentence of prose: a section made of a table
#: ("Item: Sweatshirt; Details: bottle green") gives a row, prose comes first elsewhere.
ROW_PENALTY = 0.15
# Words that ask for a summary, not what it is about.
_ASKING = frozenset({"summar", "main", "point", "key", "overview", "document", "tell", "say",
                     "doc", "file", "give", "list", "brief", "short", "happen", "what"})


def _on_topic(question: Question, candidates: list[_Candidate], headings: dict[int, str],
              chunks: Sequence[QueryMatch]) -> list[_Candidate]:
    """The candidates of the sections whose headings name what the question asks about
    beyond the document itself ("summarise the uniform policy" of a school's
    handbook: its "Uniform" section); all of them when no heading does."""
    named: set[str] = set()
    for match in chunks[:1]:
        named |= _stems(PurePath(match.chunk.source).stem.replace("-", " ").replace("_", " "))
        named |= _stems(str(match.chunk.metadata.get("title", "") or ""))
    topic = {w for w in _stems(question.focus) - named if w not in _ASKING}
    if not topic:
        return candidates
    sections = {n for n, heading in headings.items() if _stems(heading) & topic}
    kept = [c for c in candidates if c.section in sections]
    return kept if len(kept) >= 2 else candidates


def summarise(question: Question, sources: list[QueryMatch], corpus: Corpus | None,
              embedder: EmbeddingProvider | None, *, points: int) -> EngineAnswer:
    """The main points of the document the question is about, each cited."""
    nearby = merge_sources(list(sources), corpus.search(question.focus, top_k=10)
                           if corpus is not None else [])
    source = pick_document(question, nearby)
    chunks = corpus.document(source) if corpus is not None and source else []
    if not chunks:
        chunks = sorted([m for m in sources if m.chunk.source == source] or sources,
                        key=lambda m: m.chunk.index)
    headings: dict[int, str] = {}
    candidates = _candidates(chunks, headings)
    if not candidates:
        return refusal("the document holds no sentences to summarise", sources,
                       kind="summary")
    candidates = _on_topic(question, candidates, headings, chunks)
    # One point per section and one more, at least MIN_POINTS, at most ``points``.
    sections_held = len({c.section for c in candidates})
    points = min(points, max(MIN_POINTS, sections_held + 1))
    central = _centrality([c.text for c in candidates], embedder)
    total = len(candidates)

    def score(item: tuple[_Candidate, float]) -> float:
        candidate, centrality = item
        position = 1.0 - candidate.order / max(total, 1)
        return (centrality + 0.15 * position + (0.2 if candidate.first_in_section else 0.0)
                - (ROW_PENALTY if candidate.row else 0.0))

    ranked = sorted(zip(candidates, central, strict=True), key=score, reverse=True)
    chosen: list[_Candidate] = []
    sections: set[int] = set()
    for candidate, _ in ranked:  # one point per section first, then the best of the rest
        if candidate.section not in sections:
            chosen.append(candidate)
            sections.add(candidate.section)
        if len(chosen) >= points:
            break
    for candidate, _ in ranked:
        if len(chosen) >= points:
            break
        if candidate not in chosen:
            chosen.append(candidate)
    chosen.sort(key=lambda c: c.order)
    merged = merge_sources(sources, [c.match for c in chosen])
    index = {m.chunk.id: n for n, m in enumerate(merged, start=1)}
    name = PurePath(source).name if source else "the documents"
    lines = [f"- {c.text} [{index[c.match.chunk.id]}]" for c in chosen]
    return EngineAnswer(
        answer=f"Main points of {name}:\n" + "\n".join(lines), sources=merged, kind="summary",
        strategy="summary", quote=chosen[0].text,
        citations=sorted({index[c.match.chunk.id] for c in chosen}), origin="extract",
        points=[{"text": c.text, "citation": index[c.match.chunk.id]} for c in chosen])

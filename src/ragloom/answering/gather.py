"""Answers made of several cited items: lists, every mention, the steps of a procedure.

* **list**: the sentences, rows and bullets across the knowledge base (not only the
  top passages) that hold what the question asks about, de-duplicated, each cited;
* **mentions**: every passage naming the thing asked for, with where it is (file,
  page, row);
* **procedure**: the numbered or bulleted steps of the passage that best matches,
  as written, or the sentences that follow its best sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath

from ragloom.answering.corpus import Corpus
from ragloom.answering.gate import term_present
from ragloom.answering.grounding import content_words
from ragloom.answering.question import Question
from ragloom.answering.result import EngineAnswer, refusal
from ragloom.answering.sentences import (
    Sentence,
    SentenceRanker,
    candidate_sentences,
    is_heading,
    split_sentences,
)
from ragloom.retrieval.stemmer import porter_stem
from ragloom.types import QueryMatch

#: Passages searched for a list or for mentions.
WIDE_TOP_K = 30
_STEP = re.compile(r"^\s*(?:step\s*)?(\d{1,2})[.):]\s+|^\s*[-*\u2022]\s+", re.I)


def merge_sources(sources: list[QueryMatch], extra: Sequence[QueryMatch]) -> list[QueryMatch]:
    """``sources`` then the ``extra`` passages they lack (by chunk id)."""
    seen = {m.chunk.id for m in sources}
    merged = list(sources)
    for match in extra:
        if match.chunk.id not in seen:
            seen.add(match.chunk.id)
            merged.append(match)
    return merged


def renumber(sentences: Sequence[Sentence], passages: Sequence[QueryMatch],
             sources: Sequence[QueryMatch]) -> list[Sentence]:
    """Sentences numbered against ``sources`` instead of ``passages``."""
    index = {m.chunk.id: n for n, m in enumerate(sources, start=1)}
    from dataclasses import replace

    return [replace(s, number=index.get(passages[s.number - 1].chunk.id, s.number))
            for s in sentences]


def where(match: QueryMatch) -> str:
    """File name, with the page or row when known."""
    chunk = match.chunk
    name = PurePath(chunk.source).name if chunk.source else chunk.document_id
    if chunk.page is not None:
        return f"{name}, p. {chunk.page}"
    row = chunk.metadata.get("row")
    return f"{name}, row {row}" if row is not None else name


def _wide(question: Question, sources: list[QueryMatch], corpus: Corpus | None,
          *, mode: str = "hybrid") -> list[QueryMatch]:
    if corpus is None:
        return sources
    found = corpus.search(question.focus if mode == "keyword" else question.text,
                          top_k=WIDE_TOP_K, mode=mode)  # type: ignore[arg-type]
    return merge_sources(sources, found)


def _required(question: Question, best: Sentence) -> list[str]:
    """The question's terms the best item holds: what every item must hold too."""
    words = set(content_words(best.text))
    stems = {porter_stem(w) for w in words}
    held = [t for t in question.terms if term_present(t, words, stems)]
    return held


def _holds(text: str, terms: Sequence[str]) -> bool:
    words = set(content_words(text))
    stems = {porter_stem(w) for w in words}
    return all(term_present(t, words, stems) for t in terms)


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def list_items(question: Question, sources: list[QueryMatch], corpus: Corpus | None,
               ranker: SentenceRanker, *, limit: int) -> EngineAnswer:
    """Every matching sentence, row or bullet, each cited."""
    passages = _wide(question, sources, corpus)
    ranked = ranker.rank(question.text, passages)
    ranked = [s for s in ranked if not is_heading(s.text) and not s.text.rstrip().endswith("?")]
    if not ranked:
        return refusal("the passages hold no sentences", sources, kind="list")
    required = _required(question, ranked[0])
    floor = ranked[0].score * 0.6
    items: list[Sentence] = []
    seen: set[str] = set()
    for sentence in ranked:
        if len(items) >= limit:
            break
        if sentence.score < floor or not _holds(sentence.text, required):
            continue
        key = _key(sentence.text)
        if key in seen or any(key in k or k in key for k in seen):
            continue
        seen.add(key)
        items.append(sentence)
    if not required or not items:
        return refusal("no passage holds what the question lists", sources, kind="list",
                       evidence=ranked)
    merged = merge_sources(sources, [passages[s.number - 1] for s in items])
    items = renumber(items, passages, merged)
    items.sort(key=lambda s: (s.number, s.position))
    lines = [f"- {s.text} [{s.number}]" for s in items]
    return EngineAnswer(
        answer="\n".join(lines), sources=merged, kind="list", strategy="list",
        quote=items[0].text, citations=sorted({s.number for s in items}), origin="extract",
        points=[{"text": s.text, "citation": s.number} for s in items], evidence=items)


def mentions(question: Question, sources: list[QueryMatch], corpus: Corpus | None,
             *, limit: int) -> EngineAnswer:
    """Every passage that names the question's focus, with its location."""
    target = question.focus
    terms = [w for w in content_words(target)] or list(question.terms)
    passages = _wide(question, sources, corpus, mode="keyword")
    hits: list[tuple[QueryMatch, str]] = []
    for match in passages:
        held = [s for s in split_sentences(match.chunk.text) if _holds(s, terms)
                and not is_heading(s)]
        hits.extend((match, sentence) for sentence in held[:3])
    if not hits:
        return refusal(f"no passage mentions {target!r}", sources, kind="mentions")
    hits = hits[: limit * 2]
    merged = merge_sources(sources, [m for m, _ in hits])
    index = {m.chunk.id: n for n, m in enumerate(merged, start=1)}
    # Where each passage is (file, page, row) is in ``points`` and the cited sources; the
    # text holds only the passages' own words, so it states nothing they do not.
    lines = [f"- {text} [{index[m.chunk.id]}]" for m, text in hits]
    points = [{"text": text, "citation": index[m.chunk.id], "where": where(m)}
              for m, text in hits]
    return EngineAnswer(
        answer=f"Passages that mention {target}:\n" + "\n".join(lines),
        sources=merged, kind="mentions", strategy="mentions", quote=hits[0][1],
        citations=sorted(index[m.chunk.id] for m, _ in hits), origin="extract", points=points)


def _steps(passage: str, start: int) -> list[str]:
    lines = [line.strip() for line in passage.splitlines() if line.strip()]
    steps = [line for line in lines if _STEP.match(line)]
    if len(steps) >= 2:
        return [_STEP.sub("", line).strip() for line in steps]
    sentences = split_sentences(passage)
    return [s for s in sentences[start: start + 6] if not is_heading(s)]


def procedure(question: Question, sources: list[QueryMatch], ranker: SentenceRanker
              ) -> EngineAnswer:
    """The steps of the best-matching passage, as written."""
    ranked = ranker.rank(question.text, sources)
    if not ranked:
        return refusal("the passages hold no sentences", sources, kind="procedure")
    best = ranked[0]
    steps = _steps(sources[best.number - 1].chunk.text, best.position)
    if not steps:
        steps = [best.text]
    lines = [f"{i}. {step}" for i, step in enumerate(steps, start=1)]
    return EngineAnswer(
        answer="\n".join(lines) + f" [{best.number}]", sources=sources, kind="procedure",
        strategy="procedure", quote=best.text, citations=[best.number], origin="extract",
        points=[{"text": s, "citation": best.number} for s in steps], evidence=ranked)


def all_sentences(passages: Sequence[QueryMatch]) -> list[Sentence]:
    return candidate_sentences(passages)

"""Answers made of several cited items: lists and every mention.

* **list**: the sentences, rows and bullets across the knowledge base (not only the
  top passages) that hold what the question asks about, de-duplicated, each cited;
* **mentions**: every passage naming the thing asked for, with where it is (file,
  page, row).

Procedures are in :mod:`.steps`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import PurePath

from ragloom.answering.corpus import Corpus
from ragloom.answering.gate import on_subject, term_present
from ragloom.answering.grounding import content_words
from ragloom.answering.question import Question
from ragloom.answering.result import EngineAnswer, refusal
from ragloom.answering.sentences import (
    Sentence,
    SentenceRanker,
    is_heading,
    split_sentences,
)
from ragloom.answering.steps import STEP
from ragloom.answering.values import cells, holds, labelled
from ragloom.retrieval.stemmer import porter_stem
from ragloom.types import QueryMatch

#: Passages searched for a list or for mentions.
WIDE_TOP_K = 30
_STEP = STEP  # a numbered or bulleted line


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


_holds = holds  # every one of the terms (true for none)


def _named(match: QueryMatch) -> str:
    """The words of a passage's file name and title."""
    chunk = match.chunk
    name = f"{chunk.source} {chunk.metadata.get('title', '') or ''}"
    return re.sub(r"[\W_]+", " ", name)


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


_YES = frozenset({"yes", "y", "true", "available", "included"})
_NO = frozenset({"no", "n", "false", "none", "not available"})
_NEGATED = re.compile(r"\b(no|not|without|never|lack|lacking|out of|unavailable|"
                      r"(?:are|is|do|does|did|was|were|have|has|ca|wo)n['\u2019]?t)\b", re.I)
_NAME_LABELS = ("name", "model", "title", "venue", "product", "item", "store", "place",
                "service", "region", "area")


def _row_label(pairs: Sequence[tuple[str, str]]) -> str:
    """The cell that names a row: a name-like column, else the first."""
    for label, value in pairs:
        if any(word in label.lower() for word in _NAME_LABELS):
            return value
    return pairs[0][1]


def list_noun(question: str) -> str:
    """The plural noun a list question asks for ("ports", "venues"), if it names one."""
    found = re.search(r"\b(?:which|what|list|name|all|every)\s+(?:\w+\s+){0,2}?(\w+s)\b",
                      question, re.I)
    return found.group(1).lower() if found else ""


def _flag_rows(question: Question, ranked: Sequence[Sentence]) -> list[tuple[Sentence, str]]:
    """Table rows kept by a yes/no column the question names ("have a kitchen" ->
    ``kitchen: yes``; "with no step-free access" -> ``step-free access: no``)."""
    wanted = _NO if _NEGATED.search(question.text) else _YES
    rows: list[tuple[Sentence, str]] = []
    for sentence in ranked:
        pairs = cells(sentence.text)
        if not pairs:
            continue
        for label, value in pairs[1:]:
            # "pet_safe" names "safe" and "pets"
            named = any(_holds(label.replace("_", " "), [term]) for term in question.terms)
            if value.strip().lower() in _YES | _NO and named:
                if value.strip().lower() in wanted:
                    rows.append((sentence, f"{_row_label(pairs)} ({label}: {value})"))
                break
    return rows


def _cell_list(question: Question, ranked: Sequence[Sentence],
               passages: Sequence[QueryMatch]) -> tuple[Sentence, list[str]]:
    """A cell whose label is the list's noun, holding several values ("colours: a, b"),
    in a record or on a line of its own (a two-column table's row); the question's
    other words are in the record, or in the name of the document of a row of its own
    (a product sheet's "Colours: a, b" row is about the product it is named after,
    numbers and all)."""
    noun = list_noun(question.text)
    if not noun:
        return ranked[0], []
    others = [t for t in question.terms if porter_stem(t) != porter_stem(noun)]
    for sentence in ranked[:10]:
        value = labelled(sentence.text, [noun, noun.rstrip("s")])
        where = sentence.text
        if not value:
            row = re.match(r"^([^:;]{1,40}):\s*([^:;]+)$", sentence.text)
            if row and _holds(row.group(1), [noun]):
                value, where = row.group(2), _named(passages[sentence.number - 1])
        if others and sum(_holds(where, [t]) for t in others) * 2 < len(others):
            continue
        if where != sentence.text and not _holds(where, [t for t in others if any(
                ch.isdigit() for ch in t)]):
            continue  # the document is named after another model
        if value and ("," in value or " and " in value):
            parts = [p.strip() for p in re.split(r",|\band\b", value) if p.strip()]
            return sentence, parts
    return ranked[0], []


def _under_heading(question: Question, passages: Sequence[QueryMatch],
                   corpus: Corpus | None) -> tuple[QueryMatch | None, list[str]]:
    """The bullets or short lines under a heading that names the list's noun (read
    across the document's chunks, since a heading may end one chunk)."""
    noun = list_noun(question.text)
    if not noun:
        return None, []
    sources = list(dict.fromkeys(m.chunk.source for m in passages[:3] if m.chunk.source))
    # A document named after the question's words first ("orbis-14-laptop" for "ports
    # of the orbis 14", before the older model's sheet that mentions it).
    sources.sort(key=lambda source: -sum(_holds(re.sub(r"[\W_]+", " ", source), [t])
                                         for t in question.terms))
    documents = [corpus.document(source) for source in sources] if corpus else []
    for chunks in documents or [[m] for m in passages]:
        if not chunks:
            continue
        lines = [line.strip() for c in chunks for line in c.chunk.text.splitlines()]
        owners = [c for c in chunks for _ in c.chunk.text.splitlines()]
        for i, line in enumerate(lines):
            bare = re.sub(r"^#+\s*|[:*]", "", line).strip()
            if bare and len(bare.split()) <= 4 and _holds(bare, [noun]):
                items: list[str] = []
                for j in range(i + 1, len(lines)):
                    follow = lines[j]
                    if not follow:
                        if items:
                            break
                        continue
                    # A short line in a block of lines ("2 x USB-C", "microSD card
                    # reader") is an item; a heading stands alone before its first item.
                    alone = j + 1 >= len(lines) or not lines[j + 1]
                    if follow.startswith("#") or (not items and alone and is_heading(follow)
                                                  and not _STEP.match(follow)):
                        break
                    items.append(_STEP.sub("", follow).strip())
                if len(items) >= 2:
                    return owners[i], items
    return None, []


def list_items(question: Question, sources: list[QueryMatch], corpus: Corpus | None,
               ranker: SentenceRanker, *, limit: int) -> EngineAnswer:
    """Every matching sentence, row or bullet, each cited."""
    passages = _wide(question, sources, corpus)
    ranked, missing = on_subject(question, ranker.rank(question.text, passages), passages)
    if missing:
        return refusal("the passages are not about " + ", ".join(missing), sources,
                       kind="list")
    found = _structured(question, passages, ranked, sources, limit, corpus)
    if found is not None:
        return found
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


def _structured(question: Question, passages: list[QueryMatch], ranked: list[Sentence],
                sources: list[QueryMatch], limit: int, corpus: Corpus | None
                ) -> EngineAnswer | None:
    """A list read from a table's yes/no column, a cell of values, or the bullets under
    a heading, when the passages hold one."""
    rows = _flag_rows(question, ranked)
    if rows:
        rows = rows[:limit]
        merged = merge_sources(sources, [passages[s.number - 1] for s, _ in rows])
        index = {m.chunk.id: n for n, m in enumerate(merged, start=1)}
        numbered = [(index[passages[s.number - 1].chunk.id], text) for s, text in rows]
        return EngineAnswer(
            answer="\n".join(f"- {text} [{n}]" for n, text in numbered), sources=merged,
            kind="list", strategy="list", quote=rows[0][0].text,
            citations=sorted({n for n, _ in numbered}), origin="extract",
            points=[{"text": text, "citation": n} for n, text in numbered])
    if ranked:
        sentence, parts = _cell_list(question, ranked, passages)
        if parts:
            merged = merge_sources(sources, [passages[sentence.number - 1]])
            number = [m.chunk.id for m in merged].index(
                passages[sentence.number - 1].chunk.id) + 1
            return EngineAnswer(
                answer="\n".join(f"- {p} [{number}]" for p in parts), sources=merged,
                kind="list", strategy="list", quote=sentence.text, citations=[number],
                origin="extract", points=[{"text": p, "citation": number} for p in parts])
    owner, items = _under_heading(question, passages, corpus)
    if owner is not None and items:
        merged = merge_sources(sources, [owner])
        cited = [m.chunk.id for m in merged].index(owner.chunk.id) + 1
        return EngineAnswer(
            answer="\n".join(f"- {item} [{cited}]" for item in items[:limit]),
            sources=merged, kind="list", strategy="list", quote=items[0], citations=[cited],
            origin="extract", points=[{"text": i, "citation": cited} for i in items[:limit]])
    return None


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

"""Queries and query transformers: what is searched for, before any retriever runs.

A :class:`Query` is the text to search for plus the conversation it came from. A
:class:`QueryTransformer` turns one query into one or more:

* :class:`DefaultQueryTransformer` passes it through;
* :class:`CompressingQueryTransformer` rewrites a follow-up ("And for the frame?")
  into a standalone question using the chat history;
* :class:`ExpandingQueryTransformer` asks the model for several phrasings;
* :class:`HypotheticalAnswerTransformer` (HyDE) searches with a passage the model
  writes as if it answered the question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ragloom.errors import InvalidInputError, RagError
from ragloom.filters import MetadataFilters
from ragloom.protocols import ModelProvider
from ragloom.types import ChatMessage

__all__ = [
    "ChainedQueryTransformer",
    "CompressingQueryTransformer",
    "DefaultQueryTransformer",
    "ExpandingQueryTransformer",
    "HypotheticalAnswerTransformer",
    "Query",
    "QueryTransformer",
]


@dataclass(frozen=True, kw_only=True)
class Query:
    """Text to search for; ``history`` is the conversation before the question."""

    text: str
    history: tuple[ChatMessage, ...] = ()
    filters: MetadataFilters | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def with_text(self, text: str, **metadata: Any) -> Query:
        return Query(text=text, history=self.history, filters=self.filters,
                     metadata={**self.metadata, **metadata})


@runtime_checkable
class QueryTransformer(Protocol):
    """One query in, the queries to search for out (at least one)."""

    def transform(self, query: Query) -> list[Query]: ...


class DefaultQueryTransformer:
    """The query as it is."""

    def transform(self, query: Query) -> list[Query]:
        return [query]


class ChainedQueryTransformer:
    """Transformers applied in turn, each to every query the previous one gave
    (e.g. compress a follow-up, then expand the standalone question)."""

    def __init__(self, *transformers: QueryTransformer) -> None:
        self.transformers = transformers

    def transform(self, query: Query) -> list[Query]:
        queries = [query]
        for transformer in self.transformers:
            queries = [out for q in queries for out in transformer.transform(q)] or queries
        return queries


def _clean_line(text: str) -> str:
    """A model's one-line answer without list markers, labels and quotes."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    line = re.sub(r"^\s*(?:[-*\u2022]|\d+[.)]|query\s*\d*\s*:|question\s*:|standalone"
                  r"(?: question| query)?\s*:)\s*", "", line, flags=re.IGNORECASE)
    return line.strip().strip("\"'`").strip()


_STOPWORD_TEXT = """
    a an and are as at be but by can could did do does for from had has have how i if in
    is it its me my of on or our so than that the their them then there these they this
    to too was we were what when where which who why will with would you your about also
    tell more please
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower())
            if len(w) > 2 and w not in _STOPWORDS}


def _conversation(history: Sequence[ChatMessage], limit: int) -> str:
    lines = [f"{m.role.capitalize()}: {m.content.strip()}" for m in history
             if m.role in ("user", "assistant") and m.content.strip()]
    return "\n".join(lines[-limit:])


COMPRESSING_PROMPT = (
    "Rewrite the user's last question as one standalone question that can be understood "
    "without the conversation. Keep every subject the conversation refers to. Reply with "
    "the question only.\n\nConversation:\n{history}\n\nLast question: {question}\n\n"
    "Standalone question:"
)


class CompressingQueryTransformer:
    """Rewrites a follow-up into a standalone question from the chat history.

    With no history the query passes through. A reply that is empty or not a
    question-sized line (small models ramble) falls back to the previous user
    question joined with the follow-up, which still names what it was about; the
    query's metadata says which way it went (``compressed_by``: ``model`` or
    ``fallback``).
    """

    def __init__(self, model: ModelProvider, *, prompt: str = COMPRESSING_PROMPT,
                 max_history_messages: int = 6, max_tokens: int = 64) -> None:
        if "{question}" not in prompt or "{history}" not in prompt:
            raise InvalidInputError("the compressing prompt needs {history} and {question}")
        self.model = model
        self.prompt = prompt
        self.max_history_messages = max_history_messages
        self.max_tokens = max_tokens

    def transform(self, query: Query) -> list[Query]:
        history = _conversation(query.history, self.max_history_messages)
        if not history:
            return [query]
        request = self.prompt.replace("{history}", history).replace("{question}", query.text)
        try:
            reply = self.model.chat(request, temperature=0.0, max_tokens=self.max_tokens).text
        except RagError:
            reply = ""
        rewritten = _clean_line(reply)
        if self._plausible(rewritten, query.text):
            return [query.with_text(rewritten, original=query.text, compressed_by="model")]
        previous = [m.content.strip() for m in query.history if m.role == "user"]
        fallback = f"{previous[-1]} {query.text}" if previous else query.text
        return [query.with_text(fallback, original=query.text, compressed_by="fallback")]

    @staticmethod
    def _plausible(rewritten: str, original: str) -> bool:
        """A question-sized line, not the follow-up itself, that keeps the follow-up's
        content words (a small model may answer instead of rewriting)."""
        words = len(rewritten.split())
        if not 2 <= words <= max(40, 3 * len(original.split())):
            return False
        if rewritten.lower() == original.lower():
            return False
        kept = _content_words(rewritten)
        return all(any(k.startswith(w[:5]) for k in kept) for w in _content_words(original))


EXPANDING_PROMPT = (
    "Write {n} different search queries that would find passages answering the question "
    "below. Use other words than the question where you can. One query per line, no "
    "numbering, nothing else.\n\nQuestion: {question}"
)


class ExpandingQueryTransformer:
    """Asks the model for ``n`` phrasings; the original query is kept first unless
    ``include_original=False``. Duplicates and empty lines are dropped."""

    def __init__(self, model: ModelProvider, *, n: int = 3, include_original: bool = True,
                 prompt: str = EXPANDING_PROMPT, max_tokens: int = 160) -> None:
        if n < 1:
            raise InvalidInputError("ExpandingQueryTransformer needs n >= 1")
        self.model = model
        self.n = n
        self.include_original = include_original
        self.prompt = prompt
        self.max_tokens = max_tokens

    def transform(self, query: Query) -> list[Query]:
        request = self.prompt.replace("{n}", str(self.n)).replace("{question}", query.text)
        try:
            reply = self.model.chat(request, temperature=0.0, max_tokens=self.max_tokens).text
        except RagError:
            reply = ""
        seen = {query.text.strip().lower()} if self.include_original else set()
        found: list[Query] = [query] if self.include_original else []
        for raw in reply.splitlines():
            line = _clean_line(raw)
            if len(line.split()) < 2 or line.lower() in seen:
                continue
            seen.add(line.lower())
            found.append(query.with_text(line, original=query.text, expanded=True))
            if len(found) >= self.n + int(self.include_original):
                break
        return found or [query]


HYDE_PROMPT = (
    "Write a short passage (two or three sentences) that answers the question as a "
    "reference document would. Do not mention the question.\n\nQuestion: {question}\n\n"
    "Passage:"
)


class HypotheticalAnswerTransformer:
    """HyDE (Gao et al., 2022): search with a hypothetical answer passage, whose
    wording is closer to the documents' than the question's is."""

    def __init__(self, model: ModelProvider, *, include_original: bool = True,
                 prompt: str = HYDE_PROMPT, max_tokens: int = 128) -> None:
        self.model = model
        self.include_original = include_original
        self.prompt = prompt
        self.max_tokens = max_tokens

    def transform(self, query: Query) -> list[Query]:
        try:
            passage = self.model.chat(self.prompt.replace("{question}", query.text),
                                      temperature=0.0, max_tokens=self.max_tokens).text.strip()
        except RagError:
            passage = ""
        if not passage:
            return [query]
        hypothetical = query.with_text(passage, original=query.text, hypothetical=True)
        return [query, hypothetical] if self.include_original else [hypothetical]

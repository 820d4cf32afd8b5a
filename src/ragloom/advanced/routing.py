"""Query routers: which retrievers a query goes to — or none.

* :class:`DefaultQueryRouter`: every retriever.
* :class:`LanguageModelQueryRouter`: the model reads the retrievers' descriptions
  and names the ones that fit, or says no retrieval is needed (a greeting, a
  thank-you), in which case the question goes to the model without content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from ragloom.advanced.query import Query
from ragloom.advanced.retrievers import ContentRetriever
from ragloom.errors import InvalidInputError, RagError
from ragloom.protocols import ModelProvider

__all__ = ["DefaultQueryRouter", "LanguageModelQueryRouter", "QueryRouter"]


@runtime_checkable
class QueryRouter(Protocol):
    """The retrievers to ask for one query; an empty list means "do not retrieve"."""

    @property
    def retrievers(self) -> Sequence[ContentRetriever]: ...

    def route(self, query: Query) -> list[ContentRetriever]: ...


def _check(retrievers: Sequence[ContentRetriever]) -> list[ContentRetriever]:
    names = [r.name for r in retrievers]
    if len(set(names)) != len(names):
        raise InvalidInputError(f"content retrievers need distinct names, got {names}")
    return list(retrievers)


class DefaultQueryRouter:
    """Every query goes to every retriever."""

    def __init__(self, retrievers: Sequence[ContentRetriever]) -> None:
        self._retrievers = _check(retrievers)

    @property
    def retrievers(self) -> Sequence[ContentRetriever]:
        return self._retrievers

    def route(self, query: Query) -> list[ContentRetriever]:
        return list(self._retrievers)


ROUTER_PROMPT = (
    "Decide where to look for information to answer the question.\n"
    "Sources:\n{sources}\n0: no source is needed (greetings, thanks, small talk)\n\n"
    "Question: {question}\n\n"
    "Reply with the numbers of the sources to use, separated by commas, or 0. "
    "Numbers only."
)

Fallback = Literal["all", "none", "fail"]


class LanguageModelQueryRouter:
    """Routes by asking the model which sources fit, from their descriptions.

    ``fallback`` says what to do when the reply names no valid source or the model
    fails: ``all`` (default) asks every retriever, ``none`` retrieves nothing,
    ``fail`` raises.
    """

    def __init__(self, model: ModelProvider, retrievers: Sequence[ContentRetriever], *,
                 prompt: str = ROUTER_PROMPT, fallback: Fallback = "all") -> None:
        if fallback not in ("all", "none", "fail"):
            raise InvalidInputError("fallback is one of all, none, fail")
        self.model = model
        self._retrievers = _check(retrievers)
        self.prompt = prompt
        self.fallback = fallback
        self.last_reply = ""

    @property
    def retrievers(self) -> Sequence[ContentRetriever]:
        return self._retrievers

    def _fallback(self, why: str) -> list[ContentRetriever]:
        if self.fallback == "fail":
            raise RagError(f"the query router could not choose a source: {why}")
        return list(self._retrievers) if self.fallback == "all" else []

    def route(self, query: Query) -> list[ContentRetriever]:
        sources = "\n".join(f"{i}: {r.name} — {r.description}"
                            for i, r in enumerate(self._retrievers, 1))
        request = self.prompt.replace("{sources}", sources).replace("{question}", query.text)
        try:
            reply = self.model.chat(request, temperature=0.0, max_tokens=16).text
        except RagError as exc:
            return self._fallback(str(exc))
        self.last_reply = reply
        numbers = [int(n) for n in re.findall(r"\d+", reply)]
        if not numbers:
            lowered = reply.lower()
            if "none" in lowered or "no source" in lowered:
                return []
            by_name = [r for r in self._retrievers if r.name.lower() in lowered]
            return by_name or self._fallback(f"unreadable reply {reply[:80]!r}")
        if numbers == [0] or (0 in numbers and len(set(numbers)) == 1):
            return []
        chosen = [self._retrievers[n - 1] for n in dict.fromkeys(numbers)
                  if 1 <= n <= len(self._retrievers)]
        return chosen or self._fallback(f"no valid source number in {reply[:80]!r}")

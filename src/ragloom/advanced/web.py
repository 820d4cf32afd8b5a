"""Web search as a content retriever: any SearXNG-compatible JSON endpoint.

``GET {base_url}/search?q=...&format=json`` answers ``{"results": [{"url", "title",
"content", "score"?}, ...]}``. Each result becomes a match whose text is the title
and snippet and whose source is the URL. Uses only the standard library.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from ragloom.advanced.query import Query
from ragloom.advanced.retrievers import DescribedRetriever, text_match
from ragloom.errors import (
    BadResponseError,
    InvalidInputError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
)
from ragloom.types import QueryMatch

__all__ = ["WebSearchContentRetriever"]


class WebSearchContentRetriever(DescribedRetriever):
    """``WebSearchContentRetriever("http://127.0.0.1:8888")``: the top
    ``max_results`` results of a SearXNG-compatible search; ``params`` are added to
    every request (e.g. ``{"categories": "general", "language": "en"}``)."""

    def __init__(self, base_url: str, *, max_results: int = 5, timeout: float = 10.0,
                 params: Mapping[str, str] | None = None, name: str = "web",
                 description: str = "web search results for current or general information"
                 ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise InvalidInputError(f"the web search base_url must be http(s), got {base_url!r}")
        if max_results < 1:
            raise InvalidInputError("max_results must be at least 1")
        self.base_url = base_url.rstrip("/")
        self.max_results = max_results
        self.timeout = timeout
        self.params = dict(params or {})
        self._name = name
        self._description = description

    def search(self, text: str) -> list[dict[str, Any]]:
        """The endpoint's raw results (dicts), best first."""
        query = urllib.parse.urlencode({**self.params, "q": text, "format": "json"})
        url = f"{self.base_url}/search?{query}"
        request = urllib.request.Request(url, headers={"Accept": "application/json",
                                                       "User-Agent": "ragloom"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            raise ProviderError(f"web search answered HTTP {exc.code} for {self.base_url}",
                                provider="web", retryable=exc.code >= 500) from exc
        except TimeoutError as exc:
            raise ProviderTimeoutError(f"web search gave no answer within {self.timeout} s",
                                       provider="web") from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise ProviderTimeoutError(f"web search gave no answer within {self.timeout} s",
                                           provider="web") from exc
            raise ProviderConnectionError(f"cannot reach web search at {self.base_url}: "
                                          f"{exc.reason}", provider="web") from exc
        try:
            data = json.loads(body)
            results = data["results"]
        except (ValueError, KeyError, TypeError) as exc:
            raise BadResponseError("web search did not answer SearXNG JSON ({\"results\": "
                                   "[...]}); is format=json enabled on the server?",
                                   provider="web") from exc
        return [r for r in results if isinstance(r, dict)]

    def retrieve(self, query: Query) -> list[QueryMatch]:
        found = []
        for result in self.search(query.text):
            title = str(result.get("title") or "").strip()
            snippet = str(result.get("content") or "").strip()
            text = f"{title}\n{snippet}".strip() if title else snippet
            if text:
                found.append((result, title, text))
        found = found[: self.max_results]
        raw_scores = [r.get("score") for r, _, _ in found]
        numeric = [float(s) for s in raw_scores if isinstance(s, (int, float))]
        # The engine's own scores when every result has one, else rank order.
        top = max(numeric) if numeric and len(numeric) == len(found) else 0.0
        matches = []
        for rank, (result, title, text) in enumerate(found):
            url = str(result.get("url") or "")
            raw = float(result["score"]) if top > 0 else 0.0
            score = raw / top if top > 0 else 1.0 / (1 + rank)
            matches.append(text_match(text, source=url or f"web:{rank}", retriever=self._name,
                                      score=score, raw_score=raw,
                                      metadata={"url": url, "title": title,
                                                "engine": result.get("engine", "")}))
        return matches

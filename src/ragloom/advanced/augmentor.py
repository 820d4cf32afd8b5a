"""RetrievalAugmentor: transform the query, route it, retrieve in parallel, aggregate,
inject — each step a collaborator passed in.

::

    augmentor = RetrievalAugmentor(
        [KnowledgeBaseContentRetriever(kb)],              # or query_router=...
        query_transformer=CompressingQueryTransformer(model),
        content_aggregator=RerankingContentAggregator(scorer, min_score=0.3),
        content_injector=DefaultContentInjector(metadata_keys=("file_name",)))
    result = augmentor.augment("And for the frame?", history=previous_messages)
    result.message     # the user message for the model
    result.contents    # the passages in it, numbered as in the message

Every (query, retriever) pair is searched on a bounded thread pool
(``max_workers``); results come back in a fixed order, so the outcome does not
depend on which thread finished first.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ragloom.advanced.aggregation import ContentAggregator, DefaultContentAggregator, QueryResults
from ragloom.advanced.injection import ContentInjector, DefaultContentInjector
from ragloom.advanced.query import DefaultQueryTransformer, Query, QueryTransformer
from ragloom.advanced.retrievers import ContentRetriever
from ragloom.advanced.routing import DefaultQueryRouter, QueryRouter
from ragloom.errors import InvalidInputError
from ragloom.filters import MetadataFilters
from ragloom.types import ChatMessage, QueryMatch

__all__ = ["AugmentationResult", "RetrievalAugmentor"]


@dataclass(frozen=True, kw_only=True)
class AugmentationResult:
    """The augmented user message and how it came about."""

    question: str
    message: ChatMessage
    contents: list[QueryMatch] = field(default_factory=list)
    queries: list[Query] = field(default_factory=list)
    routes: dict[str, list[str]] = field(default_factory=dict)
    retrieval_skipped: bool = False
    notice: str = ""
    seconds: float = 0.0

    @property
    def query_texts(self) -> list[str]:
        return [q.text for q in self.queries]


class RetrievalAugmentor:
    """Composes the advanced RAG steps (see the module docstring).

    Give either ``retrievers`` (routed to all by :class:`DefaultQueryRouter`) or a
    ``query_router``. ``max_contents`` caps what reaches the injector.
    """

    def __init__(
        self,
        retrievers: Sequence[ContentRetriever] = (),
        *,
        query_transformer: QueryTransformer | None = None,
        query_router: QueryRouter | None = None,
        content_aggregator: ContentAggregator | None = None,
        content_injector: ContentInjector | None = None,
        max_contents: int | None = 5,
        max_workers: int = 4,
    ) -> None:
        if query_router is None:
            if not retrievers:
                raise InvalidInputError("give the augmentor retrievers or a query_router")
            query_router = DefaultQueryRouter(retrievers)
        elif retrievers:
            raise InvalidInputError("give retrievers or a query_router, not both")
        if max_workers < 1:
            raise InvalidInputError("max_workers must be at least 1")
        self.query_transformer = query_transformer or DefaultQueryTransformer()
        self.query_router = query_router
        self.content_aggregator = content_aggregator or DefaultContentAggregator()
        self.content_injector = content_injector or DefaultContentInjector()
        self.max_contents = max_contents
        self.max_workers = max_workers

    def retrieve(self, question: str, *, history: Sequence[ChatMessage] = (),
                 filters: MetadataFilters | None = None) -> AugmentationResult:
        """Every step but injection; ``message`` is the bare question."""
        started = time.perf_counter()
        query = Query(text=question, history=tuple(history), filters=filters)
        queries = self.query_transformer.transform(query) or [query]
        routed = [(q, self.query_router.route(q)) for q in queries]
        routes = {q.text: [r.name for r in chosen] for q, chosen in routed}
        tasks = [(qi, ri, q, r) for qi, (q, chosen) in enumerate(routed)
                 for ri, r in enumerate(chosen)]
        if not tasks:
            return AugmentationResult(question=question, message=ChatMessage.user(question),
                                      queries=queries, routes=routes, retrieval_skipped=True,
                                      seconds=time.perf_counter() - started)
        found = self._run([functools.partial(r.retrieve, q) for _, _, q, r in tasks])
        lists: list[list[list[QueryMatch]]] = [[[] for _ in chosen] for _, chosen in routed]
        for (qi, ri, _, _), matches in zip(tasks, found, strict=True):
            lists[qi][ri] = matches
        results = [QueryResults(query=q, lists=lists[i]) for i, (q, _) in enumerate(routed)]
        contents = self.content_aggregator.aggregate(question, results)
        if self.max_contents is not None:
            contents = contents[: self.max_contents]
        notices = sorted({str(getattr(r, "notice", "")) for _, _, _, r in tasks} - {""})
        return AugmentationResult(question=question, message=ChatMessage.user(question),
                                  contents=contents, queries=queries, routes=routes,
                                  notice="; ".join(notices),
                                  seconds=time.perf_counter() - started)

    def augment(self, question: str, *, history: Sequence[ChatMessage] = (),
                filters: MetadataFilters | None = None) -> AugmentationResult:
        """Retrieve, then build the user message with the content injector."""
        result = self.retrieve(question, history=history, filters=filters)
        if result.retrieval_skipped:
            return result
        contents = result.contents
        fit = getattr(self.content_injector, "fit", None)
        if callable(fit):  # the passages that fit the injector's token budget
            contents = list(fit(contents))
        message = self.content_injector.inject(question, contents)
        return AugmentationResult(question=question, message=message, contents=contents,
                                  queries=result.queries, routes=result.routes,
                                  notice=result.notice, seconds=result.seconds)

    def _run(self, calls: list[Callable[[], list[QueryMatch]]]) -> list[list[QueryMatch]]:
        if len(calls) == 1 or self.max_workers == 1:
            return [call() for call in calls]
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(calls)),
                                thread_name_prefix="ragloom-retrieve") as pool:
            futures = [pool.submit(call) for call in calls]
            return [future.result() for future in futures]

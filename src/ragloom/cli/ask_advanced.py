"""``ragloom ask`` with the advanced pipeline: sessions (history kept in the database,
follow-ups compressed into standalone queries), several knowledge bases, query
expansion, re-ranking, prompt template and metadata keys, streaming, and the agent
(``--agent``: the model calls ``knowledge_search`` itself).

``ask_command`` hands over to :func:`advanced_ask` when one of these is asked for.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.table import Table

from ragloom.cli.common import console, labelled, out, plain, print_json
from ragloom.errors import ConfigurationError, InvalidInputError
from ragloom.filters import MetadataFilters
from ragloom.protocols import TokenCounter
from ragloom.retrieval.options import SearchOptions
from ragloom.types import QueryMatch


@dataclass(frozen=True, kw_only=True)
class AskSettings:
    """What the ``ask`` flags (and ``[generation]`` in ragloom.toml) ask for."""

    session: str | None = None
    agent: bool = False
    max_infer_iters: int = 10
    stream: bool | None = None
    expand: int = 0
    rerank: str | None = None
    min_score: float | None = None
    prompt_template: str | None = None
    metadata_keys: Sequence[str] = field(default_factory=tuple)
    temperature: float | None = None
    max_answer_tokens: int | None = None
    memory_size: int = 10
    grounding: str = "strict"
    system_prompt: str | None = None

    def generation(self) -> Any:
        """The :class:`~ragloom.answering.settings.GenerationSettings` these flags make."""
        from ragloom.answering.settings import GenerationSettings

        return GenerationSettings(
            temperature=self.temperature, max_tokens=self.max_answer_tokens,
            system_prompt=self.system_prompt, template=self.prompt_template,
            metadata_keys=tuple(self.metadata_keys), history_messages=self.memory_size,
            grounding=self.grounding)  # type: ignore[arg-type]


def wants_advanced(settings: AskSettings, knowledge_bases: int) -> bool:
    return bool(settings.session or settings.agent or settings.expand or settings.rerank
                or knowledge_bases > 1)


def scoring_model(spec: str, model: Any) -> Any:
    """``llm`` (the answering model as scorer) or ``cross-encoder:NAME_OR_FOLDER``."""
    from ragloom.advanced import ChatModelScoringModel, CrossEncoderScoringModel

    if spec == "llm":
        if model is None:
            raise ConfigurationError("--rerank llm needs a language model (not --llm none)")
        return ChatModelScoringModel(model)
    if spec.startswith("cross-encoder:"):
        return CrossEncoderScoringModel(spec.split(":", 1)[1])
    raise InvalidInputError(f"--rerank takes llm or cross-encoder:NAME_OR_FOLDER, not {spec!r}")


def _print_sources(matches: Sequence[QueryMatch]) -> None:
    if not matches:
        return
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column in ("#", "score", "source", "kb"):
        table.add_column(column, overflow="fold")
    for number, match in enumerate(matches, 1):
        chunk = match.chunk
        page = f" p.{chunk.page}" if chunk.page is not None else ""
        table.add_row(str(number), f"{match.score:.3f}",
                      plain((chunk.source or chunk.document_id) + page),
                      plain(match.knowledge_base))
    out.print(plain("Sources", "bold"))
    out.print(table)


def _build_rag(bases: Sequence[Any], model: Any, options: SearchOptions, settings: AskSettings,
               sessions: Any, filters: MetadataFilters | None = None) -> Any:
    from ragloom.advanced import (
        AugmentedRag,
        ChainedQueryTransformer,
        CompressingQueryTransformer,
        DefaultContentInjector,
        ExpandingQueryTransformer,
        KnowledgeBaseContentRetriever,
        RerankingContentAggregator,
        RetrievalAugmentor,
    )
    from ragloom.advanced.injection import DEFAULT_INJECTION_TEMPLATE
    from ragloom.chat import MessageWindowMemory

    retrievers = [KnowledgeBaseContentRetriever(b, options=options) for b in bases]
    transformers: list[Any] = []
    if model is not None and settings.session:
        transformers.append(CompressingQueryTransformer(model))
    if model is not None and settings.expand:
        transformers.append(ExpandingQueryTransformer(model, n=settings.expand))
    aggregator = None
    if settings.rerank:
        aggregator = RerankingContentAggregator(scoring_model(settings.rerank, model),
                                                min_score=settings.min_score,
                                                candidates=max(20, options.top_k * 4))
    counter = bases[0].embedder
    injector = DefaultContentInjector(
        template=settings.prompt_template or DEFAULT_INJECTION_TEMPLATE,
        metadata_keys=settings.metadata_keys,
        token_counter=counter if isinstance(counter, TokenCounter) else None)
    augmentor = RetrievalAugmentor(
        retrievers, query_transformer=ChainedQueryTransformer(*transformers),
        content_aggregator=aggregator, content_injector=injector, max_contents=options.top_k)
    from ragloom.answering.corpus import KnowledgeBaseCorpus
    from ragloom.answering.engine import AnswerEngine

    generation = settings.generation()
    engine = AnswerEngine(bases[0].embedder, settings=generation)
    return AugmentedRag(augmentor, model, memory=MessageWindowMemory(max(1, settings.memory_size)),
                        sessions=sessions, temperature=settings.temperature,
                        max_answer_tokens=settings.max_answer_tokens or 256, engine=engine,
                        settings=generation,
                        corpus=KnowledgeBaseCorpus(bases, filters=filters))


def _run_agent(bases: Sequence[Any], model: Any, options: SearchOptions,
               settings: AskSettings, sessions: Any, question: str) -> Any:
    from ragloom.advanced import Agent, KnowledgeBaseContentRetriever, KnowledgeSearchTool
    from ragloom.answering.engine import AnswerEngine
    from ragloom.chat import MessageWindowMemory

    if model is None:
        raise ConfigurationError("--agent needs a language model that calls tools, not --llm none")
    tool = KnowledgeSearchTool([KnowledgeBaseContentRetriever(b, options=options)
                                for b in bases], max_chunks=options.top_k)
    agent = Agent(model, [tool], max_infer_iters=settings.max_infer_iters,
                  memory=MessageWindowMemory(max(1, settings.memory_size)), sessions=sessions,
                  temperature=settings.temperature,
                  max_answer_tokens=max(settings.max_answer_tokens or 0, 512),
                  settings=settings.generation(),
                  engine=AnswerEngine(bases[0].embedder, settings=settings.generation()))
    return agent.run(question, session=settings.session)


def _stream(rag: Any, question: str, filters: MetadataFilters | None,
            settings: AskSettings) -> Any:
    from ragloom.advanced import AnswerEvent, ErrorEvent, SourcesEvent, TokenEvent

    answer = None
    for event in rag.stream(question, filters, session=settings.session):
        if isinstance(event, SourcesEvent):
            if event.queries and event.queries[0] != question:
                console.print(plain(f"searching for: {'; '.join(event.queries)}", "dim"))
        elif isinstance(event, TokenEvent):
            sys.stdout.write(event.text)
            sys.stdout.flush()
        elif isinstance(event, ErrorEvent):
            sys.stdout.write("\n")
            raise event.error if event.error is not None else InvalidInputError(event.message)
        elif isinstance(event, AnswerEvent):
            answer = event.answer
    sys.stdout.write("\n\n")
    return answer


def advanced_ask(question: str, bases: Sequence[Any], model: Any, options: SearchOptions,
                 filters: MetadataFilters | None, settings: AskSettings, *,
                 sessions: Any, json_output: bool, verbose: bool) -> None:
    """Answer (or run the agent), print the answer, the searches and the sources."""
    if settings.agent:
        answer = _run_agent(bases, model, options, settings, sessions, question)
    else:
        rag = _build_rag(bases, model, options, settings, sessions, filters)
        stream = settings.stream if settings.stream is not None else sys.stdout.isatty()
        if stream and not json_output and model is not None:
            answer = _stream(rag, question, filters, settings)
            if answer is None:
                return
            _print_tail(answer, verbose, printed=True)
            return
        answer = rag.query(question, filters, session=settings.session)
    if json_output:
        print_json(answer.to_dict())
        return
    _print_tail(answer, verbose, printed=False)


def _print_tail(answer: Any, verbose: bool, *, printed: bool) -> None:
    if answer.notice:
        console.print(labelled("note:", "yellow", answer.notice))
    if not printed and answer.answer:
        out.print(plain(answer.answer))
        out.print()
    if answer.searches:
        out.print(plain("Searches", "bold"))
        for number, search in enumerate(answer.searches, 1):
            out.print(plain(f"  {number}. {search.get('tool')}: {search.get('query', '')} "
                            f"({search.get('results', 0)} results)"))
    elif not printed and answer.queries and list(answer.queries) != [answer.question]:
        out.print(plain(f"searched for: {'; '.join(answer.queries)}", "dim"))
    _print_sources(answer.sources)
    if verbose:
        for number, match in enumerate(answer.sources, 1):
            out.print(plain(f"\n[{number}] {match.chunk.text}"))
        usage = answer.usage
        out.print(plain(f"\nretrieval {answer.retrieval_seconds * 1000:.0f} ms; {answer.model} "
                        f"{usage.input_tokens} tokens in, {usage.output_tokens} out, "
                        f"{usage.latency_s:.1f} s"))

"""``ragloom ask`` and ``ragloom search``: answers with sources, and retrieval alone."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from ragloom.cli.common import (
    DbOption,
    EmbedderOption,
    FilterOption,
    JsonOption,
    note,
    open_knowledge_base,
    open_model,
    out,
    parse_filter_option,
    plain,
    print_json,
    reported_errors,
    settings_for,
)
from ragloom.cli.remote import ServerOption, server_url
from ragloom.errors import KnowledgeBaseNotFoundError
from ragloom.registry import DEFAULT_MODEL
from ragloom.retrieval.options import SearchOptions
from ragloom.types import QueryMatch

ModeOption = Annotated[str | None, typer.Option(
    "--mode", help="vector, keyword or hybrid [default: [retrieval] in ragloom.toml, "
    "else hybrid]", show_default=False)]
ThresholdOption = Annotated[
    float | None,
    typer.Option("--score-threshold", min=0.0, max=1.0,
                 help="Drop matches scoring below this (scores are in [0, 1]).",
                 show_default=False),
]


def _kb_option(verb: str) -> Any:
    return typer.Option("--kb", help=f"Knowledge base name; repeat to {verb} several "
                        "[default: $RAGLOOM_KB or default]", show_default=False)


GraphOption = Annotated[bool, typer.Option(
    "--graph", help="Also take passages that mention the question's entities and their "
    "neighbours in the knowledge graph (ingest with --graph first).")]


def _require_content(knowledge_base: Any) -> None:
    if knowledge_base.store.count() == 0:
        raise KnowledgeBaseNotFoundError(
            f"knowledge base {knowledge_base.name!r} is empty; add documents with: "
            f"ragloom ingest PATH --kb {knowledge_base.name}"
        )


def _display_source(source: str) -> str:
    """Paths under the working folder are shown relative to it."""
    try:
        return str(Path(source).relative_to(Path.cwd()))
    except ValueError:
        return source


def _print_sources(matches: list[QueryMatch], *, show_kb: bool = False) -> None:
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column in ("#", "score", "source", "chunk") + (("kb",) if show_kb else ()):
        table.add_column(column, overflow="fold")
    for number, match in enumerate(matches, 1):
        chunk = match.chunk
        where = _display_source(chunk.source or chunk.document_id)
        page = f" p.{chunk.page}" if chunk.page is not None else ""
        row: list[str | Text] = [str(number), f"{match.score:.3f}", plain(where + page),
                                 str(chunk.index)]
        table.add_row(*row, *((plain(match.knowledge_base),) if show_kb else ()))
    out.print(table)


def _grounding(value: str) -> str:
    from ragloom.answering.settings import GROUNDING_MODES

    if value not in GROUNDING_MODES:
        raise typer.BadParameter(f"--grounding takes {', '.join(GROUNDING_MODES)}, not "
                                 f"{value!r}", param_hint="--grounding")
    return value


def _stream_answer(rag: Any, question: str) -> Any:
    """Print the answer's text as it comes; returns the final RagAnswer."""
    answer = None
    for piece in rag.stream(question):
        if isinstance(piece, str):
            sys.stdout.write(piece)
            sys.stdout.flush()
        else:
            answer = piece
    sys.stdout.write("\n")
    return answer


def ask_command(
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    db: DbOption = None,
    kb: Annotated[list[str], _kb_option("answer from")] = [],  # noqa: B006
    embedder: EmbedderOption = None,
    llm: Annotated[str | None, typer.Option(
        "--llm", help="Language model as provider:model, or none for retrieval only "
        f"[default: $RAGLOOM_LLM or {DEFAULT_MODEL}]", show_default=False)] = None,
    fallback_llm: Annotated[str | None, typer.Option(
        "--fallback-llm", help="Model to ask when the first one fails.",
        show_default=False)] = None,
    mode: ModeOption = None,
    top_k: Annotated[int | None, typer.Option(
        "--top-k", min=1, help="How many passages to use [default: [retrieval] in "
        "ragloom.toml, else 5]", show_default=False)] = None,
    score_threshold: ThresholdOption = None,
    filter_json: FilterOption = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v",
                                          help="Show passages and token usage.")] = False,
    graph: GraphOption = False,
    session: Annotated[str | None, typer.Option(
        "--session", help="Keep the conversation under this name in the database; a "
        "follow-up is rewritten into a standalone query (see: ragloom sessions)",
        show_default=False)] = None,
    agent: Annotated[bool, typer.Option(
        "--agent", help="Let a tool-calling model search with knowledge_search itself.")
    ] = False,
    max_infer_iters: Annotated[int | None, typer.Option(
        "--max-infer-iters", min=1, help="Most model calls of one --agent answer [default: 10]",
        show_default=False)] = None,
    stream: Annotated[bool | None, typer.Option(
        "--stream/--no-stream", help="Print the answer as it is written [default: when "
        "standard output is a terminal]", show_default=False)] = None,
    expand: Annotated[int, typer.Option(
        "--expand", min=0, help="Also search N phrasings of the question written by the model.")
    ] = 0,
    rerank: Annotated[str | None, typer.Option(
        "--rerank", help="Re-rank passages: llm (the model scores them) or "
        "cross-encoder:NAME_OR_FOLDER", show_default=False)] = None,
    min_score: Annotated[float | None, typer.Option(
        "--min-score", min=0.0, max=1.0, help="With --rerank: drop passages scored below this.",
        show_default=False)] = None,
    template: Annotated[str | None, typer.Option(
        "--template", help="Prompt template with {question} and {contents} "
        "[default: [generation] prompt_template]", show_default=False)] = None,
    metadata_key: Annotated[list[str], typer.Option(
        "--metadata-key", help="Metadata key to show with each passage (repeatable).")
    ] = [],  # noqa: B006
    temperature: Annotated[float | None, typer.Option(
        "--temperature", min=0.0, max=2.0, help="Sampling temperature of the model "
        "[default: [generation] temperature, else the model's own]", show_default=False)
    ] = None,
    max_tokens: Annotated[int | None, typer.Option(
        "--max-tokens", min=1, help="Most tokens the model may write for the answer "
        "[default: [generation] max_answer_tokens]", show_default=False)] = None,
    system_prompt: Annotated[str | None, typer.Option(
        "--system-prompt", help="System prompt for the answering model "
        "[default: [generation] system_prompt, else ragloom's]", show_default=False)] = None,
    grounding: Annotated[str | None, typer.Option(
        "--grounding", help="strict: answers backed by the sentence they cite, else quoted "
        "or refused; check: the model's answer, unsupported numbers and names flagged; "
        "off: the model's answer as it came [default: [generation] grounding, else strict]",
        show_default=False)] = None,
    history: Annotated[int | None, typer.Option(
        "--history", min=0, help="With --session: most earlier messages sent to the model "
        "[default: [generation] memory_size, else 10]", show_default=False)] = None,
    json_output: JsonOption = False,
    server: ServerOption = None,
) -> None:
    """Answer a question from the knowledge base, citing numbered sources."""
    from ragloom.rag import NaiveRag

    streamed = False
    with reported_errors():
        url = server_url(server)
        if url:
            from ragloom.cli.remote import remote_ask

            answer = remote_ask(url, question, kb=kb[0] if kb else None, mode=mode or "hybrid",
                                top_k=top_k or 5,
                                score_threshold=score_threshold, filter_json=filter_json,
                                graph=graph)
        else:
            from ragloom.cli.ask_advanced import AskSettings, advanced_ask, wants_advanced
            from ragloom.config import search_options

            bases = [open_knowledge_base(db, name, embedder, create=False)
                     for name in ([*kb] if kb else [None])]
            for base in bases:
                _require_content(base)
            knowledge_base = bases[0]
            filters = parse_filter_option(filter_json, knowledge_base.store)
            settings = settings_for()
            generation = dict(settings.generation)
            options = search_options(
                settings, mode=mode, score_threshold=score_threshold, filters=filters,
                graph=graph or None,
                top_k=top_k if top_k is not None else settings.retrieval.get("top_k", 5))
            model = open_model(llm, fallback_llm)
            ask = AskSettings(
                session=session, agent=agent, stream=stream, expand=expand, rerank=rerank,
                min_score=min_score,
                max_infer_iters=max_infer_iters or int(generation.get("max_infer_iters", 10)),
                prompt_template=template or generation.get("prompt_template"),
                metadata_keys=tuple(metadata_key) or tuple(generation.get("metadata_keys", ())),
                temperature=(temperature if temperature is not None
                             else generation.get("temperature")),
                max_answer_tokens=max_tokens or generation.get("max_answer_tokens"),
                memory_size=history if history is not None else int(
                    generation.get("memory_size", 10)),
                grounding=_grounding(grounding or generation.get("grounding", "strict")),
                system_prompt=system_prompt or generation.get("system_prompt"))
            if wants_advanced(ask, len(bases)):
                from ragloom.cli.sessions_cmd import open_sessions

                advanced_ask(question, bases, model, options, filters, ask,
                             sessions=open_sessions(db) if session else None,
                             json_output=json_output, verbose=verbose)
                return
            rag = NaiveRag(knowledge_base, model, search=options, settings=ask.generation())
            if (stream if stream is not None else sys.stdout.isatty()) and not json_output:
                answer, streamed = _stream_answer(rag, question), True
            else:
                answer = rag.query(question)
        if json_output:
            print_json(answer.to_dict())
            return
        if answer.notice:
            note(answer.notice)
        if answer.answer:
            if not streamed:
                out.print(plain(answer.answer))
            if answer.quote and answer.quote not in answer.answer:
                cited = answer.citations[0] if answer.citations else 1
                out.print(plain(f'  quote [{cited}]: "{answer.quote}"', style="dim"))
            out.print()
        out.print("[bold]Sources[/]")
        _print_sources(answer.sources)
        if verbose:
            for number, match in enumerate(answer.sources, 1):
                out.print(Text.assemble("\n", (f"[{number}]", "bold"), " ",
                                        plain(match.chunk.text)))
            usage = answer.usage
            out.print(f"\nretrieval {answer.retrieval_seconds * 1000:.0f} ms; {answer.model} "
                      f"{usage.input_tokens} tokens in, {usage.output_tokens} out, "
                      f"{usage.latency_s:.1f} s", markup=False)


def search_command(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    db: DbOption = None,
    kb: Annotated[list[str], _kb_option("search")] = [],  # noqa: B006
    embedder: EmbedderOption = None,
    mode: ModeOption = None,
    ranker: Annotated[str | None, typer.Option(
        "--ranker", help="Hybrid fusion: weighted (normalised scores) or rrf (ranks) "
        f"[default: [retrieval] in ragloom.toml, else {SearchOptions().ranker}]",
        show_default=False)] = None,
    alpha: Annotated[float | None, typer.Option(
        "--alpha", min=0.0, max=1.0, help="Weighted ranker: 0 keyword only, 1 vector only "
        f"[default: [retrieval] in ragloom.toml, else {SearchOptions().alpha}]",
        show_default=False)] = None,
    top_k: Annotated[int | None, typer.Option(
        "--top-k", min=1, help="How many passages to return [default: [retrieval] in "
        "ragloom.toml, else 5]", show_default=False)] = None,
    score_threshold: ThresholdOption = None,
    filter_json: FilterOption = None,
    documents: Annotated[bool, typer.Option(
        "--documents", help="Rank whole documents by their best chunk.")] = False,
    graph: GraphOption = False,
    json_output: JsonOption = False,
    server: ServerOption = None,
) -> None:
    """Retrieve passages without asking a language model."""
    with reported_errors():
        from ragloom.config import search_options

        settings = settings_for()
        configured = search_options(
            settings, mode=mode, ranker=ranker, alpha=alpha,
            top_k=top_k if top_k is not None else settings.retrieval.get("top_k", 5))
        mode, ranker, alpha, top_k = (configured.mode, configured.ranker, configured.alpha,
                                      configured.top_k)
        url = server_url(server)
        if url:
            from ragloom.cli.remote import remote_search

            result, matches = remote_search(
                url, query, kb=kb, mode=mode, ranker=ranker, alpha=alpha, top_k=top_k,
                score_threshold=score_threshold, filter_json=filter_json, documents=documents,
                graph=graph)
            _show_matches(query, result, matches, several=len(kb) > 1, json_output=json_output)
            return
        names: list[str | None] = list(kb) or [None]
        bases = [open_knowledge_base(db, name, embedder, create=False) for name in names]
        for base in bases:
            _require_content(base)
        filters = parse_filter_option(filter_json, bases[0].store)
        options = configured.with_(
            score_threshold=(score_threshold if score_threshold is not None
                             else configured.score_threshold),
            filters=filters, graph=graph or configured.graph)
        if documents:
            options = options.with_(top_k=max(top_k * 10, 100))
        if len(bases) == 1:
            result = bases[0].search(query, options)
        else:
            from ragloom.retrieval.multi import search_many

            result = search_many([(b.name, b.store, b.embedder) for b in bases], query, options)
        matches = list(result.matches)
        if documents:
            from ragloom.retrieval.documents import documents_from_matches

            # Each document appears once, represented by its best chunk.
            matches = [doc.best for doc in documents_from_matches(matches, top_k)]
        _show_matches(query, result, matches, several=len(bases) > 1, json_output=json_output)


def _show_matches(query: str, result: Any, matches: list[QueryMatch], *, several: bool,
                  json_output: bool) -> None:
    if json_output:
        print_json({"query": query, "degraded": result.degraded, "notice": result.notice,
                    "matches": [m.to_dict() for m in matches]})
        return
    if result.notice:
        note(result.notice)
    if not matches:
        out.print("no matches")
        return
    _print_sources(matches, show_kb=several)

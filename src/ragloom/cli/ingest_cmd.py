"""``ragloom ingest``: files and folders into a knowledge base, with progress and a summary.

Unchanged files are skipped before parsing; each file is parsed in a worker process
with a time and a memory limit; embeddings go through a cache beside the database
(``embedding-cache.db``, see :mod:`ragloom.ingestion.cache`), so a run killed at any
point resumes without duplicates and without embedding again what it had embedded.
"""

from __future__ import annotations

import sys
import time
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ragloom.cli.common import (
    DbOption,
    EmbedderOption,
    JsonOption,
    KbOption,
    console,
    open_knowledge_base,
    open_store,
    out,
    plain,
    print_json,
    reported_errors,
    resolve_kb,
    resolve_location,
    side_path,
)
from ragloom.cli.graph_cmd import graph_step, graph_summary, print_graph_summary
from ragloom.cli.remote import ServerOption, server_url
from ragloom.ingestion.manifest import FailedFiles
from ragloom.knowledge_base import IngestEvent, IngestReport

MB = 1024 * 1024
#: Beside the store: the files that failed to parse, by content hash.
FAILURES_FILE = "ingest-failures.json"


def _summary(report: IngestReport) -> None:
    out.print(
        f"{len(report.new)} new, {len(report.unchanged)} unchanged, {len(report.replaced)} "
        f"replaced, {len(report.removed)} removed, {len(report.skipped)} skipped; "
        f"{report.chunks_written} chunks written, {report.texts_embedded} embedded "
        f"in {report.seconds:.1f} s", markup=False
    )
    for source in report.removed:
        out.print(plain(f"  removed {source}"))
    before = set(report.failed_before)
    for source, reason in report.skipped:
        if source not in before:
            out.print(plain(f"  skipped {source}: {reason}"))
    if before:
        out.print(f"  {len(before)} skipped: failed before and unchanged; --retry-failed to "
                  "try again", markup=False)


def _configure_chunker(knowledge_base: Any, splitter: str | None, chunk_size: int | None,
                       chunk_overlap: int | None) -> None:
    """The splitter of --splitter/--chunk-size/--chunk-overlap over [chunking] in ragloom.toml."""
    from ragloom.cli.common import settings_for
    from ragloom.config import build_chunker

    chunker = build_chunker(settings_for(), knowledge_base.embedder, splitter=splitter,
                            chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    if chunker is not None:
        knowledge_base.chunker = chunker


def _with_cache(knowledge_base: Any, db: str | None) -> Any:
    """Wrap the embedder in the on-disk cache; returns the cache (to close)."""
    from ragloom.ingestion.cache import cache_path_for
    from ragloom.resilience import CachedEmbedder, SQLiteEmbeddingCache

    # The splitter is sized with the real embedder's tokenizer: build it before wrapping.
    knowledge_base.chunker  # noqa: B018
    cache = SQLiteEmbeddingCache(cache_path_for(side_path(db)))
    knowledge_base.embedder = CachedEmbedder(knowledge_base.embedder, cache)
    return cache


def _prune_cache(knowledge_base: Any, db: str | None) -> None:
    from ragloom.ingestion.cache import (
        cache_entries,
        cache_path_for,
        needs_pruning,
        prune_embedding_cache,
    )
    path = cache_path_for(side_path(db))
    collections = knowledge_base.store.list_collections()
    if not needs_pruning(cache_entries(path), sum(c.chunk_count for c in collections)):
        return

    def texts() -> Any:
        for collection in collections:
            with open_store(resolve_location(db), collection.name, create=False) as store:
                yield from (chunk.text for chunk in store.chunks())

    prune_embedding_cache(path, texts())


def _progress(json_output: bool) -> Progress:
    return Progress(
        TextColumn("[bold]ingest[/]"), BarColumn(), MofNCompleteColumn(), TextColumn("files"),
        TextColumn("{task.fields[documents]} docs, {task.fields[chunks]} chunks, "
                   "{task.fields[rate]}"),
        TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), console=console,
        disable=json_output or not console.is_terminal,
    )


def ingest_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to ingest; - reads stdin.")],
    db: DbOption = None,
    kb: KbOption = "default",
    embedder: EmbedderOption = None,
    include: Annotated[list[str], typer.Option(help="Glob of files to take (repeatable).")] = [],  # noqa: B006
    exclude: Annotated[list[str], typer.Option(
        help="Glob of files to leave out (repeatable).")] = [],  # noqa: B006
    hidden: Annotated[bool, typer.Option(help="Also read hidden files and folders.")] = False,
    sync: Annotated[bool, typer.Option(
        "--sync", help="Remove documents whose source files under PATHS no longer exist.")] = False,
    timeout: Annotated[float, typer.Option(
        help="Seconds one file may take to parse before it is skipped.")] = 30.0,
    memory_limit: Annotated[int, typer.Option(
        "--memory-limit", help="MB of memory the parser process may use (0: no limit).")] = 2048,
    batch_size: Annotated[int, typer.Option(
        help="Chunks embedded per batch (batches span documents; the embedder sorts "
             "a batch by length, so larger batches pad less).")] = 1024,
    cache: Annotated[bool, typer.Option(
        help="Keep embeddings in <db folder>/embedding-cache.db, so text embedded once "
             "(also by a killed run) is not embedded again.")] = True,
    graph: Annotated[bool | None, typer.Option(
        "--graph/--no-graph", help="Extract a knowledge graph (entities, relations) with the "
        "chunks; the choice is kept with the knowledge base [default: as set before, else off]",
        show_default=False)] = None,
    graph_extractor: Annotated[str | None, typer.Option(
        "--graph-extractor", help="offline (no model) or llm (a chat model, see --graph-llm) "
        "[default: as set before, else offline]", show_default=False)] = None,
    graph_llm: Annotated[str | None, typer.Option(
        "--graph-llm", help="Chat model of the llm extractor as provider:model "
        "[default: $RAGLOOM_LLM or local:smollm2]", show_default=False)] = None,
    splitter: Annotated[str | None, typer.Option(
        "--splitter", help="recursive, markdown, sentence, paragraph, line, word, character "
        "[default: [chunking] in ragloom.toml, else recursive]", show_default=False)] = None,
    chunk_size: Annotated[int | None, typer.Option(
        "--chunk-size", min=1, help="Chunk size in the splitter's own unit: the embedder's "
        "tokens (recursive, markdown), characters (character), words (word), sentences "
        "(sentence), paragraphs (paragraph), lines (line), pieces (regex)",
        show_default=False)] = None,
    retry_failed: Annotated[bool, typer.Option(
        "--retry-failed", help="Parse again the files that failed before and have not "
        "changed (skipped otherwise).")] = False,
    chunk_overlap: Annotated[int | None, typer.Option(
        "--chunk-overlap", min=0, help="Units (as --chunk-size) shared by neighbouring chunks",
        show_default=False)] = None,
    json_output: JsonOption = False,
    server: ServerOption = None,
) -> None:
    """Parse, split, embed and store documents. Unchanged files cost nothing on a re-run."""
    from ragloom.ingestion import FileSelection, ParseOptions

    with reported_errors():
        url = server_url(server)
        if url:
            from ragloom.cli.remote import remote_ingest

            remote = remote_ingest(url, paths, kb=kb, embedder=embedder, include=include,
                                   exclude=exclude, hidden=hidden)
            if json_output:
                print_json(remote.to_dict())
            else:
                _summary(remote)
            if remote.skipped and not (remote.new or remote.replaced or remote.unchanged):
                raise typer.Exit(1)
            return
        knowledge_base = open_knowledge_base(db, kb, embedder, create=True)
        _configure_chunker(knowledge_base, splitter, chunk_size, chunk_overlap)
        knowledge_base.graph = graph_step(knowledge_base, graph, graph_extractor, graph_llm)
        embedding_cache = _with_cache(knowledge_base, db) if cache else None
        report = IngestReport()
        selection = FileSelection(include=tuple(include) or ("**/*",), exclude=tuple(exclude),
                                  hidden=hidden)
        parsing = ParseOptions(timeout=timeout,
                               memory_limit=memory_limit * MB if memory_limit > 0 else None)
        pipeline = knowledge_base.pipeline(batch_size=batch_size)
        progress = _progress(json_output)
        try:
            with progress:
                task = progress.add_task("ingest", total=None, documents=0, chunks=0, rate="")
                counts = {"documents": 0, "chunks": 0}
                started = time.perf_counter()

                def advance(event: IngestEvent) -> None:
                    counts["documents"] += 1
                    if event.outcome in ("new", "replaced"):
                        counts["chunks"] += event.chunks
                    seconds = max(time.perf_counter() - started, 1e-6)
                    progress.update(task, advance=1 if event.last_of_file else 0,
                                    documents=counts["documents"], chunks=counts["chunks"],
                                    rate=f"{counts['chunks'] / seconds:.0f} chunks/s")

                if "-" in paths:
                    from ragloom.loaders import load_text

                    pipeline.run([load_text(sys.stdin.read(), source="stdin")], report=report,
                                 progress=advance)
                files = [p for p in paths if p != "-"]
                if files:
                    failed = FailedFiles(side_path(db).parent / FAILURES_FILE, resolve_kb(kb))
                    pipeline.run_paths(
                        files, selection=selection, parsing=parsing, sync=sync, report=report,
                        progress=advance, on_files=lambda n: progress.update(task, total=n),
                        failed=failed, retry_failed=retry_failed)
                    failed.save()
            if embedding_cache is not None:
                _prune_cache(knowledge_base, db)
        finally:
            if embedding_cache is not None:
                embedding_cache.close()
        if json_output:
            print_json({**report.to_dict(), **graph_summary(knowledge_base.graph)})
        else:
            _summary(report)
            print_graph_summary(knowledge_base.graph)
        stored = report.new or report.replaced or report.unchanged
        if report.skipped and not stored:
            raise typer.Exit(1)

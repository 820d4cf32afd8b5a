"""``ragloom ingest``: files and folders into a knowledge base, with progress and a summary."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
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
    out,
    print_json,
    reported_errors,
)
from ragloom.knowledge_base import IngestEvent, IngestReport
from ragloom.types import Document


def _documents(paths: list[str], report: IngestReport, include: list[str],
               exclude: list[str], hidden: bool, seen: set[str]) -> Iterator[Document]:
    from ragloom.loaders import load_path, load_text

    for raw in paths:
        if raw == "-":
            text = sys.stdin.read()
            yield load_text(text, source="stdin")
            seen.add("stdin")
            continue
        path = Path(raw)
        if not path.exists():
            report.skipped.append((raw, "no such file or directory"))
            continue
        options: dict[str, Any] = {"hidden": hidden}
        if include:
            options["include"] = tuple(include)
        if exclude:
            options["exclude"] = tuple(exclude)
        for result in load_path(path, **options):
            seen.add(result.source)
            if result.document is None:
                report.skipped.append((result.source, result.reason))
            else:
                yield result.document


def _count_files(paths: list[str], hidden: bool) -> int | None:
    total = 0
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            total += 1
        elif path.is_dir():
            total += sum(1 for p in path.rglob("*") if p.is_file() and (
                hidden or not any(part.startswith(".") for part in p.relative_to(path).parts)))
        else:
            return None
    return total


def _summary(report: IngestReport) -> None:
    out.print(
        f"{len(report.new)} new, {len(report.unchanged)} unchanged, {len(report.replaced)} "
        f"replaced, {len(report.removed)} removed, {len(report.skipped)} skipped; "
        f"{report.chunks_written} chunks written, {report.texts_embedded} embedded "
        f"in {report.seconds:.1f} s"
    )
    for source in report.removed:
        out.print(f"  removed {source}", markup=False)
    for source, reason in report.skipped:
        out.print(f"  skipped {source}: {reason}", markup=False)


def ingest_command(
    paths: Annotated[list[str], typer.Argument(help="Files or folders to ingest; - reads stdin.")],
    db: DbOption = None,
    kb: KbOption = "default",
    embedder: EmbedderOption = None,
    include: Annotated[list[str], typer.Option(help="Glob of files to take (repeatable).")] = [],  # noqa: B006
    exclude: Annotated[list[str], typer.Option(help="Glob of files to leave out (repeatable).")] = [],  # noqa: B006
    hidden: Annotated[bool, typer.Option(help="Also read hidden files and folders.")] = False,
    sync: Annotated[bool, typer.Option(
        "--sync", help="Remove documents whose source files under PATHS no longer exist.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Parse, split, embed and store documents. Unchanged files cost nothing on a re-run."""
    with reported_errors():
        knowledge_base = open_knowledge_base(db, kb, embedder, create=True)
        report = IngestReport()
        seen: set[str] = set()
        total = _count_files(paths, hidden)
        progress = Progress(
            TextColumn("[bold]ingest[/]"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[chunks]} chunks"), TimeElapsedColumn(),
            TextColumn("eta"), TimeRemainingColumn(), console=console,
            disable=json_output or not console.is_terminal,
        )
        with progress:
            task = progress.add_task("ingest", total=total, chunks=0)
            written = 0

            def advance(event: IngestEvent) -> None:
                nonlocal written
                written += event.chunks if event.outcome in ("new", "replaced") else 0
                progress.update(task, advance=1, chunks=written)

            documents = _documents(paths, report, include, exclude, hidden, seen)
            knowledge_base.ingest(documents, progress=advance, report=report)
        if sync:
            roots = [str(Path(p).resolve()) for p in paths if p != "-"]
            stale = [d.source for d in knowledge_base.index.list_documents()
                     if d.source not in seen and any(
                         d.source == root or d.source.startswith(root + os.sep) for root in roots)]
            report.removed.extend(knowledge_base.delete_sources(stale))
        if json_output:
            print_json(report.to_dict())
        else:
            _summary(report)
        stored = report.new or report.replaced or report.unchanged
        if report.skipped and not stored:
            raise typer.Exit(1)

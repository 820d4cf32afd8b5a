"""``ragloom kb``: knowledge base operations — delete one, empty one, or remove the
chunks that match a metadata filter (``removeAll(filter)`` of the specifications)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from ragloom.cli.common import (
    DbOption,
    JsonOption,
    KbOption,
    existing_store,
    fail,
    out,
    plain,
    print_json,
    reported_errors,
    resolve_kb,
)
from ragloom.errors import FilterError

kb_app = typer.Typer(help="Delete, empty or prune knowledge bases.", no_args_is_help=True)

YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


def _confirm(question: str, yes: bool, json_output: bool) -> None:
    if yes:
        return
    if json_output:
        fail("pass --yes to confirm when using --json", 2)
    if not typer.confirm(question, default=False):
        fail("cancelled", 1)


@kb_app.command("delete")
def delete_command(
    name: Annotated[str, typer.Argument(help="The knowledge base to delete.")],
    db: DbOption = None, yes: YesOption = False, json_output: JsonOption = False,
) -> None:
    """Delete a knowledge base with its documents, chunks and vectors."""
    with reported_errors():
        with existing_store(db, name) as store:
            stats = store.stats() if hasattr(store, "stats") else None
            _confirm(f"Delete knowledge base {name!r} and everything in it?", yes, json_output)
            dropped = bool(store.drop_collection())
        chunks = getattr(stats, "chunk_count", None)
        if json_output:
            print_json({"knowledge_base": name, "deleted": dropped, "chunks": chunks})
            return
        out.print(plain(f"deleted knowledge base {name}"
                        + (f" ({chunks} chunks)" if chunks is not None else "")))


def _knowledge_base(db: str | None, kb: str | None) -> Any:
    from ragloom.cli.common import open_knowledge_base

    return open_knowledge_base(db, kb, None, create=False)


@kb_app.command("clear")
def clear_command(
    name: Annotated[str, typer.Argument(help="The knowledge base to empty.")],
    db: DbOption = None, yes: YesOption = False, json_output: JsonOption = False,
) -> None:
    """Remove every document and chunk but keep the knowledge base (and its embedder)."""
    with reported_errors():
        base = _knowledge_base(db, name)
        _confirm(f"Remove every document from {name!r}?", yes, json_output)
        removed = base.clear()
        if json_output:
            print_json({"knowledge_base": name, "chunks_removed": removed})
            return
        out.print(plain(f"emptied {name}: {removed} chunks removed"))


@kb_app.command("remove")
def remove_command(
    filter_json: Annotated[str, typer.Option(
        "--filter", help='Metadata filter as JSON, e.g. \'{"file_name": "old.md"}\' or '
        '\'{"key": "year", "op": "<", "value": 2020}\'.')],
    kb: KbOption = None, db: DbOption = None, yes: YesOption = False,
    json_output: JsonOption = False,
) -> None:
    """Remove the chunks whose metadata matches a filter (and documents left empty)."""
    from ragloom.cli.common import parse_filter_option

    with reported_errors():
        try:
            json.loads(filter_json)
        except json.JSONDecodeError as exc:
            raise FilterError(f"--filter is not valid JSON: {exc.msg}") from exc
        base = _knowledge_base(db, kb)
        filters = parse_filter_option(filter_json, base.store)
        name = resolve_kb(kb)
        _confirm(f"Remove the matching chunks from {name!r}?", yes, json_output)
        removed = base.delete_where(filters)
        if json_output:
            print_json({"knowledge_base": name, "chunks_removed": removed})
            return
        out.print(plain(f"removed {removed} chunks from {name}"))

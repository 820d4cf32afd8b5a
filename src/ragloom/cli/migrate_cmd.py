"""``ragloom migrate --from URL --to URL``: copy knowledge bases between stores."""

from __future__ import annotations

from typing import Annotated

import typer

from ragloom.cli.common import console, out, plain, print_json, reported_errors
from ragloom.errors import ConfigurationError, KnowledgeBaseNotFoundError


def migrate_command(
    source: Annotated[str, typer.Option(
        "--from", help="Store to copy from: a folder or .db file, postgresql://..., "
        "milvus://HOST:PORT or milvus:///path/file.db.", show_default=False)],
    target: Annotated[str, typer.Option(
        "--to", help="Store to copy into (same forms as --from).", show_default=False)],
    kb: Annotated[list[str], typer.Option(
        "--kb", help="Knowledge base to copy (repeatable; default: all).",
        show_default=False)] = [],  # noqa: B006
    replace: Annotated[bool, typer.Option(
        "--replace", help="Drop a knowledge base of the same name in the target first.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")
                           ] = False,
) -> None:
    """Copy knowledge bases with their vectors (no re-embedding) and verify the counts."""
    from ragloom.stores.factory import exists, open_store, parse_location
    from ragloom.stores.migration import copy_knowledge_base

    with reported_errors():
        origin, destination = parse_location(source), parse_location(target)
        if (origin.kind, origin.target) == (destination.kind, destination.target):
            raise ConfigurationError("--from and --to name the same store")
        if not exists(origin):
            raise KnowledgeBaseNotFoundError(f"no database at {origin.display()}")
        catalogue = open_store(origin)
        try:
            available = [c.name for c in catalogue.list_collections()]
        finally:
            catalogue.close()
        names = list(dict.fromkeys(kb)) or available
        missing = [name for name in names if name not in available]
        if missing:
            raise KnowledgeBaseNotFoundError(
                f"no knowledge base named {', '.join(missing)} in {origin.display()} "
                f"(knowledge bases: {', '.join(available) or 'none'})")
        reports = []
        for name in names:
            from_store, to_store = open_store(origin, name), open_store(destination, name)
            try:
                if to_store.count() or to_store.list_documents():
                    if not replace:
                        raise ConfigurationError(
                            f"{destination.display()} already holds a knowledge base named "
                            f"{name!r}; pass --replace to drop it first")
                    to_store.drop_collection()
                if not json_output:
                    console.print(plain(f"copying {name} ({from_store.count():,} chunks)..."))
                reports.append(copy_knowledge_base(from_store, to_store))
            finally:
                from_store.close()
                to_store.close()
        if json_output:
            print_json({"from": origin.display(), "to": destination.display(),
                        "knowledge_bases": [report.to_dict() for report in reports]})
            return
        for report in reports:
            out.print(plain(f"{report.name}: {report.documents:,} documents, {report.chunks:,} "
                            f"chunks copied in {report.seconds:.1f} s; counts verified"))

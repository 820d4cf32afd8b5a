"""``ragloom status``: the knowledge bases in a database and what they hold."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from ragloom.cli.common import (
    DbOption,
    JsonOption,
    out,
    plain,
    print_json,
    reported_errors,
    resolve_location,
)


def status_command(db: DbOption = None, json_output: JsonOption = False) -> None:
    """List knowledge bases with their document and chunk counts and models."""
    from ragloom.stores.factory import exists, open_store

    with reported_errors():
        location = resolve_location(db)
        path = location.display()
        if not exists(location):
            if json_output:
                print_json({"db": path, "exists": False, "knowledge_bases": []})
            else:
                out.print(plain(f"no database at {path} yet; create one with: ragloom ingest PATH"))
            return
        store = open_store(location)
        try:
            collections = store.list_collections()
        finally:
            store.close()
        size = Path(location.target).stat().st_size if location.is_file else None
        rows = [{"name": c.name, "documents": c.document_count, "chunks": c.chunk_count,
                 "embedder": c.embedder, "dimension": c.dimension} for c in collections]
        if json_output:
            print_json({"db": str(path), "exists": True, "size_bytes": size,
                        "knowledge_bases": rows})
            return
        out.print(plain(f"database {path}" + (f" ({size / 1e6:.1f} MB)" if size is not None
                                               else f" ({location.kind})")))
        table = Table(show_header=True, header_style="bold")
        for column in ("knowledge base", "documents", "chunks", "embedder", "dimension"):
            table.add_column(column)
        for row in rows:
            table.add_row(*(plain(row[k]) for k in ("name", "documents", "chunks", "embedder",
                                                    "dimension")))
        out.print(table)

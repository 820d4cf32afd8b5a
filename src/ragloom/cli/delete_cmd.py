"""``ragloom delete``: remove documents by id or by source, and say which were not found."""

from __future__ import annotations

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


def _resolve(store: Any, wanted: str) -> Any:
    """The stored document ``wanted`` names: its id, its source, or its file's path."""
    from pathlib import Path

    for document in store.list_documents():
        if document.id == wanted:
            return document
    found = store.find_document(wanted)
    if found is None:
        path = Path(wanted).expanduser()
        if path.exists():
            found = store.find_document(str(path.resolve()))
    return found


def delete_command(
    documents: Annotated[list[str], typer.Argument(
        help="Document ids (as `ragloom search --json` shows them) or sources (file paths "
        "as ingested)", show_default=False)],
    kb: KbOption = None, db: DbOption = None, json_output: JsonOption = False,
) -> None:
    """Delete documents with their chunks. Exits 1 when any of them was not found."""
    deleted: list[dict[str, str]] = []
    missing: list[str] = []
    with reported_errors():
        name = resolve_kb(kb)
        with existing_store(db, name) as store:
            for wanted in dict.fromkeys(documents):  # each once, in the order given
                document = _resolve(store, wanted)
                if document is not None and store.delete_documents([document.id]):
                    deleted.append({"id": document.id, "source": document.source})
                else:
                    missing.append(wanted)
    if json_output:
        print_json({"knowledge_base": name, "deleted": deleted, "not_found": missing})
    else:
        for item in deleted:
            out.print(plain(f"deleted {item['source']} ({item['id']})"))
    if missing:
        fail(f"not found in knowledge base {name}: {', '.join(missing)}", 1)

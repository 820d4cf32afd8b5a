"""``ragloom sessions``: the chat sessions ``ragloom ask --session NAME`` keeps.

Sessions live in the database they were asked against: the SQLite file itself, or
``sessions.db`` beside the store for database servers.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ragloom.cli.common import (
    DbOption,
    JsonOption,
    fail,
    out,
    plain,
    print_json,
    reported_errors,
    resolve_location,
    side_path,
)

sessions_app = typer.Typer(help="List, show and delete chat sessions.", no_args_is_help=True)


def sessions_path(db: str | None) -> Path:
    location = resolve_location(db)
    if location.kind == "sqlite":
        return Path(location.target)
    return side_path(db).parent / "sessions.db"


def open_sessions(db: str | None) -> Any:
    from ragloom.chat import SessionStore

    return SessionStore(sessions_path(db))


def _when(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M")


@sessions_app.command("list")
def list_command(db: DbOption = None, json_output: JsonOption = False) -> None:
    """The chat sessions, most recent first."""
    with reported_errors():
        path = sessions_path(db)
        sessions = open_sessions(db).list() if path.exists() else []
        if json_output:
            print_json({"sessions": [s.to_dict() for s in sessions]})
            return
        if not sessions:
            out.print("no sessions yet; start one with: ragloom ask QUESTION --session NAME")
            return
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for column in ("session", "messages", "updated"):
            table.add_column(column)
        for s in sessions:
            table.add_row(plain(s.name), str(s.message_count), _when(s.updated))
        out.print(table)


@sessions_app.command("show")
def show_command(
    name: Annotated[str, typer.Argument(help="The session to show.")],
    db: DbOption = None, json_output: JsonOption = False,
) -> None:
    """The messages of a session, with the sources of each answer."""
    with reported_errors():
        store = open_sessions(db)
        session = store.get(name)
        messages = store.messages(name)
        if json_output:
            print_json({**session.to_dict(), "messages": [m.to_dict() for m in messages]})
            return
        for message in messages:
            out.print(plain(f"{message.role}:", "bold"), plain(message.content))
            queries = message.metadata.get("queries") or []
            if queries and queries != [messages[max(0, messages.index(message) - 1)].content]:
                out.print(plain(f"  searched: {'; '.join(map(str, queries))}", "dim"))
            for search in message.metadata.get("searches") or []:
                out.print(plain(f"  knowledge_search: {search.get('query', '')} "
                                f"({search.get('results', 0)} results)", "dim"))
            for number, source in enumerate(message.sources, 1):
                out.print(plain(f"  [{number}] {source.get('document', '')}", "dim"))


@sessions_app.command("delete")
def delete_command(
    name: Annotated[str, typer.Argument(help="The session to delete.")],
    db: DbOption = None, json_output: JsonOption = False,
) -> None:
    """Delete a session and its messages."""
    with reported_errors():
        deleted = open_sessions(db).delete(name)
        if json_output:
            print_json({"session": name, "deleted": deleted})
            return
        if not deleted:
            fail(f"no chat session named {name!r}; list them with: ragloom sessions list")
        out.print(plain(f"deleted session {name}"))

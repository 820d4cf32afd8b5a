"""The ``ragloom`` command: thin commands over the library."""

from __future__ import annotations

import logging

import typer

from ragloom.cli.ingest_cmd import ingest_command
from ragloom.cli.query_cmds import ask_command, search_command
from ragloom.cli.status_cmd import status_command

app = typer.Typer(
    name="ragloom",
    help="Retrieval-augmented generation over your documents, offline by default.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("ingest")(ingest_command)
app.command("ask")(ask_command)
app.command("search")(search_command)
app.command("status")(status_command)


def _register_server() -> None:
    from ragloom.cli.keys_cmd import keys_app
    from ragloom.cli.serve_cmd import serve_command

    app.command("serve")(serve_command)
    app.add_typer(keys_app, name="keys")


_register_server()


def _register_graph() -> None:
    from ragloom.cli.graph_cmd import graph_app

    app.add_typer(graph_app, name="graph")


_register_graph()


def _register_kb_and_sessions() -> None:
    from ragloom.cli.delete_cmd import delete_command
    from ragloom.cli.kb_cmd import kb_app
    from ragloom.cli.sessions_cmd import sessions_app

    app.command("delete")(delete_command)
    app.add_typer(kb_app, name="kb")
    app.add_typer(sessions_app, name="sessions")


_register_kb_and_sessions()


def _register_eval() -> None:
    from ragloom.cli.eval_cmd import eval_command

    app.command("eval")(eval_command)


_register_eval()


def _register_migrate() -> None:
    from ragloom.cli.migrate_cmd import migrate_command

    app.command("migrate")(migrate_command)


_register_migrate()


def _register_mcp() -> None:
    from ragloom.cli.mcp_cmd import mcp_command

    app.command("mcp")(mcp_command)


_register_mcp()


def main() -> None:
    # Library notices (e.g. a model prepared on first use) go to stderr as plain lines.
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("ragloom: %(message)s"))
    logger = logging.getLogger("ragloom")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    app()

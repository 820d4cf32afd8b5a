"""CLI output prints user text exactly: brackets, backslashes and control sequences in
file names, queries, passages and error messages are neither read as rich markup nor
passed raw to the terminal."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import typer
from rich.console import Console

from ragloom.cli import common
from ragloom.errors import MissingDependencyError
from tests.cli.conftest import FAKE, Cli

MARKUP = "[bold]x[/bold] [red]y[/] \\[z] a\\b"
IN_NAME = "[bold]x [red]y \\[z] a\\b"  # a file name holds no slash
ESC = "\x1b[31m"


def test_error_messages_keep_their_brackets(monkeypatch: pytest.MonkeyPatch) -> None:
    captured = io.StringIO()
    monkeypatch.setattr(common, "console", Console(file=captured, width=300))
    with pytest.raises(typer.Exit) as exit_info, common.reported_errors():
        raise MissingDependencyError("openai", "openai")
    assert exit_info.value.exit_code == 2
    assert "pip install 'ragloom[openai]'" in captured.getvalue()


def test_control_characters_are_shown_not_sent() -> None:
    assert common.shown(f"a{ESC}b\x07c\rd\te\nf\x9b") == "a\\x1b[31mb\\x07c\\x0dd\te\nf\\x9b"
    assert common.plain(MARKUP).plain == MARKUP


def test_paths_passages_and_errors_print_exactly(cli: Cli, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    name = f"guide {IN_NAME}.md"
    (docs / name).write_text(f"# Bikes\n\nThe frame {MARKUP} carries a lifetime warranty.\n")
    (docs / f"empty {ESC}red.txt").write_bytes(b"")

    ingested = cli("ingest", str(docs), *FAKE, check=False)
    assert ingested.returncode == 0, ingested.stderr
    assert f"skipped {docs}/empty \\x1b[31mred.txt: empty file" in ingested.stdout
    assert "\x1b" not in ingested.stdout

    found = cli("search", "lifetime warranty frame", "--mode", "keyword")
    assert name in found.stdout

    shown = cli("ask", "lifetime warranty frame", "--llm", "none", "--mode", "keyword", "-v")
    assert name in shown.stdout
    assert f"The frame {MARKUP} carries" in shown.stdout

    missing = tmp_path / f"no {IN_NAME}"
    error = cli("ask", "x", "--db", str(missing), "--llm", "none", check=False)
    assert error.returncode != 0
    assert f"no database at {missing}" in error.stderr
    status = cli("status", "--db", str(missing))
    assert f"no database at {missing}" in status.stdout

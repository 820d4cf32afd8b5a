"""What every command shares: options, opening the knowledge base, errors, output."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from ragloom.errors import (
    ConfigurationError,
    FilterError,
    InvalidInputError,
    KnowledgeBaseNotFoundError,
    RagError,
)
from ragloom.filters import MetadataFilters, kind_of, parse_filters
from ragloom.registry import DEFAULT_EMBEDDER

console = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)

DEFAULT_DB_DIR = ".ragloom"
DB_FILE_NAME = "ragloom.db"

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Database: a folder or .db file (SQLite), postgresql://..., "
                 "milvus://HOST:PORT or milvus:///path/file.db (default: $RAGLOOM_DB or "
                 "./.ragloom)", show_default=False),
]
KbOption = Annotated[
    str | None,
    typer.Option("--kb", help="Knowledge base name [default: $RAGLOOM_KB or default]",
                 show_default=False),
]
EmbedderOption = Annotated[
    str | None,
    typer.Option("--embedder", help="Embedding model as provider:model [default: the one the "
                 f"knowledge base was built with, else {DEFAULT_EMBEDDER}]", show_default=False),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
FilterOption = Annotated[
    str | None,
    typer.Option("--filter", help='Metadata filter as JSON, e.g. \'{"key": "year", "op": ">=", '
                 '"value": 2020}\' or \'{"file_name": "faq.md"}\'.', show_default=False),
]


def settings_for(**overrides: Any) -> Any:
    """Flags over environment over ragloom.toml over defaults (see ragloom.config)."""
    from ragloom.config import load_settings

    return load_settings(overrides)


def resolve_location(db: str | None) -> Any:
    """Where the store is: --db, then $RAGLOOM_DB / ragloom.toml, then ./.ragloom; a
    folder or .db file (SQLite) or a database URL (see ragloom.stores.factory)."""
    from ragloom.stores.factory import parse_location

    return parse_location(db or settings_for().db or DEFAULT_DB_DIR)


def resolve_db(db: str | None) -> Path:
    """The SQLite file: --db, then $RAGLOOM_DB / ragloom.toml, then ./.ragloom/ragloom.db.
    A database URL is refused here: the caller works with the SQLite store only."""
    location = resolve_location(db)
    if location.kind != "sqlite":
        raise ConfigurationError(
            f"{location.display()} is a {location.kind} database; this command works with "
            "the embedded SQLite store only (--db FOLDER or --db FILE.db)")
    return Path(location.target)


def side_path(db: str | None) -> Path:
    """A file path whose folder holds files kept beside the store (the embedding cache):
    the SQLite or Milvus Lite file, or ./.ragloom/ragloom.db for a database server."""
    location = resolve_location(db)
    if location.is_file:
        return Path(location.target)
    return Path(DEFAULT_DB_DIR) / DB_FILE_NAME


def resolve_kb(kb: str | None) -> str:
    return kb or str(settings_for().knowledge_base)


# C0 controls but newline and tab, DEL and C1: what a terminal would act on.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown(text: object) -> str:
    """``text`` as it may go to a terminal: control characters (an ESC starting an ANSI
    sequence, a bell, a carriage return) become visible ``\\xNN`` escapes, so a file
    name or an error message can neither restyle the terminal nor hide text."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def plain(text: object, style: str = "") -> Text:
    """User-derived text (paths, queries, exception messages, model output) for rich:
    never read as markup, so ``pip install 'ragloom[openai]'`` keeps its brackets."""
    return Text(shown(text), style=style)


def labelled(label: str, style: str, message: object) -> Text:
    """``label`` styled, then ``message`` exactly as given."""
    return Text.assemble((label, style), " ", plain(message))


def fail(message: str, code: int = 1) -> NoReturn:
    console.print(labelled("error:", "bold red", message), highlight=False)
    raise typer.Exit(code)


def note(message: str) -> None:
    """A notice on stderr (degraded search, fallback model...), printed exactly."""
    console.print(labelled("note:", "yellow", message), highlight=False)


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn ragloom errors into a one-line message and a non-zero exit code."""
    try:
        yield
    except (ConfigurationError, InvalidInputError) as exc:
        fail(str(exc), 2)
    except RagError as exc:
        fail(str(exc), 1)
    except KeyboardInterrupt:
        fail("interrupted", 130)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def open_store(db_path: Path | Any, kb: str, *, create: bool) -> Any:
    """The store of knowledge base ``kb`` at a SQLite path or a StoreLocation; without
    ``create``, a missing database or knowledge base is a KnowledgeBaseNotFoundError."""
    from ragloom.stores.factory import StoreLocation, exists
    from ragloom.stores.factory import open_store as open_location

    location = (db_path if isinstance(db_path, StoreLocation)
                else StoreLocation("sqlite", str(db_path)))
    where = location.display()
    if not create:
        if not exists(location):
            raise KnowledgeBaseNotFoundError(
                f"no database at {where}; ingest documents first: ragloom ingest PATH"
                + (f" --kb {kb}" if kb != "default" else "")
            )
        store = open_location(location, kb)
        names = [c.name for c in store.list_collections()]
        if kb not in names:
            known = ", ".join(names) if names else "none yet"
            store.close()
            raise KnowledgeBaseNotFoundError(
                f"no knowledge base named {kb!r} in {where} (knowledge bases: {known}); "
                f"create it with: ragloom ingest PATH --kb {kb}"
            )
        return store
    return open_location(location, kb)


@contextmanager
def existing_store(db: str | None, kb: str) -> Iterator[Any]:
    """``with existing_store(db, kb) as store``: the store of the existing knowledge base
    ``kb`` in the ``--db`` location, closed on leaving; a missing database or knowledge
    base is a KnowledgeBaseNotFoundError."""
    store = open_store(resolve_location(db), kb, create=False)
    try:
        yield store
    finally:
        store.close()


def embedder_name(store: Any, requested: str | None) -> str:
    """The embedder to use: the one asked for (flag, environment, ragloom.toml), else the
    one the knowledge base was built with, else the default."""
    configured = str(settings_for(embedder=requested).embedder)
    info = store.collection_info()
    if requested is None and configured == DEFAULT_EMBEDDER and info is not None:
        return str(info.embedder)
    return configured


def open_knowledge_base(db: str | None, kb: str | None, embedder: str | None, *,
                        create: bool) -> Any:
    from ragloom.config import build_embedder
    from ragloom.knowledge_base import VectorKnowledgeBase

    name = resolve_kb(kb)
    store = open_store(resolve_location(db), name, create=create)
    settings = settings_for(embedder=embedder_name(store, embedder))
    knowledge_base = VectorKnowledgeBase(store, build_embedder(settings), name=name)
    if not create:
        knowledge_base.check_embedder()
    return knowledge_base


def open_model(llm: str | None, fallback_llm: str | None) -> Any:
    """The chat model (with retries and an optional fallback chain), or None."""
    from ragloom.config import build_model

    return build_model(settings_for(llm=llm, fallback_llm=fallback_llm))


def parse_filter_option(raw: str | None, store: Any) -> MetadataFilters | None:
    """Parse --filter and check it against the metadata the knowledge base holds."""
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise FilterError(f"--filter is not valid JSON: {exc.msg} at character {exc.pos}") from exc
    filters = parse_filters(data)
    known: dict[str, set[str]] = store.metadata_keys()
    for leaf in filters.leaves():
        if leaf.key not in known:
            names = ", ".join(sorted(known)) or "none"
            raise FilterError(f"no chunk has the metadata key {leaf.key!r}; keys present: {names}")
        values = leaf.value if isinstance(leaf.value, tuple) else (leaf.value,)
        kinds = {kind_of(v) for v in values}
        held = known[leaf.key]
        if held and not kinds & held:
            raise FilterError(
                f"metadata key {leaf.key!r} holds {'/'.join(sorted(held))} values, but the filter "
                f"compares it with {'/'.join(sorted(k or '?' for k in kinds))}"
            )
    return filters

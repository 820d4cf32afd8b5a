"""Stores by URL: where ``--db``, ``RAGLOOM_DB`` and ``db =`` in ragloom.toml point.

========================================  =========================================
``--db`` value                            store
========================================  =========================================
``PATH`` (a folder or a ``.db`` file)     :class:`~ragloom.stores.sqlite.SqliteVectorStore`
``sqlite:///abs/file.db``, ``sqlite:rel``  the same, spelled as a URL
``postgresql://user@host:5432/dbname``    :class:`~ragloom.stores.pgvector.PgVectorStore`
``milvus://host:19530``                   :class:`~ragloom.stores.milvus.MilvusStore` on a server
``milvus:///path/file.db``                the same on Milvus Lite (a local file)
========================================  =========================================

A value that looks like a URL (``scheme://...``, or a known scheme followed by ``:``)
is never taken as a folder name: an unknown scheme is a :class:`ConfigurationError`.
Options travel as query parameters that ragloom removes before connecting:
``index=hnsw`` (PostgreSQL, Milvus), ``metric=cosine|euclidean|dot``. Secrets come
from the environment only: libpq's ``PGPASSWORD`` (or ``~/.pgpass``) for PostgreSQL,
``RAGLOOM_MILVUS_TOKEN`` for Milvus; a password written in the URL works but is
never printed (:func:`redact`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ragloom.errors import ConfigurationError

SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
DB_FILE_NAME = "ragloom.db"
KNOWN_SCHEMES = ("sqlite", "postgresql", "postgres", "milvus")
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+)://")
_BARE = re.compile(r"^(sqlite|postgresql|postgres|milvus)(\+[a-z0-9]+)?:", re.IGNORECASE)
_OPTIONS = ("index", "metric")


@dataclass(frozen=True)
class StoreLocation:
    """Where a store lives: ``kind`` is "sqlite", "postgresql" or "milvus"."""

    kind: str
    target: str  # SQLite file path, libpq DSN, or Milvus URI / Lite file path
    options: dict[str, str] = field(default_factory=dict)

    @property
    def is_file(self) -> bool:
        """Whether the store is a local file (SQLite, Milvus Lite)."""
        return self.kind == "sqlite" or (self.kind == "milvus" and not _is_remote(self.target))

    def display(self) -> str:
        return self.target if self.kind == "sqlite" else redact(self.target)


def _is_remote(target: str) -> bool:
    return target.startswith(("http://", "https://", "tcp://"))


def looks_like_url(value: str) -> bool:
    return bool(_URL.match(value) or _BARE.match(value))


def redact(url: str) -> str:
    """The URL with any password replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}"))


def _split_options(url: str) -> tuple[str, dict[str, str]]:
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    options = {key: value for key, value in query if key in _OPTIONS}
    rest = [(key, value) for key, value in query if key not in _OPTIONS]
    return urlunsplit(parts._replace(query=urlencode(rest))), options


def sqlite_path(value: str | os.PathLike[str]) -> Path:
    """A folder means ``<folder>/ragloom.db``; a ``.db`` name or an existing file is the file."""
    path = Path(value).expanduser()
    if path.suffix in SQLITE_SUFFIXES or path.is_file():
        return path
    return path / DB_FILE_NAME


def parse_location(value: str | os.PathLike[str]) -> StoreLocation:
    """Where ``value`` (a path or a URL) points; see the module docstring."""
    text = os.fspath(value)
    if not looks_like_url(text):
        return StoreLocation("sqlite", str(sqlite_path(text)))
    scheme = text.split(":", 1)[0].lower()
    base = scheme.split("+", 1)[0]
    if base not in KNOWN_SCHEMES:
        raise ConfigurationError(
            f"unknown database URL scheme {scheme!r} in {redact(text)!r}; use a folder or "
            ".db file (SQLite), postgresql://USER@HOST/DBNAME, milvus://HOST:PORT or "
            "milvus:///path/file.db")
    url, options = _split_options(text)
    rest = url.split(":", 1)[1]
    if base == "sqlite":
        path = rest[2:] if rest.startswith("//") else rest
        path = path.split("?", 1)[0]
        if not path:
            raise ConfigurationError(f"{text!r} names no file; use sqlite:///path/to/file.db")
        return StoreLocation("sqlite", str(sqlite_path(path)), options)
    if base in ("postgresql", "postgres"):
        return StoreLocation("postgresql", "postgresql:" + rest, options)
    # milvus://HOST:PORT is a server; milvus:///path (empty host) is a Milvus Lite file.
    parts = urlsplit(url)
    if parts.netloc:
        secure = parts.scheme.lower().endswith("+https")
        return StoreLocation("milvus", f"{'https' if secure else 'http'}://{parts.netloc}",
                             options)
    if not parts.path:
        raise ConfigurationError(
            f"{text!r} names no Milvus server or file; use milvus://HOST:PORT or "
            "milvus:///path/file.db")
    return StoreLocation("milvus", str(Path(parts.path).expanduser()), options)


def open_store(location: StoreLocation | str, collection: str = "default",
               metric: str | None = None, *, database: Any = None) -> Any:
    """A store object for one knowledge base; connects lazily (on first use).

    ``database``: a :class:`~ragloom.stores.sqlite_connection.SqliteDatabase` or
    :class:`~ragloom.stores.pgvector_pool.PgDatabase` of the same place, shared with
    other collections' stores (one connection or pool for all of them)."""
    where = location if isinstance(location, StoreLocation) else parse_location(location)
    chosen: Any = metric or where.options.get("metric")
    index: Any = where.options.get("index", "exact")
    if where.kind == "sqlite":
        from ragloom.stores.sqlite import SqliteVectorStore

        Path(where.target).parent.mkdir(parents=True, exist_ok=True)
        return SqliteVectorStore(where.target, collection=collection, metric=chosen,
                                 database=database)
    if index not in ("exact", "hnsw"):
        raise ConfigurationError(f"unknown index {index!r} in the database URL; use exact or hnsw")
    if where.kind == "postgresql":
        from ragloom.stores.pgvector import PgVectorStore

        return PgVectorStore(where.target, collection=collection, metric=chosen, index=index,
                             database=database)
    from ragloom.stores.milvus import MilvusStore

    return MilvusStore(where.target, collection=collection, metric=chosen, index=index,
                       token=os.environ.get("RAGLOOM_MILVUS_TOKEN", ""))


def exists(location: StoreLocation) -> bool:
    """Whether anything is there yet (a local file; servers are assumed to be)."""
    if location.is_file:
        return Path(location.target).exists()
    return True


__all__ = ["StoreLocation", "exists", "looks_like_url", "open_store", "parse_location", "redact",
           "sqlite_path"]

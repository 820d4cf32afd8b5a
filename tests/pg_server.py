"""A PostgreSQL server with pgvector for the tests, started by the ``pgserver`` package.

Shared by the store tests and the server replica tests (the ``pg_url`` fixture in
``tests/conftest.py``): one server per test session. Without pgserver or psycopg the
tests that need it are skipped with a reason naming what to install.
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest


def postgres_server() -> Iterator[str]:
    """Yield the URL of a fresh PostgreSQL (pgvector installed); stop it afterwards."""
    try:
        import pgserver  # type: ignore[import-not-found]
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"PostgreSQL tests need pgserver, psycopg and psycopg_pool ({exc}); "
                    "install them with: pip install 'ragloom[pgvector]' pgserver")
    # Started as root, pgserver runs PostgreSQL as its own user, which cannot enter
    # pytest's private (0700) temporary folders: use a traversable folder of our own.
    folder = Path(tempfile.mkdtemp(prefix="ragloom-pg-"))
    folder.chmod(0o755)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = pgserver.get_server(folder / "pgdata", cleanup_mode="stop")
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        yield str(server.get_uri())
        server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)

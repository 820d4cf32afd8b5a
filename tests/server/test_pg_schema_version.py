"""The server's PostgreSQL tables carry a schema version, as ``server.db`` does: stamped
when created, upgraded in place, and a database written by a newer ragloom is refused
with a message that says what to do. On the real PostgreSQL the tests start (and the
SQLite file of the OpenAI-compatible tables, which now has a version too)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from ragloom.errors import StoreError
from ragloom.server.db import SCHEMA_VERSION, ServerDatabase
from ragloom.server.sql_postgres import SCHEMA_NAME, PostgresDatabase
from ragloom.server.v1.db import SCHEMA_VERSION as OPENAI_VERSION
from ragloom.server.v1.db import MetaDB


def fresh_database(pg_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    return urlunsplit(urlsplit(pg_url)._replace(path=f"/{name}"))


def sql(url: str, statement: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {SCHEMA_NAME}")
        cursor = conn.execute(statement)
        return list(cursor.fetchall()) if cursor.description else []


def open_both(url: str) -> None:
    server, meta = ServerDatabase(url), MetaDB(url)
    try:
        server.all("SELECT id FROM tenants")
        meta.rows("SELECT id FROM oai_files")
    finally:
        server.close()
        meta.close()


def test_tables_are_stamped_and_a_newer_version_is_refused(pg_url: str) -> None:
    url = fresh_database(pg_url, "ragloom_version_newer")
    open_both(url)
    assert dict(sql(url, "SELECT component, version FROM schema_versions")) == {  # type: ignore[arg-type]
        "server": SCHEMA_VERSION, "openai": OPENAI_VERSION}

    sql(url, f"UPDATE schema_versions SET version = {SCHEMA_VERSION + 1} "
             "WHERE component = 'server'")
    server = ServerDatabase(url)
    with pytest.raises(StoreError) as info:
        server.all("SELECT id FROM tenants")
    message = str(info.value)
    assert f"schema version {SCHEMA_VERSION + 1}" in message
    assert "newer ragloom" in message and f"knows version {SCHEMA_VERSION}" in message
    assert "Upgrade ragloom" in message
    with pytest.raises(StoreError):  # refused every time, not only on the first call
        server.one("SELECT 1")
    server.close()
    # The refusal wrote nothing: the newer version stays recorded.
    assert sql(url, "SELECT version FROM schema_versions WHERE component = 'server'") == [
        (SCHEMA_VERSION + 1,)]
    # The other set of tables has its own version and still opens.
    meta = MetaDB(url)
    assert meta.rows("SELECT id FROM oai_files") == []
    meta.close()


def test_tables_from_before_versions_are_kept_and_stamped(pg_url: str) -> None:
    url = fresh_database(pg_url, "ragloom_version_before")
    open_both(url)
    sql(url, "INSERT INTO tenants (id, name, created) VALUES ('t1', 'acme', 0)")
    sql(url, "DROP TABLE schema_versions")  # as the tables were before this change
    open_both(url)
    assert sql(url, "SELECT name FROM tenants") == [("acme",)]
    assert sorted(sql(url, "SELECT component, version FROM schema_versions")) == [
        ("openai", OPENAI_VERSION), ("server", SCHEMA_VERSION)]


def test_an_older_version_is_upgraded_in_place(pg_url: str) -> None:
    url = fresh_database(pg_url, "ragloom_version_older")
    ddl = ("CREATE TABLE IF NOT EXISTS probe (id TEXT PRIMARY KEY)",)
    old = PostgresDatabase(url, ddl, component="probe", version=1)
    old.execute("INSERT INTO probe (id) VALUES (?)", ("kept",))
    old.close()
    new = PostgresDatabase(url, ddl, component="probe", version=2, migrations={
        2: ("ALTER TABLE probe ADD COLUMN IF NOT EXISTS note TEXT DEFAULT 'added'",)})
    assert new.all("SELECT id, note FROM probe") == [("kept", "added")]
    assert new.schema_version() == 2
    new.close()
    with pytest.raises(StoreError, match="schema version 2"):
        PostgresDatabase(url, ddl, component="probe", version=1).all("SELECT 1")


def test_the_sqlite_openai_tables_refuse_a_newer_version_too(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "openai.sqlite"
    MetaDB(str(path)).rows("SELECT id FROM oai_files")
    with sqlite3.connect(path) as conn:  # one database: each set of tables has its row
        versions = "SELECT version FROM schema_versions WHERE component = 'openai'"
        assert conn.execute(versions).fetchone()[0] == OPENAI_VERSION
        conn.execute(f"UPDATE schema_versions SET version = {OPENAI_VERSION + 1} "
                     "WHERE component = 'openai'")
    with pytest.raises(StoreError, match=f"schema version {OPENAI_VERSION + 1}.*newer ragloom"):
        MetaDB(str(path)).rows("SELECT id FROM oai_files")

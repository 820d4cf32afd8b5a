"""SQL over a database the user names, as a content retriever: the model writes the
query, ragloom runs it under guard.

The guards, each on its own enough to stop a write:

* the connection is read-only (SQLite ``mode=ro`` URI) with an authorizer that
  allows reading and nothing else;
* the statement must be exactly one statement whose first word is on the
  allow-list (``SELECT``, ``WITH``);
* at most ``max_rows`` rows are read, and a progress handler stops a query that
  runs longer than ``timeout`` seconds.

The rows come back as one match: the SQL and a small text table.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragloom.advanced.query import Query
from ragloom.advanced.retrievers import DescribedRetriever, text_match
from ragloom.errors import InvalidInputError, QueryError, RagError
from ragloom.protocols import ModelProvider
from ragloom.types import QueryMatch

__all__ = ["SqlDatabaseContentRetriever", "check_statement"]

SQL_PROMPT = (
    "You write SQLite queries. Given the schema below, write one SELECT statement that "
    "answers the question. Reply with the SQL only.\n\nSchema:\n{schema}\n\n"
    "Question: {question}\n\nSQL:"
)
DEFAULT_ALLOWED = ("SELECT", "WITH")
_FENCE = re.compile(r"```(?:sql)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_READ_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                 getattr(sqlite3, "SQLITE_RECURSIVE", 33)}


def extract_sql(reply: str) -> str:
    fenced = _FENCE.search(reply)
    text = fenced.group(1) if fenced else reply
    text = re.sub(r"^\s*sql\s*:\s*", "", text.strip(), flags=re.IGNORECASE)
    return text.strip().rstrip(";").strip()


def check_statement(sql: str, allowed: Sequence[str] = DEFAULT_ALLOWED) -> str:
    """The statement if it is one statement starting with an allowed word, else QueryError."""
    statement = sql.strip().rstrip(";").strip()
    if not statement:
        raise QueryError("the model wrote no SQL statement")
    if ";" in re.sub(r"'(?:[^']|'')*'", "''", statement):
        raise QueryError("only one SQL statement may run; the model wrote several")
    first = statement.split(None, 1)[0].upper()
    if first not in {word.upper() for word in allowed}:
        raise QueryError(f"SQL statements starting with {first} are not allowed; "
                         f"allowed: {', '.join(allowed)}")
    return statement


class SqlDatabaseContentRetriever(DescribedRetriever):
    """``SqlDatabaseContentRetriever("shop.db", model)`` (see the module docstring).

    ``tables`` limits the schema shown to the model (and the tables it may read).
    A refused or failing statement gives no content and a ``notice``.
    """

    def __init__(self, database: str | Path, model: ModelProvider, *,
                 tables: Sequence[str] | None = None, max_rows: int = 50,
                 timeout: float = 5.0, allowed_statements: Sequence[str] = DEFAULT_ALLOWED,
                 prompt: str = SQL_PROMPT, name: str = "sql",
                 description: str = "") -> None:
        if max_rows < 1:
            raise InvalidInputError("max_rows must be at least 1")
        self.database = Path(database)
        self.model = model
        self.tables = tuple(tables) if tables is not None else None
        self.max_rows = max_rows
        self.timeout = timeout
        self.allowed_statements = tuple(allowed_statements)
        self.prompt = prompt
        self._name = name
        self._description = description or f"rows of the SQL database {self.database.name}"
        self.notice = ""
        self.last_sql = ""

    def _connect(self) -> sqlite3.Connection:
        if not self.database.is_file():
            raise InvalidInputError(f"no SQLite database at {self.database}")
        conn = sqlite3.connect(f"{self.database.resolve().as_uri()}?mode=ro", uri=True,
                               check_same_thread=False)
        tables = {t.lower() for t in self.tables} if self.tables is not None else None

        def authorize(action: int, arg1: str | None, arg2: str | None, *_: Any) -> int:
            if action not in _READ_ACTIONS:
                return sqlite3.SQLITE_DENY
            if (action == sqlite3.SQLITE_READ and tables is not None and arg1 is not None
                    and arg1.lower() not in tables and not arg1.startswith("sqlite_")):
                return sqlite3.SQLITE_DENY
            return sqlite3.SQLITE_OK

        conn.set_authorizer(authorize)
        return conn

    def schema(self) -> str:
        conn = sqlite3.connect(f"{self.database.resolve().as_uri()}?mode=ro", uri=True)
        try:
            rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                                "AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
        finally:
            conn.close()
        wanted = {t.lower() for t in self.tables} if self.tables is not None else None
        return "\n".join(f"{sql};" for name, sql in rows
                         if sql and (wanted is None or name.lower() in wanted))

    def run(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        """Run one checked statement: column names, rows, and whether rows were cut."""
        statement = check_statement(sql, self.allowed_statements)
        conn = self._connect()
        deadline = time.monotonic() + self.timeout
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
        try:
            cursor = conn.execute(statement)
            rows = cursor.fetchmany(self.max_rows + 1)
            columns = [d[0] for d in cursor.description or ()]
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise QueryError(f"the SQL query ran longer than {self.timeout} s") from exc
            raise QueryError(f"the SQL query failed: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise QueryError(f"the SQL query was refused: {exc}") from exc
        finally:
            conn.close()
        return columns, rows[: self.max_rows], len(rows) > self.max_rows

    def write_sql(self, question: str) -> str:
        request = self.prompt.replace("{schema}", self.schema()).replace("{question}", question)
        return extract_sql(self.model.chat(request, temperature=0.0, max_tokens=256).text)

    def retrieve(self, query: Query) -> list[QueryMatch]:
        self.notice = ""
        try:
            self.last_sql = self.write_sql(query.text)
            columns, rows, cut = self.run(self.last_sql)
        except RagError as exc:
            self.notice = f"{self._name}: {exc}"
            return []
        lines = [" | ".join(columns)] + [" | ".join("" if v is None else str(v) for v in row)
                                         for row in rows]
        more = f"\n(first {self.max_rows} rows shown)" if cut else ""
        text = (f"Result of the SQL query {self.last_sql}\n" + "\n".join(lines) + more
                if rows else f"The SQL query {self.last_sql} returned no rows.")
        return [text_match(text, source=f"sql:{self.database.name}", retriever=self._name,
                           score=1.0, metadata={"sql": self.last_sql, "rows": len(rows)})]

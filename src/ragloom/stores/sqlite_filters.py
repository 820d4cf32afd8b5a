"""User input to safe SQLite: metadata filters to a WHERE clause, text to an FTS5 query.

Both functions return SQL whose only variable parts are ``?`` placeholders; keys and
values always travel as bound parameters, never inside the SQL text.

The filter SQL means exactly what :func:`ragloom.filters.evaluate` means. The kind
of a stored value comes from ``json_type`` ("true"/"false" are booleans, "integer"/
"real" numbers, "text" strings; "null", "array", "object" and a missing key are not
scalars and never match). ``json_extract`` turns JSON booleans into 1/0, which is
why every comparison is guarded by a kind check. Strings order by code point, which
SQLite's BINARY collation over UTF-8 gives. Numbers compare as SQLite holds them:
64-bit integers and doubles (an integer beyond 64 bits is read as a double).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence

from ragloom.errors import FilterError
from ragloom.filters import KEY_PATTERN, MetadataFilter, MetadataFilters
from ragloom.stores.filter_compiler import FilterCompiler, values_by_kind

_KIND_TYPES = {
    "bool": "('true', 'false')",
    "number": "('integer', 'real')",
    "string": "('text')",
}
_SCALAR_TYPES = "('true', 'false', 'integer', 'real', 'text')"
_INT64 = (-(2**63), 2**63 - 1)

# Word tokens as FTS5's unicode61 tokenizer sees them (letters and digits); the
# underscore is a separator there, so it is one here too.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
#: Distinct words kept from one keyword query (each costs one FTS5 lookup, and SQLite
#: caps a compound SELECT at 500 parts).
MAX_QUERY_TOKENS = 200


def json_path(key: str) -> str:
    """The SQLite JSON path of a dotted metadata key: ``a.b-c`` -> ``$."a"."b-c"``."""
    if not KEY_PATTERN.match(key):
        raise FilterError(
            f"invalid filter key {key!r}: use letters, digits, '_' or '-', "
            "with '.' between nested keys"
        )
    return "$" + "".join(f'."{part}"' for part in key.split("."))


def _bind(value: object) -> object:
    """A filter value as SQLite receives it."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and not _INT64[0] <= value <= _INT64[1]:
        # sqlite3 cannot bind such ints; SQLite reads them from JSON as doubles too.
        return float(value)
    return value


class _Compiler(FilterCompiler):
    TRUE = "1"
    FALSE = "0"

    def __init__(self, column: str) -> None:
        super().__init__()
        self.column = column

    def _type(self, path: str) -> str:
        self.params.append(path)
        return f"json_type({self.column}, ?)"

    def _value(self, path: str) -> str:
        self.params.append(path)
        return f"json_extract({self.column}, ?)"

    def equal_any(self, key: str, values: Sequence[object]) -> str:
        path = json_path(key)
        by_kind = _by_kind(values)
        if not by_kind:
            return "0"
        parts = []
        for kind, bound in by_kind.items():
            type_sql = self._type(path)
            value_sql = self._value(path)
            self.params.extend(bound)
            marks = ", ".join("?" for _ in bound)
            parts.append(f"({type_sql} IN {_KIND_TYPES[kind]} AND {value_sql} IN ({marks}))")
        return "(" + " OR ".join(parts) + ")"

    def scalar(self, key: str) -> str:
        return f"{self._type(json_path(key))} IN {_SCALAR_TYPES}"

    def compare(self, key: str, op: str, value: object, kind: str) -> str:
        path = json_path(key)
        type_sql = self._type(path)
        value_sql = self._value(path)
        self.params.append(_bind(value))
        return f"({type_sql} IN {_KIND_TYPES[kind]} AND {value_sql} {op} ?)"


def _by_kind(values: Sequence[object]) -> dict[str, list[object]]:
    """Filter values grouped by kind, as SQLite receives them."""
    return values_by_kind(values, _bind)


def compile_filters(
    filters: MetadataFilters | MetadataFilter | None, column: str = "metadata"
) -> tuple[str, list[object]]:
    """A WHERE-clause expression over the JSON in ``column`` and its parameters.

    ``column`` is SQL chosen by the caller (a column name), never user input.
    """
    if filters is None:
        return "1", []
    compiler = _Compiler(column)
    sql = compiler.node(filters)
    return sql, compiler.params


def fts_phrases(text: str) -> list[tuple[str, int]]:
    """Safe FTS5 MATCH phrases for the words of free text, each with its repeat count.

    Each word token is quoted, so ``AND``, ``NEAR``, ``*``, ``:`` and quotes are plain
    words or dropped; text without words gives an empty list. A word repeated in the
    query counts that many times (as BM25 over a bag of query words does). At most
    :data:`MAX_QUERY_TOKENS` distinct words are kept, the first ones.
    """
    counts: dict[str, int] = {}
    for token in _WORD.findall(text):
        if token in counts:
            counts[token] += 1
        elif len(counts) < MAX_QUERY_TOKENS:
            counts[token] = 1
    return [(f'"{token}"', repeats) for token, repeats in counts.items()]


# ------------------------------------------------------------ the metadata index
#: Rows of ``chunk_meta`` (one per scalar value anywhere in a chunk's metadata) are
#: written by triggers on ``chunks``; a leaf becomes an indexed lookup there instead
#: of a ``json_extract`` of every chunk. Paths are ``json_tree`` full keys, which the
#: running SQLite spells (quotes) itself: :func:`tree_path` asks it, and the store
#: rebuilds the table when the SQLite version that filled it changes.
_SCALAR_PREDICATE = "type IN ('true', 'false', 'integer', 'real', 'text')"


def tree_path(conn: sqlite3.Connection, key: str) -> str:
    """``json_tree``'s full key for a dotted metadata key, as this SQLite spells it."""
    json_path(key)  # validates the key
    probe: object = 0
    for part in reversed(key.split(".")):
        probe = {part: probe}
    row = conn.execute(
        "SELECT fullkey FROM json_tree(?) WHERE type = 'integer'",
        (json.dumps(probe, ensure_ascii=False),)).fetchone()
    return str(row[0])


class _IndexedCompiler(_Compiler):
    def __init__(self, conn: sqlite3.Connection, pk: str) -> None:
        super().__init__(pk)
        self.conn = conn
        self.paths: dict[str, str] = {}

    def _path(self, key: str) -> str:
        if key not in self.paths:
            self.paths[key] = tree_path(self.conn, key)
        return self.paths[key]

    def _lookup(self, key: str, condition: str, values: Sequence[object]) -> str:
        self.params.append(self._path(key))
        self.params.extend(values)
        return f"{self.column} IN (SELECT pk FROM chunk_meta WHERE path = ? AND {condition})"

    def equal_any(self, key: str, values: Sequence[object]) -> str:
        by_kind = _by_kind(values)
        if not by_kind:
            return "0"
        parts = []
        for kind, bound in by_kind.items():
            marks = ", ".join("?" for _ in bound)
            parts.append(self._lookup(
                key, f"atom IN ({marks}) AND type IN {_KIND_TYPES[kind]}", bound))
        return "(" + " OR ".join(parts) + ")"

    def scalar(self, key: str) -> str:
        return self._lookup(key, _SCALAR_PREDICATE, ())

    def compare(self, key: str, op: str, value: object, kind: str) -> str:
        return self._lookup(key, f"atom {op} ? AND type IN {_KIND_TYPES[kind]}",
                            (_bind(value),))


def compile_indexed_filters(
    filters: MetadataFilters | MetadataFilter | None, conn: sqlite3.Connection,
    pk: str = "pk",
) -> tuple[str, list[object]]:
    """Like :func:`compile_filters`, over the ``chunk_meta`` index of ``chunks.pk``.

    ``pk`` is the caller's SQL for the chunk's ``pk`` column, never user input.
    """
    if filters is None:
        return "1", []
    compiler = _IndexedCompiler(conn, pk)
    sql = compiler.node(filters)
    return sql, compiler.params

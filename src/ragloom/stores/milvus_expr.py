"""Metadata filters as Milvus boolean expressions, every user value escaped.

Milvus compares JSON values loosely (``1 == true`` and ``"1"`` against numbers are
not what :func:`ragloom.filters.evaluate` means), so the store keeps, beside each
chunk's metadata, a flat JSON field ``fm`` whose keys carry the value's kind:
``{"n:year": 2024, "s:lang": "en", "b:draft": false, "n:author.age": 40}`` (dotted
paths for nested objects; null, lists and objects are left out, so they never
match). A filter on ``year`` then reads only ``fm["n:year"]`` for a number, and kinds
never mix. Keys are checked against :data:`ragloom.filters.KEY_PATTERN` (letters,
digits, ``_``, ``-``); string values are quoted with ``\\``, ``"``, newline and
carriage return escaped (the escapes Milvus's parser knows); numbers are written
by ``repr``; booleans as ``true``/``false``. No user text reaches the expression
any other way.

Milvus Lite has no expression templates and no ``in`` on JSON keys, so ``in`` is an
``or`` of equalities. ``not`` over a missing key is false in Milvus, so ``!=`` and
``nin`` are built from ``exists`` per kind.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragloom.errors import FilterError
from ragloom.filters import KEY_PATTERN, MetadataFilter, MetadataFilters, kind_of
from ragloom.stores.filter_compiler import FilterCompiler, values_by_kind

_KEY_PART = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")
_PREFIX = {"bool": "b", "number": "n", "string": "s"}


def flat_filter_fields(metadata: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """The ``fm`` field of a chunk: each scalar reachable by a filter key, kind-tagged."""
    fields: dict[str, Any] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not _KEY_PART.match(key):
            continue  # no filter key can name it
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            fields.update(flat_filter_fields(value, path + "."))
            continue
        if hasattr(value, "item") and type(value).__module__ == "numpy":
            value = value.item()
        kind = kind_of(value)
        if kind is None or (isinstance(value, float) and not math.isfinite(value)):
            continue
        fields[f"{_PREFIX[kind]}:{path}"] = value
    return fields


def string_literal(value: str) -> str:
    escaped = (value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
               .replace("\r", "\\r"))
    return f'"{escaped}"'


def literal(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FilterError("filter values must be finite numbers")
        return repr(float(value))
    if isinstance(value, str):
        return string_literal(value)
    raise FilterError(f"filter value {value!r} is not a string, number or boolean")


def _field(kind: str, key: str) -> str:
    if not KEY_PATTERN.match(key):
        raise FilterError(
            f"invalid filter key {key!r}: use letters, digits, '_' or '-', "
            "with '.' between nested keys")
    return f'fm["{_PREFIX[kind]}:{key}"]'


class _Compiler(FilterCompiler):
    TRUE = "(not (id in []))"
    FALSE = "(id in [])"
    AND = " and "
    OR = " or "

    @staticmethod
    def _equal_by_kind(key: str, values: Sequence[object]) -> dict[str, str]:
        """Per kind, an expression true when the value of that kind is one of ``values``."""
        return {kind: "(" + " or ".join(f"{_field(kind, key)} == {literal(value)}"
                                        for value in group) + ")"
                for kind, group in values_by_kind(values).items()}

    def equal_any(self, key: str, values: Sequence[object]) -> str:
        equal = self._equal_by_kind(key, values)
        return "(" + " or ".join(equal.values()) + ")" if equal else self.FALSE

    def not_equal_any(self, key: str, values: Sequence[object]) -> str:
        # "not" over a missing key is false in Milvus: per kind, present and not equal.
        equal = self._equal_by_kind(key, values)
        parts = []
        for kind in ("bool", "number", "string"):
            present = f"exists {_field(kind, key)}"
            parts.append(f"({present} and not {equal[kind]})" if kind in equal else present)
        return "(" + " or ".join(parts) + ")"

    def compare(self, key: str, op: str, value: object, kind: str) -> str:
        return f"({_field(kind, key)} {op} {literal(value)})"


def compile_expression(filters: MetadataFilters | MetadataFilter | None) -> str:
    """A Milvus boolean expression meaning what ``evaluate`` means; "" for no filter."""
    if filters is None:
        return ""
    return _Compiler().node(filters)


def ids_expression(field: str, ids: Sequence[str]) -> str:
    """``field in [...]`` for a list of ids (``field`` chosen by the caller)."""
    return f"{field} in [" + ", ".join(string_literal(i) for i in ids) + "]"

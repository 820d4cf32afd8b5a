"""Metadata filters: the tree, its validation, and the reference evaluator.

A filter tree is ``MetadataFilters(filters=[...], condition="and" | "or")`` whose
leaves are ``MetadataFilter(key, operator, value)``. The pure-Python
:func:`evaluate` below *is* the meaning of a filter; every store must give the
same answer (a property test holds them to it).

The meaning, in full:

* ``key`` may be dotted (``author.name``) to reach into nested metadata.
* A condition on a key that is missing, ``null``, a list or an object never matches,
  whatever the operator (``!=`` and ``nin`` included), as in SQL.
* Values have one of three kinds: boolean, number, string. A comparison between
  different kinds never matches (``true`` is not ``1``; ``"5"`` is not ``5``) except
  that ``!=`` and ``nin`` match them, being the negation of ``==`` and ``in``.
* ``> < >= <=`` compare numbers numerically and strings by code point.
* ``in`` / ``nin`` take a list of values; ``in []`` never matches.
* ``and`` of no filters matches everything; ``or`` of no filters matches nothing.

JSON form (CLI ``--filter`` and the HTTP API)::

    {"key": "year", "op": ">=", "value": 2020}
    {"and": [{"key": "lang", "op": "==", "value": "en"}, {"or": [...]}]}
    {"lang": "en", "year": 2024}          # shorthand: equality, combined with and
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, get_args

from ragloom.errors import FilterError
from ragloom.types import without_nul

Operator: TypeAlias = Literal["==", "!=", ">", "<", ">=", "<=", "in", "nin"]
Condition: TypeAlias = Literal["and", "or"]
OPERATORS: tuple[str, ...] = get_args(Operator)
ORDERING_OPERATORS = frozenset({">", "<", ">=", "<="})
Scalar: TypeAlias = str | int | float | bool

_KEY_PART = r"[A-Za-z_][A-Za-z0-9_\-]*"
KEY_PATTERN = re.compile(rf"^{_KEY_PART}(\.{_KEY_PART})*$")
_ALIASES = {"=": "==", "eq": "==", "ne": "!=", "gt": ">", "lt": "<", "gte": ">=", "lte": "<=",
            "not in": "nin", "not_in": "nin"}


@dataclass(frozen=True)
class MetadataFilter:
    """One condition on one metadata key."""

    key: str
    operator: Operator
    value: Scalar | tuple[Scalar, ...]

    def __post_init__(self) -> None:
        validate_condition(self.key, self.operator, self.value)
        # Stored metadata has NULs replaced (see types.without_nul); values follow suit.
        value = without_nul(self.value)
        object.__setattr__(self, "value", tuple(value) if isinstance(value, list) else value)

    def to_dict(self) -> dict[str, Any]:
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"key": self.key, "op": self.operator, "value": value}


@dataclass(frozen=True)
class MetadataFilters:
    """Filters combined with ``and`` or ``or``; may nest."""

    filters: tuple[MetadataFilter | MetadataFilters, ...] = ()
    condition: Condition = "and"

    def __post_init__(self) -> None:
        if self.condition not in ("and", "or"):
            raise FilterError(f"filter condition must be 'and' or 'or', not {self.condition!r}")
        object.__setattr__(self, "filters", tuple(self.filters))

    def to_dict(self) -> dict[str, Any]:
        return {self.condition: [item.to_dict() for item in self.filters]}

    def leaves(self) -> Iterator[MetadataFilter]:
        """Every leaf condition of the tree."""
        for item in self.filters:
            if isinstance(item, MetadataFilters):
                yield from item.leaves()
            else:
                yield item


def kind_of(value: object) -> str | None:
    """The filter kind of a metadata value: "bool", "number", "string" or None."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def validate_condition(key: str, operator: str, value: object) -> None:
    if not isinstance(key, str) or not KEY_PATTERN.match(key):
        raise FilterError(
            f"invalid filter key {key!r}: use letters, digits, '_' or '-', "
            "with '.' between nested keys"
        )
    if operator not in OPERATORS:
        raise FilterError(
            f"unknown filter operator {operator!r}; use one of {', '.join(OPERATORS)}"
        )
    if operator in ("in", "nin"):
        if not isinstance(value, (list, tuple)):
            raise FilterError(f"operator {operator!r} on {key!r} needs a list of values")
        for item in value:
            _check_scalar(key, item)
        return
    if isinstance(value, (list, tuple)):
        raise FilterError(f"operator {operator!r} on {key!r} needs a single value, not a list")
    _check_scalar(key, value)
    if operator in ORDERING_OPERATORS and kind_of(value) == "bool":
        raise FilterError(
            f"operator {operator!r} on {key!r} compares numbers or strings, not booleans"
        )


def _check_scalar(key: str, value: object) -> None:
    if kind_of(value) is None:
        raise FilterError(
            f"filter value for {key!r} must be a string, number or boolean, not {value!r}"
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise FilterError(f"filter value for {key!r} must be a finite number")


# -------------------------------------------------------------------------------- parse


def parse_filters(data: object) -> MetadataFilters:
    """Build a filter tree from its JSON form (see the module docstring)."""
    node = _parse_node(data)
    return node if isinstance(node, MetadataFilters) else MetadataFilters((node,))


def _parse_node(data: object) -> MetadataFilter | MetadataFilters:
    if isinstance(data, (MetadataFilter, MetadataFilters)):
        return data
    if not isinstance(data, Mapping):
        raise FilterError(f"a filter must be a JSON object, not {type(data).__name__}")
    if len(data) == 1 and next(iter(data)) in ("and", "or"):
        (condition, items), = data.items()
        if not isinstance(items, Sequence) or isinstance(items, str):
            raise FilterError(f"{condition!r} takes a list of filters")
        return MetadataFilters(tuple(_parse_node(item) for item in items), condition)
    if "key" in data:
        unknown = set(data) - {"key", "op", "operator", "value"}
        if unknown:
            raise FilterError(f"unknown fields in filter: {', '.join(sorted(unknown))}")
        raw_op = str(data.get("op", data.get("operator", "==")))
        operator = _ALIASES.get(raw_op.lower(), raw_op)
        if "value" not in data:
            raise FilterError(f"filter on {data['key']!r} has no 'value'")
        return MetadataFilter(data["key"], operator, data["value"])  # type: ignore[arg-type]
    # Shorthand: {"lang": "en", "year": 2024} means lang == "en" and year == 2024.
    leaves: list[MetadataFilter | MetadataFilters] = []
    for key, value in data.items():
        shorthand: Operator = "in" if isinstance(value, list) else "=="
        leaves.append(MetadataFilter(str(key), shorthand, value))
    return MetadataFilters(tuple(leaves), "and")


# ----------------------------------------------------------------------------- evaluate


_MISSING = object()


def lookup(metadata: Mapping[str, Any], key: str) -> object:
    """The value at a dotted key, or a sentinel when any step is missing."""
    current: object = metadata
    for part in key.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return _MISSING
        current = current[part]
    return current


def _equal(left: object, right: object) -> bool:
    return kind_of(left) == kind_of(right) and left == right


def _matches(leaf: MetadataFilter, metadata: Mapping[str, Any]) -> bool:
    found = lookup(metadata, leaf.key)
    if found is _MISSING or kind_of(found) is None:
        return False
    value = leaf.value
    op = leaf.operator
    if op == "==":
        return _equal(found, value)
    if op == "!=":
        return not _equal(found, value)
    if op == "in":
        return any(_equal(found, item) for item in value)  # type: ignore[union-attr]
    if op == "nin":
        return not any(_equal(found, item) for item in value)  # type: ignore[union-attr]
    if kind_of(found) != kind_of(value) or kind_of(found) == "bool":
        return False
    a: Any = found
    b: Any = value
    if op == ">":
        return bool(a > b)
    if op == "<":
        return bool(a < b)
    if op == ">=":
        return bool(a >= b)
    return bool(a <= b)


def evaluate(filters: MetadataFilters | MetadataFilter | None, metadata: Mapping[str, Any]) -> bool:
    """The reference meaning of a filter tree for one metadata mapping."""
    if filters is None:
        return True
    if isinstance(filters, MetadataFilter):
        return _matches(filters, metadata)
    results = (evaluate(item, metadata) for item in filters.filters)
    return all(results) if filters.condition == "and" else any(results)

"""What every store's filter compiler shares: the walk over the filter tree.

SQLite (:mod:`ragloom.stores.sqlite_filters`), PostgreSQL
(:mod:`ragloom.stores.pgvector_sql`) and Milvus (:mod:`ragloom.stores.milvus_expr`)
turn a :class:`~ragloom.filters.MetadataFilters` tree into their own expression
language. The tree walk, the empty ``and``/``or``, what each operator means (equality
in value and kind; ``!=``/``nin`` only for a scalar that is present; ``> < >= <=``
only between numbers or between strings) and the grouping of ``in`` values by kind
are the same everywhere; only the literals and three pieces of a leaf differ, so a
subclass sets :attr:`FilterCompiler.TRUE`, ``FALSE``, ``AND``, ``OR`` and writes
:meth:`~FilterCompiler.equal_any`, :meth:`~FilterCompiler.scalar` and
:meth:`~FilterCompiler.compare`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from ragloom.errors import FilterError
from ragloom.filters import MetadataFilter, MetadataFilters, kind_of


class FilterCompiler:
    """A filter tree to one boolean expression; parameters, if any, in ``params``."""

    TRUE: ClassVar[str] = "TRUE"
    FALSE: ClassVar[str] = "FALSE"
    AND: ClassVar[str] = " AND "
    OR: ClassVar[str] = " OR "

    def __init__(self) -> None:
        self.params: list[object] = []

    def node(self, node: MetadataFilters | MetadataFilter) -> str:
        if isinstance(node, MetadataFilter):
            return self.leaf(node)
        if not node.filters:
            # An empty "and" holds for everything, an empty "or" for nothing.
            return self.TRUE if node.condition == "and" else self.FALSE
        joiner = self.AND if node.condition == "and" else self.OR
        return "(" + joiner.join(self.node(item) for item in node.filters) + ")"

    def leaf(self, leaf: MetadataFilter) -> str:
        values = leaf_values(leaf)
        if leaf.operator in ("==", "in"):
            return self.equal_any(leaf.key, values)
        if leaf.operator in ("!=", "nin"):
            return self.not_equal_any(leaf.key, values)
        kind = kind_of(leaf.value)
        if kind not in ("number", "string"):
            raise FilterError(
                f"operator {leaf.operator!r} on {leaf.key!r} compares numbers or strings")
        return self.compare(leaf.key, leaf.operator, leaf.value, kind)

    def not_equal_any(self, key: str, values: Sequence[object]) -> str:
        # The scalar check comes first, so a missing key, null, list or object never
        # matches and NOT never sees NULL.
        return f"({self.scalar(key)}{self.AND}NOT {self.equal_any(key, values)})"

    # What a store writes: --------------------------------------------------------
    def equal_any(self, key: str, values: Sequence[object]) -> str:
        """True when the value under ``key`` equals one of ``values`` in value and kind."""
        raise NotImplementedError

    def scalar(self, key: str) -> str:
        """True when the value under ``key`` is a boolean, number or string."""
        raise NotImplementedError

    def compare(self, key: str, op: str, value: object, kind: str) -> str:
        """True when the value under ``key`` is of ``kind`` (number or string) and
        ``op`` (``> < >= <=``) ``value``."""
        raise NotImplementedError


def leaf_values(leaf: MetadataFilter) -> Sequence[object]:
    """The values a leaf compares against: the list of ``in``/``nin``, else the one."""
    value = leaf.value
    return value if isinstance(value, tuple) else (value,)


def values_by_kind(
    values: Sequence[object], bind: Callable[[object], object] = lambda value: value
) -> dict[str, list[object]]:
    """Filter values grouped by kind (bool, number, string), each passed through
    ``bind`` (how the store receives it); a value of no kind is refused."""
    by_kind: dict[str, list[object]] = {}
    for value in values:
        kind = kind_of(value)
        if kind is None:
            raise FilterError(f"filter value {value!r} is not a string, number or boolean")
        by_kind.setdefault(kind, []).append(bind(value))
    return by_kind


__all__ = ["FilterCompiler", "leaf_values", "values_by_kind"]

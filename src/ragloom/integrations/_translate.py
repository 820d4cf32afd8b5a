"""The frameworks' metadata filters as ragloom filters (:mod:`ragloom.filters`).

Each translator returns a :class:`~ragloom.filters.MetadataFilters` that the store
applies itself, or raises :class:`~ragloom.errors.FilterError` naming what ragloom
cannot express. ragloom's filters never match a key that is missing or ``null``; a
framework operator whose meaning includes such documents (Haystack's ``!=``, ``not in``,
``NOT`` and comparisons with ``None``) has no ragloom equivalent and is refused for
search. Haystack's ``filter_documents`` lists whole collections, so it applies them
exactly instead (see :func:`haystack_filters`). ``docs/integrations.md`` has the tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ragloom.errors import FilterError
from ragloom.filters import MetadataFilter, MetadataFilters

__all__ = ["UNTRANSLATED", "haystack_filters", "langchain_filters", "llama_index_filters"]

Node = MetadataFilter | MetadataFilters
_NOTHING = MetadataFilters((), "or")

# ---------------------------------------------------------------------------- LangChain
_LANGCHAIN_OPS = {"$eq": "==", "$ne": "!=", "$gt": ">", "$gte": ">=", "$lt": "<",
                  "$lte": "<=", "$in": "in", "$nin": "nin"}


def langchain_filters(data: Mapping[str, Any] | MetadataFilters | None) -> MetadataFilters | None:
    """LangChain's filter dict (``{"year": 2024}``, ``{"year": {"$gte": 2020}}``,
    ``{"$or": [...]}``) as ragloom filters; a ragloom ``MetadataFilters`` passes through."""
    if data is None or isinstance(data, MetadataFilters):
        return data
    if not isinstance(data, Mapping):
        raise FilterError(
            f"a LangChain filter is a dict such as {{'year': {{'$gte': 2020}}}}, not "
            f"{type(data).__name__} (ragloom cannot run a Python function as a filter)")
    if not data:
        return None
    node = _langchain_node(data)
    return node if isinstance(node, MetadataFilters) else MetadataFilters((node,))


def _langchain_node(data: Mapping[str, Any]) -> Node:
    parts: list[Node] = []
    for key, value in data.items():
        if key in ("$and", "$or"):
            if not isinstance(value, list):
                raise FilterError(f"{key} takes a list of filters")
            parts.append(MetadataFilters(tuple(_langchain_node(_mapping(v, key)) for v in value),
                                         "and" if key == "$and" else "or"))
        elif key.startswith("$"):
            raise FilterError(f"unsupported LangChain filter operator {key!r}; ragloom takes "
                              "$and, $or and, per field, " + ", ".join(_LANGCHAIN_OPS))
        elif isinstance(value, Mapping):
            for op, operand in value.items():
                if op not in _LANGCHAIN_OPS:
                    raise FilterError(
                        f"unsupported operator {op!r} on {key!r}; ragloom takes "
                        + ", ".join(_LANGCHAIN_OPS) + " ($exists, $like, $ilike, $contain "
                        "and $not have no ragloom equivalent)")
                parts.append(MetadataFilter(key, _LANGCHAIN_OPS[op], _list_or(operand)))  # type: ignore[arg-type]
        else:
            parts.append(MetadataFilter(key, "==", value))
    return parts[0] if len(parts) == 1 else MetadataFilters(tuple(parts), "and")


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise FilterError(f"{where} takes a list of filter dicts, not {value!r}")
    return value


def _list_or(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


# ----------------------------------------------------------------------------- Haystack
_HAYSTACK_COMPARISONS = ("==", "!=", ">", ">=", "<", "<=", "in", "not in")
_HAYSTACK_LOGIC = ("AND", "OR", "NOT")

#: Haystack constructs ragloom's filters cannot express (they match missing fields).
UNTRANSLATED = "NOT, !=, 'not in', comparisons with None, and fields outside meta"


def haystack_filters(data: Mapping[str, Any] | None,
                     error: type[Exception] = FilterError) -> tuple[MetadataFilters | None, bool]:
    """Haystack 2.x filters as ``(ragloom filters, exact)``.

    The filter is checked as Haystack checks it (``error`` is raised for a malformed one:
    a missing key, ``in`` without a list, ``>`` with a list or a string that is no ISO
    date). When ``exact`` is False, the ragloom filter keeps a superset of the documents
    (the parts ragloom cannot express were left out) and the caller must check each
    document with Haystack's own evaluator; None means no filter.
    """
    if not data:
        return None, True
    if not isinstance(data, Mapping):
        raise error(f"a Haystack filter is a dict, not {type(data).__name__}")
    _check_haystack(data, error)
    node = _haystack_node(data)
    if node is None:
        return None, False
    exact = _exact(data)
    return (node if isinstance(node, MetadataFilters) else MetadataFilters((node,))), exact


def _check_haystack(data: Mapping[str, Any], error: type[Exception]) -> None:
    if "operator" not in data:
        raise error(f"a Haystack filter needs an 'operator': {dict(data)!r}")
    op = data["operator"]
    if op in _HAYSTACK_LOGIC:
        conditions = data.get("conditions")
        if not isinstance(conditions, list):
            raise error(f"'{op}' needs a list of 'conditions': {dict(data)!r}")
        for item in conditions:
            if not isinstance(item, Mapping):
                raise error(f"a condition is a dict, not {item!r}")
            _check_haystack(item, error)
        return
    if op not in _HAYSTACK_COMPARISONS:
        raise error(f"unknown Haystack filter operator {op!r}")
    if "field" not in data:
        raise error(f"a comparison needs a 'field': {dict(data)!r}")
    if "value" not in data:
        raise error(f"a comparison needs a 'value': {dict(data)!r}")
    value = data["value"]
    if op in ("in", "not in") and not isinstance(value, list):
        raise error(f"'{op}' takes a list of values, not {value!r}")
    if op in (">", ">=", "<", "<="):
        if isinstance(value, (list, dict)):
            raise error(f"'{op}' compares with a number or an ISO date, not {value!r}")
        if isinstance(value, str) and not _iso_date(value):
            raise error(f"'{op}' compares strings only when they are ISO dates, not {value!r}")


def _iso_date(value: str) -> bool:
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _meta_key(field: object) -> str | None:
    if isinstance(field, str) and field.startswith("meta."):
        return field[5:]
    return None


def _haystack_node(data: Mapping[str, Any]) -> Node | None:
    """The ragloom filter, or None where it cannot be expressed (a superset is kept)."""
    op = data["operator"]
    if op in ("AND", "OR"):
        children = [_haystack_node(item) for item in data["conditions"]]
        if op == "OR" and any(child is None for child in children):
            return None
        kept = tuple(child for child in children if child is not None)
        if op == "AND" and not kept:
            return None
        return MetadataFilters(kept, "and" if op == "AND" else "or")
    if op == "NOT":
        return None
    key, value = _meta_key(data["field"]), data["value"]
    if key is None or op in ("!=", "not in"):
        return None
    if value is None:
        # == None matches a missing field; > None and the like match nothing.
        return None if op == "==" else _NOTHING
    try:
        if op == "in":
            if any(v is None for v in value):
                return None
            return MetadataFilter(key, "in", tuple(value))
        return MetadataFilter(key, op, value)
    except FilterError:
        return None


def _exact(data: Mapping[str, Any]) -> bool:
    op = data["operator"]
    if op in ("AND", "OR"):
        return all(_exact(item) for item in data["conditions"])
    if op == "NOT":
        return False
    value = data["value"]
    if value is None:
        return bool(op != "==")
    return bool(_haystack_node(data) is not None)


# ---------------------------------------------------------------------------- LlamaIndex
_LLAMA_OPS = {"==": "==", "!=": "!=", ">": ">", ">=": ">=", "<": "<", "<=": "<=",
              "in": "in", "nin": "nin"}


def llama_index_filters(filters: Any) -> MetadataFilters | None:
    """LlamaIndex ``MetadataFilters`` (and ``ExactMatchFilter``/``MetadataFilter``
    leaves) as ragloom filters; ``NOT`` and the array and text operators are refused."""
    if filters is None:
        return None
    node = _llama_node(filters)
    return node if isinstance(node, MetadataFilters) else MetadataFilters((node,))


def _llama_node(item: Any) -> Node:
    if hasattr(item, "filters"):
        condition = str(getattr(getattr(item, "condition", None), "value", "and") or "and")
        if condition not in ("and", "or"):
            raise FilterError(f"LlamaIndex filter condition {condition!r} has no ragloom "
                              "equivalent; use 'and' or 'or'")
        return MetadataFilters(tuple(_llama_node(child) for child in item.filters),
                               condition)  # type: ignore[arg-type]
    op = str(getattr(getattr(item, "operator", None), "value", "=="))
    if op not in _LLAMA_OPS:
        raise FilterError(f"LlamaIndex filter operator {op!r} on {item.key!r} has no ragloom "
                          "equivalent; use " + ", ".join(_LLAMA_OPS))
    value = item.value
    if isinstance(value, Sequence) and not isinstance(value, str):
        value = tuple(value)
    return MetadataFilter(item.key, _LLAMA_OPS[op], value)  # type: ignore[arg-type]

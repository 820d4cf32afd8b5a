"""The filter translation tables of docs/integrations.md, row by row, and the refusals."""

from __future__ import annotations

from typing import Any

import pytest

from ragloom.errors import FilterError
from ragloom.integrations._translate import (
    haystack_filters,
    langchain_filters,
    llama_index_filters,
)


@pytest.mark.parametrize(("given", "expected"), [
    ({"lang": "en"}, {"and": [{"key": "lang", "op": "==", "value": "en"}]}),
    ({"year": {"$gte": 2020}}, {"and": [{"key": "year", "op": ">=", "value": 2020}]}),
    ({"year": {"$gt": 1, "$lt": 9}}, {"and": [{"key": "year", "op": ">", "value": 1},
                                              {"key": "year", "op": "<", "value": 9}]}),
    ({"lang": {"$in": ["en", "fr"]}}, {"and": [{"key": "lang", "op": "in",
                                               "value": ["en", "fr"]}]}),
    ({"lang": {"$nin": ["de"]}}, {"and": [{"key": "lang", "op": "nin", "value": ["de"]}]}),
    ({"lang": {"$ne": "de"}}, {"and": [{"key": "lang", "op": "!=", "value": "de"}]}),
    ({"year": {"$lte": 3}}, {"and": [{"key": "year", "op": "<=", "value": 3}]}),
    ({"$or": [{"lang": "en"}, {"year": {"$eq": 2}}]},
     {"or": [{"key": "lang", "op": "==", "value": "en"},
             {"key": "year", "op": "==", "value": 2}]}),
    ({"$and": [{"a": 1}], "b": True}, {"and": [{"and": [{"key": "a", "op": "==", "value": 1}]},
                                               {"key": "b", "op": "==", "value": True}]}),
])
def test_langchain_table(given: dict[str, Any], expected: dict[str, Any]) -> None:
    translated = langchain_filters(given)
    assert translated is not None and translated.to_dict() == expected


@pytest.mark.parametrize(("given", "named"), [
    ({"a": {"$exists": True}}, "$exists"), ({"a": {"$like": "x%"}}, "$like"),
    ({"$not": {"a": 1}}, "$not"), ({"a": {"$in": "x"}}, "list"),
])
def test_langchain_refusals_name_the_operator(given: dict[str, Any], named: str) -> None:
    with pytest.raises(FilterError, match=named.replace("$", r"\$")):
        langchain_filters(given)
    with pytest.raises(FilterError, match="function"):
        langchain_filters(lambda doc: True)  # type: ignore[arg-type]


def leaf(field: str, op: str, value: Any) -> dict[str, Any]:
    return {"field": field, "operator": op, "value": value}


@pytest.mark.parametrize(("given", "expected", "exact"), [
    (leaf("meta.year", "==", 2024), {"and": [{"key": "year", "op": "==", "value": 2024}]}, True),
    (leaf("meta.a.b", ">", 1), {"and": [{"key": "a.b", "op": ">", "value": 1}]}, True),
    (leaf("meta.d", "<=", "2020-01-01"),
     {"and": [{"key": "d", "op": "<=", "value": "2020-01-01"}]}, True),
    (leaf("meta.n", "in", [1, 2]), {"and": [{"key": "n", "op": "in", "value": [1, 2]}]}, True),
    (leaf("meta.n", ">", None), {"or": []}, True),  # matches nothing, as in Haystack
    ({"operator": "OR", "conditions": [leaf("meta.n", "==", 1), leaf("meta.m", "<", 2)]},
     {"or": [{"key": "n", "op": "==", "value": 1}, {"key": "m", "op": "<", "value": 2}]}, True),
    # Inexact: a superset goes to the store, Haystack's evaluator finishes the job.
    ({"operator": "AND", "conditions": [leaf("meta.n", "==", 1), leaf("meta.m", "!=", 2)]},
     {"and": [{"key": "n", "op": "==", "value": 1}]}, False),
    (leaf("meta.n", "==", None), None, False),
    (leaf("meta.n", "not in", [1]), None, False),
    (leaf("content", "==", "x"), None, False),
    ({"operator": "NOT", "conditions": [leaf("meta.n", "==", 1)]}, None, False),
    ({"operator": "OR", "conditions": [leaf("meta.n", "==", 1), leaf("meta.m", "!=", 2)]},
     None, False),
])
def test_haystack_table(given: dict[str, Any], expected: dict[str, Any] | None,
                        exact: bool) -> None:
    translated, is_exact = haystack_filters(given)
    assert (translated.to_dict() if translated is not None else None) == expected
    assert is_exact is exact


@pytest.mark.parametrize("given", [
    {"conditions": []}, {"operator": "AND"}, {"operator": "==", "value": 1},
    {"field": "meta.a", "operator": "=="}, leaf("meta.a", "in", 3), leaf("meta.a", "in", (1,)),
    leaf("meta.a", ">", "1"), leaf("meta.a", ">", [1]), leaf("meta.a", "~", 1),
])
def test_haystack_malformed_filters_raise_the_given_error(given: dict[str, Any]) -> None:
    class Refused(Exception):
        pass

    with pytest.raises(Refused):
        haystack_filters(given, Refused)


def test_llama_index_table_and_refusals() -> None:
    li = pytest.importorskip("llama_index.core.vector_stores.types")
    filters = li.MetadataFilters(filters=[
        li.ExactMatchFilter(key="lang", value="en"),
        li.MetadataFilters(filters=[
            li.MetadataFilter(key="year", value=2020, operator=li.FilterOperator.LT),
            li.MetadataFilter(key="tag", value=["a", "b"], operator=li.FilterOperator.NIN)],
            condition=li.FilterCondition.OR)])
    assert llama_index_filters(filters).to_dict() == {"and": [  # type: ignore[union-attr]
        {"key": "lang", "op": "==", "value": "en"},
        {"or": [{"key": "year", "op": "<", "value": 2020},
                {"key": "tag", "op": "nin", "value": ["a", "b"]}]}]}
    with pytest.raises(FilterError, match="'not'"):
        llama_index_filters(li.MetadataFilters(
            filters=[li.ExactMatchFilter(key="a", value=1)], condition=li.FilterCondition.NOT))
    with pytest.raises(FilterError, match="'contains'"):
        llama_index_filters(li.MetadataFilters(filters=[
            li.MetadataFilter(key="a", value=1, operator=li.FilterOperator.CONTAINS)]))

import pytest

from ragloom.errors import FilterError
from ragloom.filters import MetadataFilter, MetadataFilters, evaluate, parse_filters

META = {"year": 2021, "lang": "en", "draft": False, "score": 0.5,
        "author": {"name": "Ada"}, "tags": ["a"], "none": None}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"key": "year", "op": "==", "value": 2021}, True),
        ({"key": "year", "op": "==", "value": 2021.0}, True),
        ({"key": "year", "op": "==", "value": "2021"}, False),
        ({"key": "year", "op": "!=", "value": "2021"}, True),
        ({"key": "year", "op": ">", "value": 2020}, True),
        ({"key": "year", "op": "<=", "value": 2020}, False),
        ({"key": "lang", "op": ">", "value": "de"}, True),
        ({"key": "lang", "op": ">", "value": 1}, False),
        ({"key": "draft", "op": "==", "value": False}, True),
        ({"key": "draft", "op": "==", "value": 0}, False),
        ({"key": "lang", "op": "in", "value": ["en", "de"]}, True),
        ({"key": "lang", "op": "nin", "value": ["en", "de"]}, False),
        ({"key": "lang", "op": "in", "value": []}, False),
        ({"key": "author.name", "op": "==", "value": "Ada"}, True),
        ({"key": "missing", "op": "!=", "value": 1}, False),
        ({"key": "missing", "op": "nin", "value": [1]}, False),
        ({"key": "none", "op": "!=", "value": 1}, False),
        ({"key": "tags", "op": "==", "value": "a"}, False),
        ({"and": []}, True),
        ({"or": []}, False),
        ({"or": [{"key": "year", "op": "<", "value": 2000}, {"lang": "en"}]}, True),
        ({"and": [{"key": "year", "op": ">=", "value": 2021}, {"lang": ["fr"]}]}, False),
        ({"lang": "en", "year": 2021}, True),
    ],
)
def test_reference_semantics(data: object, expected: bool) -> None:
    assert evaluate(parse_filters(data), META) is expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"key": "a b", "op": "==", "value": 1}, "invalid filter key"),
        ({"key": "a", "op": "~", "value": 1}, "unknown filter operator"),
        ({"key": "a", "op": "in", "value": 1}, "needs a list"),
        ({"key": "a", "op": "==", "value": [1]}, "single value"),
        ({"key": "a", "op": ">", "value": True}, "not booleans"),
        ({"key": "a", "op": "==", "value": {"x": 1}}, "string, number or boolean"),
        ({"key": "a", "op": "==", "value": float("nan")}, "finite"),
        ({"key": "a", "op": "=="}, "no 'value'"),
        ({"and": "x"}, "takes a list"),
        ([1], "JSON object"),
        ({"key": "a", "value": 1, "extra": 2}, "unknown fields"),
    ],
)
def test_bad_filters_are_refused_clearly(data: object, message: str) -> None:
    with pytest.raises(FilterError, match=message):
        parse_filters(data)


def test_round_trip_through_json_form() -> None:
    tree = MetadataFilters((MetadataFilter("a", "in", (1, 2)),
                            MetadataFilters((MetadataFilter("b", "<", "z"),), "or")))
    assert parse_filters(tree.to_dict()) == tree
    assert [leaf.key for leaf in tree.leaves()] == ["a", "b"]


def test_operator_aliases() -> None:
    assert parse_filters({"key": "y", "op": "gte", "value": 1}).filters[0].operator == ">="

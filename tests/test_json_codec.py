"""json_codec writes what the json module writes (orjson underneath)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloom import json_codec

_scalars = (st.none() | st.booleans()
            | st.integers(min_value=-(2**80), max_value=2**80)
            | st.floats(allow_nan=True, allow_infinity=True)
            | st.text())  # any code point, lone surrogates and NUL included
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                       max_leaves=20)


def _same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN, and an int never equal to a float."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@settings(max_examples=400, deadline=None)
@given(_values)
def test_encode_round_trips_through_the_json_module(value: Any) -> None:
    try:
        standard: bytes | None = json.dumps(value, ensure_ascii=False, allow_nan=False,
                                            separators=(",", ":")).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        standard = None  # NaN, or a lone surrogate, which UTF-8 cannot hold
    try:
        encoded = json_codec.encode(value)
    except (ValueError, UnicodeEncodeError):
        assert standard is None  # fails only where the json module fails too
        return
    # Strict JSON always: NaN and infinities are written as null, never as the bare
    # NaN / Infinity the json module accepts back.
    back = json.loads(encoded, parse_constant=_refuse)
    if standard is not None:
        assert _same(back, json.loads(standard))


def _refuse(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON")


def test_big_integers_non_ascii_and_nan() -> None:
    expected = '{"n":1180591620717411303424,"t":"é"}'.encode()
    assert json_codec.encode({"n": 2**70, "t": "é"}) == expected
    assert json_codec.encode({"x": float("nan")}) == b'{"x":null}'
    assert json_codec.encode({1: "a"}) == b'{"1":"a"}'  # the json module's key rule


@pytest.mark.skipif(json_codec.orjson is None, reason="orjson is not installed")
def test_orjson_writes_what_the_json_module_writes_for_a_search_page() -> None:
    page = {"object": "vector_store.search_results.page", "search_query": ["q"],
            "data": [{"file_id": "file-1", "filename": "a.txt", "score": 0.580129,
                      "attributes": {"year": 2024, "tags": ["x", "ü"], "ok": True},
                      "content": [{"type": "text", "text": "line one\n\nline two"}]}],
            "has_more": False, "next_page": None}
    assert json_codec.encode(page) == json.dumps(
        page, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

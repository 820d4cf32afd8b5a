"""Filters mean the same on every store: SQLite's SQL, the in-memory store and
``filters.evaluate`` must pick exactly the same chunks."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragloom.filters import MetadataFilter, MetadataFilters, evaluate
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.types import Vector
from tests.stores.conftest import entry, make_chunk

KEYS = ["a", "b", "c", "n"]
NESTED_KEYS = ["a", "b"]
# A small pool makes equal values (and near-misses across kinds) common.
POOL: list[Any] = [0, 1, -1, 1.0, 1.5, 2, "", "a", "b", "1", "ä", "B", True, False]

scalars = st.one_of(
    st.sampled_from(POOL),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)
values = st.one_of(scalars, st.none(), st.lists(scalars, max_size=2))
nested = st.dictionaries(st.sampled_from(NESTED_KEYS), values, max_size=2)
records = st.dictionaries(st.sampled_from(KEYS), st.one_of(values, nested), max_size=4)

filter_keys = st.sampled_from(KEYS + [f"n.{k}" for k in NESTED_KEYS] + ["a.b", "missing"])


@st.composite
def leaves(draw: st.DrawFn) -> MetadataFilter:
    key = draw(filter_keys)
    op = draw(st.sampled_from(["==", "!=", ">", "<", ">=", "<=", "in", "nin"]))
    if op in ("in", "nin"):
        return MetadataFilter(key, op, tuple(draw(st.lists(scalars, max_size=3))))
    if op in ("==", "!="):
        return MetadataFilter(key, op, draw(scalars))
    value = draw(scalars.filter(lambda v: not isinstance(v, bool)))
    return MetadataFilter(key, op, value)


trees = st.recursive(
    leaves(),
    lambda children: st.builds(MetadataFilters, st.lists(children, max_size=3).map(tuple),
                               st.sampled_from(["and", "or"])),
    max_leaves=6,
).map(lambda node: node if isinstance(node, MetadataFilters) else MetadataFilters((node,)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(metadata=st.lists(records, min_size=1, max_size=12), filters=trees)
def test_every_store_matches_the_reference(
    metadata: list[dict[str, Any]], filters: MetadataFilters
) -> None:
    entries = [entry(make_chunk(f"c{i:02d}", "word", meta), [1.0, float(i + 1)])
               for i, meta in enumerate(metadata)]
    # The reference reads the metadata as the chunk holds it (NULs replaced).
    expected = {e.id for e in entries if evaluate(filters, e.chunk.metadata)}
    query = Vector(np.array([1.0, 1.0], dtype=np.float32))
    top_k = len(entries)

    memory = InMemoryVectorStore()
    memory.add(entries)
    assert {m.chunk.id for m in memory.query(query, top_k=top_k, filters=filters)} == expected

    with SqliteVectorStore(":memory:") as sqlite:
        sqlite.add(entries)
        got = {m.chunk.id for m in sqlite.query(query, top_k=top_k, filters=filters)}
        assert got == expected
        by_keyword = sqlite.keyword_query("word", top_k=top_k, filters=filters)
        assert {m.chunk.id for m in by_keyword} == expected


def test_documented_corner_cases() -> None:
    """The rules of ``filters`` spelled out, on SQLite."""
    metadata = [{"x": True}, {"x": 1}, {"x": "1"}, {"x": None}, {"x": [1]}, {}, {"x": {"y": 1}},
                {"x": 1.0}]
    entries = [entry(make_chunk(f"c{i}", "w", m), [1.0, float(i + 1)])
               for i, m in enumerate(metadata)]

    def ids(tree: MetadataFilters) -> set[str]:
        with SqliteVectorStore(":memory:") as store:
            store.add(entries)
            return {m.chunk.id for m in store.query(Vector(np.ones(2, dtype=np.float32)),
                                                    top_k=20, filters=tree)}

    assert ids(MetadataFilters((MetadataFilter("x", "==", 1),))) == {"c1", "c7"}
    assert ids(MetadataFilters((MetadataFilter("x", "==", True),))) == {"c0"}
    assert ids(MetadataFilters((MetadataFilter("x", "!=", 1),))) == {"c0", "c2"}
    assert ids(MetadataFilters((MetadataFilter("x", "nin", ()),))) == {"c0", "c1", "c2", "c7"}
    assert ids(MetadataFilters((MetadataFilter("x", "in", ()),))) == set()
    assert ids(MetadataFilters((), "and")) == {f"c{i}" for i in range(8)}
    assert ids(MetadataFilters((), "or")) == set()
    assert ids(MetadataFilters((MetadataFilter("x.y", ">", 0),))) == {"c6"}

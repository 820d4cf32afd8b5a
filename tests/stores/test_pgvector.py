"""PgVectorStore beyond the shared suite: the HNSW index and the SQL it runs."""

from __future__ import annotations

from typing import Any

import numpy as np

from ragloom.filters import parse_filters
from ragloom.stores.pgvector_sql import compile_filters, to_jsonb_text
from ragloom.testing.store_conformance import brute_force, entry, make_chunk
from ragloom.types import Vector


def test_hnsw_index_is_built_and_used(make_pg_store: Any, pg_url: str) -> None:
    import psycopg

    store = make_pg_store("cosine", index="hnsw")
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((300, 16)).astype(np.float32)
    ids = [f"c{i:03d}" for i in range(300)]
    store.add([entry(make_chunk(cid, "w", {"i": i}), matrix[i]) for i, cid in enumerate(ids)])
    query = rng.standard_normal(16).astype(np.float32)
    with psycopg.connect(pg_url) as conn:
        cid = conn.execute("SELECT id FROM ragloom_collections WHERE name = %s",
                           (store.name,)).fetchone()[0]
        conn.execute("ANALYZE ragloom_chunks")
        conn.execute("SET enable_seqscan = off")
        conn.execute("SET enable_bitmapscan = off")
        plan = "\n".join(row[0] for row in conn.execute(
            f"EXPLAIN SELECT id FROM ragloom_chunks c WHERE c.collection_id = {cid} "
            f"ORDER BY c.embedding::vector(16) <=> %s::vector LIMIT 10",
            ("[" + ",".join(map(str, query.tolist())) + "]",)))
    assert f"ragloom_hnsw_{cid}" in plan
    expected = [cid for cid, _ in brute_force(matrix, ids, query, "cosine", 10)]
    got = [m.chunk.id for m in store.query(Vector(query), top_k=10)]
    assert len(set(got) & set(expected)) >= 9  # approximate, but at this size nearly exact
    # Filtered queries stay exact, whatever the filter's selectivity.
    only = parse_filters({"key": "i", "op": "<", "value": 20})
    exact = [cid for cid, _ in brute_force(matrix[:20], ids[:20], query, "cosine", 5)]
    assert [m.chunk.id for m in store.query(Vector(query), top_k=5, filters=only)] == exact


def test_filters_are_parameterised() -> None:
    hostile = "x'); DROP TABLE ragloom_chunks; --"
    tree = parse_filters({"or": [{"key": "a", "op": "==", "value": hostile},
                                 {"key": "b.c", "op": ">", "value": hostile}]})
    sql, params = compile_filters(tree)
    assert hostile not in sql
    assert any(hostile in str(p) for p in params)


def test_wide_floats_compare_exactly() -> None:
    assert to_jsonb_text({"x": float(2**60)}) == '{"x": 1152921504606846976}'
    assert to_jsonb_text({"x": 0.1}) == '{"x": 0.1}'

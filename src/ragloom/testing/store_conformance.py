"""The store conformance suite: one contract, proven on every store by the same tests.

Every store ragloom ships runs it, and a store you write can too. Subclass
:class:`StoreConformance` in a test module (the subclass's name starts with
``Test``) and give it a ``make_store`` fixture returning a factory: each call
``make_store(metric="cosine")`` returns a new, empty store (its own collection)::

    import pytest
    from ragloom.testing.store_conformance import StoreConformance

    class TestMyStore(StoreConformance):
        @pytest.fixture
        def make_store(self, tmp_path):
            return lambda metric="cosine": MyStore(tmp_path / "kb.db", metric=metric)

What it holds a store to (see docs/stores.md): exact top-k equal to brute force and
the score contract (in [0, 1], higher is better) for every metric; upsert
idempotence; atomic replacement of a document's chunks; delete by id (and by filter,
for stores with ``delete_where``); every filter operator and nesting equal to the
reference :func:`ragloom.filters.evaluate` (hypothesis property tests over missing
keys, None, lists, unicode, NaN/inf, large integers, numpy scalars) in vector and
keyword search; keyword BM25 equal to :class:`ragloom.stores.bm25.BM25Index` (or,
for stores with a BM25 of their own, ``keyword_reference = False``: the words must
match and the scores obey the contract); hybrid search through
:func:`ragloom.retrieval.search.search`; embedder binding; document bookkeeping
(:class:`~ragloom.protocols.DocumentIndex`); concurrent writers.

Class attributes tune it for a backend: ``metrics``, ``filter_examples`` (hypothesis
examples per property test; keep it modest for a remote store) and
``keyword_reference``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragloom.errors import (
    CollectionDroppedError,
    DimensionMismatchError,
    EmbedderMismatchError,
    QueryError,
    UnsupportedEmbeddingError,
)
from ragloom.filters import (
    OPERATORS,
    MetadataFilter,
    MetadataFilters,
    Operator,
    evaluate,
    parse_filters,
)
from ragloom.lexical.tokenize import tokenize
from ragloom.protocols import (
    CollectionHandle,
    DocumentIndex,
    EmbeddingReadable,
    KeywordSearchable,
    VectorStore,
)
from ragloom.retrieval.options import SearchOptions
from ragloom.retrieval.search import search
from ragloom.stores.bm25 import BM25Index
from ragloom.testing.fakes import HashingEmbedder
from ragloom.testing.threads import run_in_threads
from ragloom.types import SparseVector, TextChunk, TextDocument, Vector, VectorEntry

StoreFactory = Callable[..., Any]

# ------------------------------------------------------------------------ building data


def make_chunk(chunk_id: str, text: str = "text", metadata: dict[str, Any] | None = None,
               document_id: str = "doc") -> TextChunk:
    return TextChunk(id=chunk_id, document_id=document_id, index=0, start=0, end=len(text),
                     text=text, metadata=metadata or {})


def entry(chunk: TextChunk, values: Any) -> VectorEntry:
    return VectorEntry(chunk=chunk, embedding=Vector(np.asarray(values, dtype=np.float32)))


def document_entries(
    source: str, texts: list[str], rng: np.random.Generator, dimension: int = 8,
    metadata: dict[str, Any] | None = None,
) -> tuple[TextDocument, list[VectorEntry]]:
    """A document and its embedded chunks (random vectors), built as ingestion does."""
    document = TextDocument.create(" ".join(texts), source=source, metadata=metadata)
    entries = []
    position = 0
    for index, text in enumerate(texts):
        chunk = TextChunk.create(document, text, index=index, start=position,
                                 end=position + len(text))
        position += len(text) + 1
        entries.append(entry(chunk, rng.standard_normal(dimension)))
    return document, entries


def versioned_document(source: str, words: list[str], seed: int, dimension: int = 8
                       ) -> tuple[TextDocument, list[VectorEntry]]:
    """A document whose id and content hash come from its words and ``seed``: the same
    arguments give the same document (an unchanged re-ingest), others a new version."""
    document = TextDocument(id=f"id-{source}-{len(words)}", source=source,
                            text=" ".join(words), metadata={"content_hash": f"h{seed}"})
    rng = np.random.default_rng(seed)
    entries = [entry(make_chunk(f"{document.id}#{i}", word, {"source": source},
                                document_id=document.id), rng.standard_normal(dimension))
               for i, word in enumerate(words)]
    return document, entries


def brute_force(matrix: np.ndarray[Any, Any], ids: list[str], query: np.ndarray[Any, Any],
                metric: str, k: int) -> list[tuple[str, float]]:
    """Reference top-k: (id, raw measure), best first, ties by id."""
    if metric == "cosine":
        normed = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
        raw = normed @ (query / np.linalg.norm(query))
        key = raw
    elif metric == "dot":
        raw = matrix @ query
        key = raw
    else:
        raw = np.linalg.norm(matrix - query, axis=1)
        key = -raw
    order = sorted(range(len(ids)), key=lambda i: (-key[i], ids[i]))[:k]
    return [(ids[i], float(raw[i])) for i in order]


def canonical(value: Any) -> Any:
    """Metadata as JSON can hold it: numpy scalars as Python values, NaN/inf as None."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: canonical(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(item) for item in value]
    return value


# ------------------------------------------------------------------------- strategies

KEYS = ["a", "b", "c", "n"]
NESTED_KEYS = ["a", "b"]
# A small pool makes equal values (and near-misses across kinds) common.
POOL: list[Any] = [0, 1, -1, 1.0, 1.5, 2, "", "a", "b", "1", "ä", "B", "日本", "é", True, False,
                   2**53, 2**53 + 1, float(2**53), 2**63 - 1, -(2**63), 1e300, -0.0]
_SCALARS = st.one_of(
    st.sampled_from(POOL),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)
_NUMPY = st.one_of(st.integers(-1000, 1000).map(np.int64),
                   st.floats(-1e6, 1e6).map(np.float64), st.booleans().map(np.bool_))
_STORED = st.one_of(_SCALARS, _NUMPY, st.sampled_from([math.nan, math.inf, -math.inf]))
_VALUES = st.one_of(_STORED, st.none(), st.lists(_SCALARS, max_size=2))
_NESTED = st.dictionaries(st.sampled_from(NESTED_KEYS), _VALUES, max_size=2)
RECORDS = st.dictionaries(st.sampled_from(KEYS), st.one_of(_VALUES, _NESTED), max_size=4)
_FILTER_KEYS = st.sampled_from(KEYS + [f"n.{k}" for k in NESTED_KEYS] + ["a.b", "missing"])


@st.composite
def _leaves(draw: st.DrawFn) -> MetadataFilter:
    key = draw(_FILTER_KEYS)
    op: Operator = draw(st.sampled_from(OPERATORS))
    if op in ("in", "nin"):
        return MetadataFilter(key, op, tuple(draw(st.lists(_SCALARS, max_size=3))))
    if op in ("==", "!="):
        return MetadataFilter(key, op, draw(_SCALARS))
    return MetadataFilter(key, op, draw(_SCALARS.filter(lambda v: not isinstance(v, bool))))


TREES = st.recursive(
    _leaves(),
    lambda children: st.builds(MetadataFilters, st.lists(children, max_size=3).map(tuple),
                               st.sampled_from(["and", "or"])),
    max_leaves=6,
).map(lambda node: node if isinstance(node, MetadataFilters) else MetadataFilters((node,)))

_WORDS = ["alpha", "beta", "gamma", "delta", "studies", "studying", "café", "cafe", "the",
          "Zebra", "x1"]

# ------------------------------------------------------------------------------ suite


class StoreConformance:
    """Inherit and provide ``make_store`` (see the module docstring)."""

    metrics: ClassVar[tuple[str, ...]] = ("cosine", "euclidean", "dot")
    filter_examples: ClassVar[int] = 100
    keyword_reference: ClassVar[bool] = True

    # ---------------------------------------------------------------- helpers
    @staticmethod
    def _random_store(make_store: StoreFactory, metric: str, n: int = 60, dim: int = 12
                      ) -> tuple[Any, np.ndarray[Any, Any], list[str], np.random.Generator]:
        rng = np.random.default_rng(7)
        matrix = rng.standard_normal((n, dim)).astype(np.float32)
        ids = [f"c{i:04d}" for i in range(n)]
        store = make_store(metric)
        store.add([entry(make_chunk(cid, f"chunk {i}"), matrix[i]) for i, cid in enumerate(ids)])
        return store, matrix, ids, rng

    @staticmethod
    def _all(store: Any, dimension: int) -> list[TextChunk]:
        found = store.query(Vector(np.ones(dimension, dtype=np.float32)),
                            top_k=max(store.count(), 1))
        return [match.chunk for match in found]

    # ---------------------------------------------------------------- protocols
    def test_implements_the_protocols(self, make_store: StoreFactory) -> None:
        store = make_store("cosine")
        assert isinstance(store, VectorStore)
        assert isinstance(store, DocumentIndex)

    # ---------------------------------------------------------------- vectors
    @pytest.mark.parametrize("metric", ["cosine", "euclidean", "dot"])
    def test_top_k_equals_brute_force(self, make_store: StoreFactory, metric: str) -> None:
        if metric not in self.metrics:
            pytest.skip(f"{metric} is not offered by this store")
        store, matrix, ids, rng = self._random_store(make_store, metric)
        for _ in range(3):
            query = rng.standard_normal(matrix.shape[1]).astype(np.float32)
            expected = brute_force(matrix, ids, query, metric, 10)
            got = store.query(Vector(query), top_k=10)
            assert [m.chunk.id for m in got] == [cid for cid, _ in expected]
            np.testing.assert_allclose([m.raw_score for m in got], [raw for _, raw in expected],
                                       rtol=1e-4, atol=1e-5)

    @pytest.mark.parametrize("metric", ["cosine", "euclidean", "dot"])
    def test_vector_scores_obey_the_contract(self, make_store: StoreFactory, metric: str) -> None:
        if metric not in self.metrics:
            pytest.skip(f"{metric} is not offered by this store")
        store, matrix, _, rng = self._random_store(make_store, metric)
        query = rng.standard_normal(matrix.shape[1]).astype(np.float32) * 3
        got = store.query(Vector(query), top_k=len(matrix))
        scores = [m.score for m in got]
        assert len(got) == len(matrix)
        assert all(0.0 <= s <= 1.0 for s in scores)
        assert scores == sorted(scores, reverse=True)

    def test_upsert_is_idempotent_and_replaces(self, make_store: StoreFactory) -> None:
        store = make_store("cosine")
        entries = [entry(make_chunk("a", "alpha"), [1, 0, 0]),
                   entry(make_chunk("b", "beta"), [0, 1, 0])]
        store.add(entries)
        store.add(entries)
        assert store.count() == 2
        store.add([entry(make_chunk("a", "alpha two", {"v": 2}), [0, 0, 1])])
        assert store.count() == 2
        best = store.query(Vector(np.array([0, 0, 1], dtype=np.float32)), top_k=1)[0]
        assert (best.chunk.id, best.chunk.text, best.chunk.metadata) == ("a", "alpha two",
                                                                         {"v": 2})
        assert best.score == pytest.approx(1.0)
        if isinstance(store, KeywordSearchable):
            assert [m.chunk.id for m in store.keyword_query("alpha")] == ["a"]

    def test_delete_by_id(self, make_store: StoreFactory) -> None:
        store, matrix, ids, _ = self._random_store(make_store, "cosine", n=20)
        assert store.delete([*ids[:5], "missing"]) == 5
        assert store.delete(ids[:5]) == 0
        assert store.count() == 15
        got = store.query(Vector(matrix[0]), top_k=20)
        assert {m.chunk.id for m in got} == set(ids[5:])

    def test_delete_by_filter(self, make_store: StoreFactory) -> None:
        store = make_store("cosine")
        if not hasattr(store, "delete_where"):
            pytest.skip(f"{type(store).__name__} has no delete_where")
        store.add([entry(make_chunk(f"c{i}", "w", {"year": 2000 + i}), [1.0, float(i)])
                   for i in range(10)])
        assert store.delete_where(parse_filters({"key": "year", "op": ">=", "value": 2005})) == 5
        assert store.delete_where(parse_filters({"key": "year", "op": ">", "value": 3000})) == 0
        assert store.count() == 5
        assert {c.id for c in self._all(store, 2)} == {f"c{i}" for i in range(5)}
        rng = np.random.default_rng(9)
        doc_a, entries_a = document_entries("a.txt", ["one", "two"], rng, dimension=2,
                                            metadata={"lang": "en"})
        doc_b, entries_b = document_entries("b.txt", ["three"], rng, dimension=2,
                                            metadata={"lang": "de"})
        store.replace_document(doc_a, entries_a)
        store.replace_document(doc_b, entries_b)
        # A document left without chunks loses its record (ingesting it again is not
        # skipped); a document with chunks left keeps it, with the new count.
        assert store.delete_where(parse_filters({"lang": "en"})) == 2
        assert [d.source for d in store.list_documents()] == ["b.txt"]
        assert store.delete_where(parse_filters({"key": "index", "op": "==", "value": 0})) == 1
        assert store.list_documents() == []
        assert store.delete_where(None) == 5  # None empties the knowledge base
        assert store.count() == 0

    def test_rejects_wrong_embeddings(self, make_store: StoreFactory) -> None:
        store = make_store("cosine")
        store.add([entry(make_chunk("a"), [1, 0, 0])])
        with pytest.raises(UnsupportedEmbeddingError):
            store.add([VectorEntry(chunk=make_chunk("s"), embedding=SparseVector((1,), (1.0,)))])
        with pytest.raises(UnsupportedEmbeddingError):
            store.query(SparseVector((1,), (1.0,)))
        with pytest.raises(DimensionMismatchError):
            store.add([entry(make_chunk("b"), [1, 0])])
        with pytest.raises(DimensionMismatchError):
            store.query(Vector(np.ones(5, dtype=np.float32)))
        assert store.count() == 1

    def test_empty_store_answers_nothing(self, make_store: StoreFactory) -> None:
        store = make_store("cosine")
        assert store.count() == 0
        assert store.query(Vector(np.ones(3, dtype=np.float32))) == []
        assert store.delete(["x"]) == 0
        assert store.list_documents() == []
        assert store.find_document("x") is None
        assert store.collection_info() is None
        if isinstance(store, KeywordSearchable):
            assert store.keyword_query("anything") == []

    # ---------------------------------------------------------------- filters
    def test_filters_narrow_the_query(self, make_store: StoreFactory) -> None:
        store = make_store("cosine")
        store.add([entry(make_chunk(f"c{i}", metadata={"year": 2000 + i,
                                                       "lang": "en" if i % 2 else "de"}),
                         [1.0, float(i)]) for i in range(10)])
        filters = parse_filters({"and": [{"key": "year", "op": ">=", "value": 2005},
                                         {"key": "lang", "op": "==", "value": "en"}]})
        got = store.query(Vector(np.array([1.0, 0.0], dtype=np.float32)), top_k=10,
                          filters=filters)
        assert sorted(m.chunk.id for m in got) == ["c5", "c7", "c9"]

    def test_documented_filter_corner_cases(self, make_store: StoreFactory) -> None:
        metadata: list[dict[str, Any]] = [
            {"x": True}, {"x": 1}, {"x": "1"}, {"x": None}, {"x": [1]}, {}, {"x": {"y": 1}},
            {"x": 1.0}]
        store = make_store("cosine")
        store.add([entry(make_chunk(f"c{i}", "w", m), [1.0, float(i + 1)])
                   for i, m in enumerate(metadata)])

        def ids(tree: MetadataFilters) -> set[str]:
            return {m.chunk.id for m in store.query(Vector(np.ones(2, dtype=np.float32)),
                                                    top_k=20, filters=tree)}

        assert ids(MetadataFilters((MetadataFilter("x", "==", 1),))) == {"c1", "c7"}
        assert ids(MetadataFilters((MetadataFilter("x", "==", True),))) == {"c0"}
        assert ids(MetadataFilters((MetadataFilter("x", "!=", 1),))) == {"c0", "c2"}
        assert ids(MetadataFilters((MetadataFilter("x", "nin", ()),))) == {"c0", "c1", "c2",
                                                                             "c7"}
        assert ids(MetadataFilters((MetadataFilter("x", "in", ()),))) == set()
        assert ids(MetadataFilters((), "and")) == {f"c{i}" for i in range(8)}
        assert ids(MetadataFilters((), "or")) == set()
        assert ids(MetadataFilters((MetadataFilter("x.y", ">", 0),))) == {"c6"}

    def test_filters_equal_the_reference(self, make_store: StoreFactory) -> None:
        """Vector and keyword search pick exactly the chunks ``evaluate`` picks, for the
        metadata the store holds (which must equal what was given, as JSON)."""
        store = make_store("cosine")
        counter = iter(range(10**9))
        keyword = isinstance(store, KeywordSearchable)

        @settings(max_examples=self.filter_examples, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(metadata=st.lists(RECORDS, min_size=1, max_size=10),
               trees=st.lists(TREES, min_size=1, max_size=4))
        def check(metadata: list[dict[str, Any]], trees: list[MetadataFilters]) -> None:
            run = next(counter)
            entries = [entry(make_chunk(f"r{run}-{i:02d}", "word", meta), [1.0, float(i + 1)])
                       for i, meta in enumerate(metadata)]
            store.add(entries)
            try:
                held = {c.id: c.metadata for c in self._all(store, 2)}
                assert set(held) == {e.id for e in entries}
                for e in entries:
                    assert canonical(held[e.id]) == canonical(e.chunk.metadata), (
                        held[e.id], e.chunk.metadata)
                query = Vector(np.array([1.0, 1.0], dtype=np.float32))
                for tree in trees:
                    expected = {cid for cid, meta in held.items() if evaluate(tree, meta)}
                    got = store.query(query, top_k=len(entries), filters=tree)
                    assert {m.chunk.id for m in got} == expected, tree
                    if keyword:
                        found = store.keyword_query("word", top_k=len(entries), filters=tree)
                        assert {m.chunk.id for m in found} == expected, tree
            finally:
                store.delete([e.id for e in entries])

        check()

    # ---------------------------------------------------------------- keyword and hybrid
    def _text_store(self, make_store: StoreFactory, n: int = 40
                    ) -> tuple[Any, list[tuple[str, str]]]:
        rng = np.random.default_rng(3)
        texts = [(f"t{i:03d}", " ".join(rng.choice(_WORDS, size=int(rng.integers(1, 9)))))
                 for i in range(n)]
        texts.append(("unique", "a rare platypus appears"))
        store = make_store("cosine")
        store.add([entry(make_chunk(cid, text, {"i": i}), rng.standard_normal(8))
                   for i, (cid, text) in enumerate(texts)])
        return store, texts

    def test_keyword_search(self, make_store: StoreFactory) -> None:
        store, texts = self._text_store(make_store)
        if not isinstance(store, KeywordSearchable):
            pytest.skip(f"{type(store).__name__} has no keyword search")
        reference = BM25Index()
        reference.add(texts)
        for query in ["alpha", "studies cafe", "Café THE zebra", "gamma gamma delta", "x1",
                      "platypus"]:
            got = store.keyword_query(query, top_k=15)
            scores = [m.score for m in got]
            assert all(0.0 <= s <= 1.0 for s in scores)
            assert scores == sorted(scores, reverse=True)
            terms = set(tokenize(query))
            assert all(terms & set(tokenize(m.chunk.text)) for m in got), query
            if self.keyword_reference:
                expected = reference.search(query, 15)
                assert [m.chunk.id for m in got] == [cid for cid, _ in expected], query
                np.testing.assert_allclose([m.raw_score for m in got],
                                           [raw for _, raw in expected], rtol=1e-9)
        assert [m.chunk.id for m in store.keyword_query("platypus")][:1] == ["unique"]
        assert store.keyword_query("!!! ???") == []
        only = parse_filters({"key": "i", "op": "<", "value": 10})
        assert all(m.chunk.metadata["i"] < 10
                   for m in store.keyword_query("alpha beta", top_k=50, filters=only))

    @pytest.mark.parametrize("mode,ranker", [("vector", "rrf"), ("keyword", "rrf"),
                                             ("hybrid", "rrf"), ("hybrid", "weighted")])
    def test_search_modes_obey_the_score_contract(
        self, make_store: StoreFactory, mode: str, ranker: str
    ) -> None:
        embedder = HashingEmbedder(16)
        rng = np.random.default_rng(5)
        texts = [" ".join(rng.choice(_WORDS, size=5)) for _ in range(30)]
        store = make_store("cosine")
        vectors = embedder.embed_documents(texts)
        store.add([VectorEntry(chunk=make_chunk(f"h{i:02d}", text, {"i": i}), embedding=vector)
                   for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))])
        if mode != "vector" and not isinstance(store, KeywordSearchable):
            pytest.skip(f"{type(store).__name__} has no keyword search")
        options = SearchOptions(mode=mode, ranker=ranker, top_k=10,  # type: ignore[arg-type]
                                filters=parse_filters({"key": "i", "op": ">=", "value": 5}))
        result = search(store, embedder, "alpha studies gamma", options)
        assert not result.degraded
        assert result.matches
        scores = [m.score for m in result.matches]
        assert all(0.0 <= s <= 1.0 for s in scores)
        if mode != "hybrid":
            assert scores == sorted(scores, reverse=True)
        assert all(m.chunk.metadata["i"] >= 5 for m in result.matches)
        # Hybrid matches are ranked by fusion; their reported score is each chunk's own
        # absolute score (ragloom.retrieval.scores.hybrid_score), which need not fall
        # with rank. Rescaled per query, the scores fall with rank as well.
        rescaled = search(store, embedder, "alpha studies gamma",
                          options.with_(score_normalization="per_query"))
        assert [m.chunk.id for m in rescaled.matches] == [m.chunk.id for m in result.matches]
        per_query = [m.score for m in rescaled.matches]
        assert per_query == sorted(per_query, reverse=True)

    @pytest.mark.parametrize("mode", ["vector", "keyword", "hybrid"])
    def test_matches_carry_their_embeddings_on_request(self, make_store: StoreFactory,
                                                      mode: str) -> None:
        embedder = HashingEmbedder(16)
        rng = np.random.default_rng(9)
        texts = [" ".join(rng.choice(_WORDS, size=5)) for _ in range(12)]
        store = make_store("cosine")
        # Scaled so that a store handing back normalised vectors would be caught.
        added = {f"e{i:02d}": np.asarray(vector.values, dtype=np.float32) * (i + 1.5)
                 for i, vector in enumerate(embedder.embed_documents(texts))
                 if isinstance(vector, Vector)}
        store.add([entry(make_chunk(cid, text), added[cid])
                   for cid, text in zip(added, texts, strict=True)])
        if mode != "vector" and not isinstance(store, KeywordSearchable):
            pytest.skip(f"{type(store).__name__} has no keyword search")
        readable: object = store
        assert len(added) == len(texts)
        if not isinstance(readable, EmbeddingReadable):
            pytest.skip(f"{type(store).__name__} does not return stored embeddings")
        try:
            readable.get_embeddings([])
        except QueryError:  # a wrapper over a store that cannot
            pytest.skip(f"{type(store).__name__} wraps a store without stored embeddings")
        options = SearchOptions(mode=mode, top_k=5)  # type: ignore[arg-type]
        plain = search(store, embedder, "alpha beta gamma", options)
        assert plain.matches and all(m.embedding is None for m in plain.matches)
        result = search(store, embedder, "alpha beta gamma", options.with_(
            include_embeddings=True))
        assert [m.chunk.id for m in result.matches] == [m.chunk.id for m in plain.matches]
        for match in result.matches:
            assert isinstance(match.embedding, Vector)
            np.testing.assert_allclose(match.embedding.values, added[match.chunk.id],
                                       rtol=1e-5, atol=1e-6)
            assert match.to_dict()["embedding"]["values"] == pytest.approx(
                added[match.chunk.id].tolist(), rel=1e-5)
        assert store.get_embeddings(["missing"]) == {}

    def test_delete_of_unknown_ids_counts_nothing(self, make_store: StoreFactory) -> None:
        """Deleting an id the store does not hold says so: it counts 0, nothing fails."""
        store, _, ids, _ = self._random_store(make_store, "cosine", n=5)
        assert store.delete(["never-added"]) == 0
        assert store.delete_documents(["never-added"]) == 0
        assert store.delete([ids[0], "never-added"]) == 1
        assert store.count() == 4

    # ---------------------------------------------------------------- documents
    def test_embedder_binding(self, make_store: StoreFactory) -> None:
        store = make_store("cosine")
        assert store.collection_info() is None
        info = store.bind_embedder("fake:one", 8)
        assert (info.embedder, info.dimension) == ("fake:one", 8)
        assert store.bind_embedder("fake:one", 8) == info
        assert store.collection_info() == info
        with pytest.raises(EmbedderMismatchError, match="fake:one"):
            store.bind_embedder("fake:two", 8)
        with pytest.raises(EmbedderMismatchError, match="fake:one"):
            store.bind_embedder("fake:one", 16)

    def test_replace_document_replaces_only_that_source(self, make_store: StoreFactory) -> None:
        rng = np.random.default_rng(1)
        store = make_store("cosine")
        doc_a, entries_a = document_entries("a.txt", ["one", "two", "three"], rng)
        doc_b, entries_b = document_entries("b.txt", ["four", "five"], rng)
        store.replace_document(doc_a, entries_a, settings="s1")
        store.replace_document(doc_b, entries_b)
        assert store.count() == 5
        new_a, new_entries = document_entries("a.txt", ["one changed"], rng)
        store.replace_document(new_a, new_entries, settings="s2")
        assert store.count() == 3
        stored = store.find_document("a.txt")
        assert stored is not None
        assert (stored.id, stored.chunk_count, stored.settings) == (new_a.id, 1, "s2")
        assert stored.content_hash == new_a.metadata["content_hash"]
        assert [d.source for d in store.list_documents()] == ["a.txt", "b.txt"]
        remaining = {m.chunk.id for m in store.query(new_entries[0].embedding, top_k=10)}
        assert remaining == {e.id for e in entries_b} | {new_entries[0].id}

    def test_failed_replacement_keeps_the_old_document(self, make_store: StoreFactory) -> None:
        rng = np.random.default_rng(4)
        store = make_store("cosine")
        doc, entries = document_entries("a.txt", ["one", "two"], rng)
        store.replace_document(doc, entries)
        new_doc, new_entries = document_entries("a.txt", ["three", "four"], rng)
        broken = [new_entries[0], entry(new_entries[1].chunk, [1.0, 2.0])]
        with pytest.raises(DimensionMismatchError):
            store.replace_document(new_doc, broken)
        stored = store.find_document("a.txt")
        assert stored is not None and stored.id == doc.id and stored.chunk_count == 2
        assert {c.id for c in self._all(store, 8)} == {e.id for e in entries}

    def test_delete_documents(self, make_store: StoreFactory) -> None:
        rng = np.random.default_rng(2)
        store = make_store("cosine")
        doc_a, entries_a = document_entries("a.txt", ["one", "two"], rng)
        doc_b, entries_b = document_entries("b.txt", ["three"], rng)
        store.replace_document(doc_a, entries_a)
        store.replace_document(doc_b, entries_b)
        assert store.delete_documents([doc_a.id, "unknown"]) == 1
        assert store.count() == 1
        assert store.find_document("a.txt") is None
        assert [d.id for d in store.list_documents()] == [doc_b.id]
        assert store.delete_documents([]) == 0
        if isinstance(store, KeywordSearchable):
            assert store.keyword_query("one two") == []

    def test_a_dropped_collection_is_not_created_again_by_a_write(
            self, make_store: StoreFactory) -> None:
        """:class:`CollectionHandle`: drop, stats, close; a write after drop raises
        CollectionDroppedError (never recreates the collection); close, then reopen."""
        store = make_store("cosine")
        is_handle = isinstance(store, CollectionHandle)
        if not is_handle:
            pytest.skip("this store is not a CollectionHandle")
        rng = np.random.default_rng(3)
        doc, entries = document_entries("a.txt", ["one", "two"], rng)
        store.bind_embedder("fake:test", 8)
        store.replace_document(doc, entries)
        assert (store.stats().document_count, store.stats().chunk_count) == (1, 2)
        store.close()
        assert store.count() == 2  # a closed handle reopens on use
        assert store.drop() is True
        assert store.count() == 0
        with pytest.raises(CollectionDroppedError):
            store.replace_document(doc, entries)
        with pytest.raises(CollectionDroppedError):
            store.add(entries)
        assert store.count() == 0
        assert store.drop() is False
        store.close()

    def test_concurrent_writers(self, make_store: StoreFactory) -> None:
        store = make_store("cosine")

        def writer(worker: int) -> None:
            rng = np.random.default_rng(worker)
            for n in range(4):
                doc, entries = document_entries(f"w{worker}-{n}.txt",
                                                [f"w{worker} n{n} a", f"w{worker} b"], rng)
                store.replace_document(doc, entries)
                if n == 3:  # replace one of them again while others write
                    doc, entries = document_entries(f"w{worker}-0.txt", ["again"], rng)
                    store.replace_document(doc, entries)

        run_in_threads(writer, 4)
        documents = store.list_documents()
        assert len(documents) == 16
        assert store.count() == sum(d.chunk_count for d in documents) == 4 * (3 * 2 + 1)

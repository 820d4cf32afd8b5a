"""The Haystack adapter beyond the standard suite: the retriever component in a
pipeline that survives dumps()/loads(), filter pushdown, refusals, kept embeddings."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("haystack")

from haystack import Document, Pipeline
from haystack.errors import FilterError

from ragloom.errors import ConfigurationError
from ragloom.filters import MetadataFilters
from ragloom.integrations.haystack import RagloomDocumentStore, RagloomRetriever

DOCS = [Document(content="the cat sat on the mat", meta={"kind": "pet", "year": 2020}),
        Document(content="stock markets fell today", meta={"kind": "news", "year": 2024},
                 embedding=[0.5, 0.25]),
        Document(content="the dog chased the cat", meta={"kind": "pet", "year": 2024})]


@pytest.fixture
def store(kb_location: tuple[str, str]) -> Any:
    built = RagloomDocumentStore(path=kb_location[0], collection=kb_location[1],
                                 embedder="fake:hashing-64")
    built.write_documents(DOCS)
    yield built
    built.close()


def test_pipeline_survives_dumps_and_loads(store: RagloomDocumentStore) -> None:
    pipeline = Pipeline()
    pipeline.add_component("retriever", RagloomRetriever(
        document_store=store, top_k=2, filters={"field": "meta.kind", "operator": "==",
                                                "value": "pet"}))
    loaded = Pipeline.loads(pipeline.dumps())
    retriever = loaded.get_component("retriever")
    assert isinstance(retriever, RagloomRetriever) and retriever.top_k == 2
    assert retriever.document_store.path == store.path
    for runnable in (pipeline, loaded):
        found = runnable.run({"retriever": {"query": "cat mat"}})["retriever"]["documents"]
        assert [d.content for d in found] == [DOCS[0].content, DOCS[2].content]
        assert found[0].score is not None and 1 >= found[0].score >= found[1].score >= 0
    one = loaded.run({"retriever": {"query": "markets", "top_k": 1, "filters": {
        "field": "meta.year", "operator": ">=", "value": 2024}}})["retriever"]["documents"]
    assert [d.content for d in one] == [DOCS[1].content]


def test_exact_filters_run_in_the_store(store: RagloomDocumentStore,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    listing = store.knowledge_base.store.chunks
    monkeypatch.setattr(store.knowledge_base.store, "chunks",
                        lambda filters=None: seen.append(filters) or listing(filters))
    found = store.filter_documents({"operator": "AND", "conditions": [
        {"field": "meta.kind", "operator": "==", "value": "pet"},
        {"field": "meta.year", "operator": "!=", "value": 2020}]})
    assert [d.content for d in found] == [DOCS[2].content]
    # The translatable part went to the store; "!=" was checked afterwards.
    assert isinstance(seen[0], MetadataFilters)
    assert seen[0].to_dict() == {"and": [{"key": "kind", "op": "==", "value": "pet"}]}


def test_search_refuses_what_ragloom_cannot_express(store: RagloomDocumentStore) -> None:
    not_pet = {"field": "meta.kind", "operator": "!=", "value": "pet"}
    assert [d.content for d in store.filter_documents(not_pet)] == [DOCS[1].content]
    with pytest.raises(FilterError, match="NOT, !="):
        store.search("cat", filters=not_pet)
    with pytest.raises(FilterError):
        RagloomRetriever(document_store=store, filters={"operator": "AND"})


def test_documents_read_back_equal(store: RagloomDocumentStore) -> None:
    assert store.filter_documents() == DOCS  # ids, content, meta and embedding kept
    assert store.count_documents() == 3
    store.delete_documents([DOCS[0].id, "missing"])
    assert store.count_documents() == 2


def test_serialisation_and_constructor_errors(store: RagloomDocumentStore) -> None:
    again = RagloomDocumentStore.from_dict(store.to_dict())
    assert again.count_documents() == 3 and again.knowledge_base.embedder.name == "fake:hashing-64"
    again.close()
    wrapped = RagloomDocumentStore(knowledge_base=store.knowledge_base)
    with pytest.raises(ConfigurationError, match="cannot be serialised"):
        wrapped.to_dict()
    with pytest.raises(ConfigurationError, match="RagloomDocumentStore"):
        RagloomRetriever(document_store=object())  # type: ignore[arg-type]

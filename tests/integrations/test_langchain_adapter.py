"""The LangChain adapter beyond the standard suites: constructors, ids, embeddings,
filters, scores, MMR and errors (ragloom's hashing embedder, a SQLite file)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")

from langchain_core.embeddings import DeterministicFakeEmbedding

from ragloom.errors import (
    ConfigurationError,
    EmbedderMismatchError,
    FilterError,
    KnowledgeBaseNotFoundError,
    QueryError,
)
from ragloom.integrations._base import FunctionEmbedder, open_knowledge_base
from ragloom.integrations.langchain import (
    RagloomEmbeddings,
    RagloomRetriever,
    RagloomVectorStore,
)
from ragloom.testing.fakes import HashingEmbedder
from ragloom.types import TextDocument

TEXTS = ["the cat sat on the mat", "dogs chase the cat", "stock markets fell today",
         "the cat and the dog sleep"]
METAS = [{"kind": "pet", "year": 2020}, {"kind": "pet", "year": 2022},
         {"kind": "news", "year": 2024}, {"kind": "pet", "year": 2024}]


@pytest.fixture
def store(tmp_path: Path) -> RagloomVectorStore:
    built = RagloomVectorStore(path=tmp_path / "kb.db", collection="notes",
                               embedding=RagloomEmbeddings(embedder=HashingEmbedder()))
    built.add_texts(TEXTS, METAS, ids=["a", "b", "c", "d"])
    return built


def test_ragloom_embeddings_give_the_inner_embedder(store: RagloomVectorStore) -> None:
    assert store.knowledge_base.embedder.name == "fake:hashing-64"
    embeddings = RagloomEmbeddings(model="fake:hashing-8")
    assert len(embeddings.embed_query("x")) == 8
    assert embeddings.embed_documents(["a b", "c"])[0] == pytest.approx(
        [float(v) for v in HashingEmbedder(8).embed_query("a b").values])  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError):
        RagloomEmbeddings()


def test_a_langchain_embedding_is_wrapped_and_recorded(tmp_path: Path) -> None:
    store = RagloomVectorStore(path=tmp_path / "kb.db", collection="x",
                               embedding=DeterministicFakeEmbedding(size=5))
    assert isinstance(store.knowledge_base.embedder, FunctionEmbedder)
    store.add_texts(["one"], ids=["1"])
    info = store.knowledge_base.store.collection_info()
    assert (info.embedder, info.dimension) == ("langchain:DeterministicFakeEmbedding", 5)
    other = RagloomVectorStore(path=tmp_path / "kb.db", collection="x",
                               embedding=RagloomEmbeddings(model="fake:hashing-5"))
    with pytest.raises(EmbedderMismatchError):
        other.add_texts(["two"])


def test_ids_metadata_and_filters(store: RagloomVectorStore) -> None:
    assert [d.id for d in store.get_by_ids(["d", "zz", "a"])] == ["d", "a"]
    assert store.get_by_ids(["a"])[0].metadata == METAS[0]  # stored as given
    pets = store.similarity_search("cat", k=4, filter={"kind": "pet", "year": {"$gte": 2022}})
    assert sorted(d.id for d in pets) == ["b", "d"]
    scored = store.similarity_search_with_score("cat mat", k=2)
    assert scored[0][0].id == "a" and 1 >= scored[0][1] > scored[1][1] >= 0
    relevance = store.similarity_search_with_relevance_scores("cat mat", k=1)
    assert relevance[0][1] == pytest.approx(scored[0][1])
    with pytest.raises(FilterError, match=r"\$exists"):
        store.similarity_search("cat", filter={"kind": {"$exists": True}})


def test_generated_ids_are_content_addressed(store: RagloomVectorStore) -> None:
    first = store.add_texts(["a new text"], [{"n": 1}])
    assert store.add_texts(["a new text"], [{"n": 1}]) == first
    assert store.add_texts(["a new text"], [{"n": 2}]) != first
    assert store.knowledge_base.store.count() == 6


def test_mmr_prefers_diverse_passages(store: RagloomVectorStore) -> None:
    store.add_texts(["the cat sat on the mat"], [{"kind": "pet"}], ids=["a2"])
    plain = store.similarity_search("the cat sat on the mat", k=2)
    assert {d.id for d in plain} == {"a", "a2"}  # the two copies
    diverse = store.max_marginal_relevance_search("the cat sat on the mat", k=2, fetch_k=5,
                                                  lambda_mult=0.3)
    assert diverse[0].id in {"a", "a2"} and diverse[1].id not in {"a", "a2"}


def test_delete_everything_and_async_paths(store: RagloomVectorStore) -> None:
    async def run() -> list[str]:
        await store.adelete(["a"])
        return [d.id for d in await store.asimilarity_search("cat mat", k=4)]

    assert "a" not in asyncio.run(run())
    store.delete()
    assert store.similarity_search("cat", k=1) == []


def test_from_texts_and_knowledge_base_constructor(tmp_path: Path) -> None:
    built = RagloomVectorStore.from_texts(TEXTS, RagloomEmbeddings(model="fake:hashing-64"),
                                          METAS, path=str(tmp_path / "f.db"), collection="f")
    wrapped = RagloomVectorStore(knowledge_base=built.knowledge_base)
    assert wrapped.similarity_search("stock markets", k=1)[0].page_content == TEXTS[2]
    with pytest.raises(ConfigurationError, match="knowledge_base or path"):
        RagloomVectorStore(knowledge_base=built.knowledge_base, path=tmp_path)
    with pytest.raises(ConfigurationError, match="needs a knowledge base"):
        RagloomVectorStore()


def test_retriever_k_mode_filters_and_scores(tmp_path: Path) -> None:
    knowledge_base = open_knowledge_base(tmp_path / "r.db", "docs", HashingEmbedder())
    knowledge_base.ingest([TextDocument.create(t, source=f"s{i}", metadata=m)
                           for i, (t, m) in enumerate(zip(TEXTS, METAS, strict=True))])
    retriever = RagloomRetriever(path=str(tmp_path / "r.db"), collection="docs", k=3,
                                 filters={"kind": "pet"})
    found = retriever.invoke("cat")
    assert len(found) == 3 and all(d.metadata["kind"] == "pet" for d in found)
    assert all(0 <= d.metadata["score"] <= 1 and "chunk_id" in d.metadata for d in found)
    assert [d.metadata["score"] for d in found] == sorted(
        (d.metadata["score"] for d in found), reverse=True)
    assert len(retriever.invoke("cat", k=1)) == 1
    news = retriever.invoke("cat", filters={"key": "kind", "op": "==", "value": "news"})
    assert [d.page_content for d in news] == [TEXTS[2]]
    keyword = retriever.invoke("markets", mode="keyword", filters={"kind": "news"})
    assert keyword[0].page_content == TEXTS[2]
    same = RagloomRetriever(knowledge_base=knowledge_base, k=1).invoke("stock markets fell")
    assert same[0].page_content == TEXTS[2]
    with pytest.raises(QueryError, match="search mode"):
        RagloomRetriever(knowledge_base=knowledge_base, mode="fuzzy")
    with pytest.raises(FilterError):
        RagloomRetriever(knowledge_base=knowledge_base, filters={"key": "k", "op": "~"})


def test_retriever_on_a_missing_knowledge_base_says_so(tmp_path: Path) -> None:
    missing = RagloomRetriever(path=str(tmp_path / "none" / "kb.db"), collection="docs")
    with pytest.raises(KnowledgeBaseNotFoundError, match="ragloom ingest"):
        missing.invoke("cat")
    assert not (tmp_path / "none").exists()  # nothing created by a read
    open_knowledge_base(tmp_path / "kb.db", "docs", HashingEmbedder()).ingest(
        [TextDocument.create("a cat", source="a")])
    with pytest.raises(KnowledgeBaseNotFoundError, match="'dogs'"):
        RagloomRetriever(path=str(tmp_path / "kb.db"), collection="dogs").invoke("cat")


def test_search_with_another_embedder_is_refused(store: RagloomVectorStore) -> None:
    path = store.knowledge_base.store.path
    other = RagloomVectorStore(path=path, collection="notes",
                               embedding=RagloomEmbeddings(model="fake:hashing-32"))
    with pytest.raises(EmbedderMismatchError, match="fake:hashing-64"):
        other.similarity_search("cat")
    reopened = RagloomVectorStore(path=path, collection="notes")  # the recorded embedder
    assert reopened.similarity_search("cat mat", k=1)[0].id == "a"

"""``vector_stores/{id}/search`` below HTTP: passes over files, one query embedding per
request, and the encoded page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.server.v1.search import (
    CHUNKS_PER_FILE,
    QueryOnce,
    SearchRequest,
    hit_json,
    page_json,
    run_search,
)
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.types import Embedding, TextChunk, TextDocument, VectorEntry


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(32)
        self.queries: list[str] = []

    def embed_query(self, text: str) -> Embedding:
        self.queries.append(text)
        return super().embed_query(text)


def add_file(store: SqliteVectorStore, embedder: HashingEmbedder, file_id: str,
             texts: list[str]) -> None:
    doc = TextDocument.create(" ".join(texts), source=file_id,
                              metadata={"file_id": file_id, "filename": f"{file_id}.txt",
                                        "attributes": {"n": len(texts)}})
    chunks = [TextChunk.create(doc, text, index=i, start=0, end=len(text))
              for i, text in enumerate(texts)]
    store.add([VectorEntry(chunk=c, embedding=e)
               for c, e in zip(chunks, embedder.embed_documents(texts), strict=True)])


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[VectorKnowledgeBase]:
    embedder = CountingEmbedder()
    store = SqliteVectorStore(tmp_path / "vs.sqlite", collection="vs:one")
    # One long file whose chunks all match best: the first pass finds only it.
    add_file(store, embedder, "file-long", [f"gene therapy trial part {i}" for i in range(12)])
    for n in range(4):
        add_file(store, embedder, f"file-{n}", [f"gene expression in cell type {n} café"])
    yield VectorKnowledgeBase(store, embedder, name="vs_one")
    store.close()


@pytest.mark.parametrize("mode", ["vector", "keyword", "hybrid"])
def test_later_passes_find_more_files_and_embed_the_query_once(
        kb: VectorKnowledgeBase, mode: str) -> None:
    embedder = kb.embedder
    assert isinstance(embedder, CountingEmbedder)
    request = SearchRequest(query="gene therapy trial", max_num_results=3, search_mode=mode)
    query, hits = run_search([kb], request)
    assert query == "gene therapy trial"
    assert len(hits) == 3  # more than the first pass's PER_FILE * 3 chunks could give
    assert hits[0].file_id == "file-long"
    assert len({h.file_id for h in hits}) == 3
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert embedder.queries == ([] if mode == "keyword" else ["gene therapy trial"])


def test_stores_sharing_an_embedder_embed_the_query_once(kb: VectorKnowledgeBase,
                                                        tmp_path: Path) -> None:
    other_store = SqliteVectorStore(tmp_path / "vs.sqlite", collection="vs:two")
    add_file(other_store, kb.embedder, "file-other", ["gene therapy elsewhere"])
    other = VectorKnowledgeBase(other_store, kb.embedder, name="vs_two")
    _, hits = run_search([kb, other], SearchRequest(query="gene therapy", max_num_results=10))
    assert "file-other" in {h.file_id for h in hits}
    assert isinstance(kb.embedder, CountingEmbedder)
    assert kb.embedder.queries == ["gene therapy"]
    other_store.close()


def test_query_once_is_per_object() -> None:
    inner = CountingEmbedder()
    first, second = QueryOnce(inner), QueryOnce(inner)
    assert first.embed_query("a") is first.embed_query("a")
    second.embed_query("a")
    first.embed_query("b")
    assert inner.queries == ["a", "a", "b"]
    assert (first.name, first.dimension) == (inner.name, inner.dimension)


def test_the_page_is_encoded_as_the_hits_say(kb: VectorKnowledgeBase) -> None:
    query, hits = run_search([kb], SearchRequest(query="cell café", max_num_results=2))
    body = page_json(query, hits)
    assert "café".encode() in body  # UTF-8, not \u escapes
    assert json.loads(body) == {
        "object": "vector_store.search_results.page", "search_query": ["cell café"],
        "data": [hit_json(h) for h in hits], "has_more": False, "next_page": None,
        "degraded": False, "notice": ""}
    first = json.loads(body)["data"][0]
    assert first["attributes"] == {"n": 1} and 0 <= first["score"] <= 1
    assert 1 <= len(first["content"]) <= CHUNKS_PER_FILE

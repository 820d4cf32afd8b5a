from __future__ import annotations

import pytest

from ragloom.advanced import RagTool
from ragloom.advanced.rag_tool import RAGDocument, RAGQueryConfig
from ragloom.errors import InvalidInputError, QueryError
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.testing import ScriptedModel
from ragloom.testing.fakes import HashingEmbedder

LONG = " ".join(f"Word{i} sentence about frames number {i}." for i in range(60))


@pytest.fixture
def tool() -> RagTool:
    bases = {name: VectorKnowledgeBase(InMemoryVectorStore(), HashingEmbedder(128), name=name)
             for name in ("shop", "hr")}
    rag = RagTool(bases, models=lambda name: ScriptedModel(["frame warranty length"]))
    rag.insert([RAGDocument(document_id="faq", content="Frames carry a lifetime warranty.",
                            metadata={"lang": "en"}),
                {"document_id": "long", "content": [{"type": "text", "text": LONG}]}],
               "shop", chunk_size_in_tokens=64)
    rag.insert([RAGDocument(document_id="handbook", content="Lunch break is 30 minutes.")],
               "hr")
    return rag


def test_insert_chunks_in_tokens(tool: RagTool) -> None:
    store = tool.knowledge_base("shop").store
    long_chunks = [c for c in store.chunks() if c.metadata["document_id"] == "long"]
    assert len(long_chunks) > 3
    assert max(len(c.text.split()) for c in long_chunks) <= 64


def test_query_formats_like_llama_stack(tool: RagTool) -> None:
    result = tool.query("frame warranty", ["shop", "hr"],
                        {"max_chunks": 2, "mode": "keyword",
                         "ranker": {"type": "rrf", "impact_factor": 30}})
    assert result.content.startswith("knowledge_search tool found 2 chunks:\n"
                                     "BEGIN of knowledge_search tool results.\n")
    assert "Result 1\nContent: Frames carry a lifetime warranty." in result.content
    assert "END of knowledge_search tool results." in result.content
    assert 'help answer the user\'s query: "frame warranty"' in result.content
    assert result.metadata["document_ids"][0] == "faq"
    assert len(result.metadata["scores"]) == 2
    wire = result.to_dict()
    assert wire["content"][0]["type"] == "text" and wire["metadata"]["chunks"]


def test_template_budget_and_generators(tool: RagTool) -> None:
    config = RAGQueryConfig(max_chunks=5, max_tokens_in_context=40, mode="keyword",
                            chunk_template="#{index} {chunk.content} ({metadata[document_id]})\n")
    result = tool.query(["frame", {"type": "text", "text": "warranty"}], ["shop"], config)
    assert result.metadata["query"] == "frame warranty"
    assert len(result.metadata["chunks"]) < 5  # the token budget stopped it
    assert "#1 " in result.content
    llm = tool.query("What about frames?", ["shop"], {
        "mode": "keyword", "query_generator_config": {"type": "llm", "model": "fake"}})
    assert llm.metadata["query"] == "frame warranty length"
    sep = tool.query(["frame", "warranty"], ["shop"], {
        "mode": "keyword", "query_generator_config": {"type": "default", "separator": "|"}})
    assert sep.metadata["query"] == "frame|warranty"


def test_errors(tool: RagTool) -> None:
    with pytest.raises(QueryError, match="no vector database 'nope'"):
        tool.query("x", ["nope"])
    with pytest.raises(InvalidInputError):
        RAGQueryConfig(chunk_template="no fields")
    with pytest.raises(InvalidInputError, match="unknown query_config"):
        tool.query("x", ["shop"], {"bogus": 1})
    empty = tool.query("zzzz", ["hr"], {"mode": "keyword"})
    assert empty.metadata["chunks"] == []

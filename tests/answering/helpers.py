"""Small builders shared by the answering tests: passages, and a knowledge base to ask."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragloom.answering.corpus import KnowledgeBaseCorpus
from ragloom.answering.engine import AnswerEngine
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.retrieval.options import SearchOptions
from ragloom.stores.memory import InMemoryVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.types import QueryMatch, TextChunk, TextDocument


def matches(*texts: str) -> list[QueryMatch]:
    """One passage per text, from documents doc1.md, doc2.md, ..., scored 1.0, 0.9, ..."""
    found = []
    for number, text in enumerate(texts):
        document = TextDocument.create(text, source=f"doc{number + 1}.md")
        chunk = TextChunk.create(document, text, index=0, start=0, end=len(text))
        found.append(QueryMatch(chunk=chunk, score=1.0 - number * 0.1))
    return found


def knowledge_base(docs: Mapping[str, str]) -> VectorKnowledgeBase:
    """An in-memory knowledge base of ``docs`` (file name -> text), hashing embedder."""
    base = VectorKnowledgeBase(InMemoryVectorStore(), HashingEmbedder(64),
                               search=SearchOptions(top_k=5))
    base.ingest([TextDocument.create(text, source=name) for name, text in docs.items()])
    return base


def ask(kb: VectorKnowledgeBase, question: str) -> Any:
    """The engine's answer to ``question`` over the top 5 passages of ``kb``."""
    found = list(kb.search(question, SearchOptions(top_k=5)).matches)
    return AnswerEngine(kb.embedder).answer(question, found, None,
                                            corpus=KnowledgeBaseCorpus([kb]))

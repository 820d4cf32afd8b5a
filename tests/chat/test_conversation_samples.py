"""A conversation on the samples with the real bundled models: a question, then a
follow-up that only makes sense with it. The follow-up's retrieval query must be
standalone (it names what the first question was about), the history must reach
the model, and the answer's first source must be the warranty section."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.advanced import (
    AugmentedRag,
    CompressingQueryTransformer,
    KnowledgeBaseContentRetriever,
    RetrievalAugmentor,
)
from ragloom.chat import MessageWindowMemory, SessionStore
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.loaders import load_path
from ragloom.registry import DEFAULT_EMBEDDER, DEFAULT_MODEL, make_embedder, make_model
from ragloom.stores.sqlite import SqliteVectorStore

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

pytestmark = [pytest.mark.integration, pytest.mark.slow]


class _Recording:
    """Passes calls to the real model and keeps the conversations it was sent."""

    def __init__(self, model: object) -> None:
        self.model = model
        self.calls: list[list[object]] = []

    @property
    def name(self) -> str:
        return self.model.name  # type: ignore[attr-defined,no-any-return]

    def chat(self, messages, **kwargs):  # type: ignore[no-untyped-def]
        self.calls.append(list(messages) if not isinstance(messages, str) else [messages])
        return self.model.chat(messages, **kwargs)  # type: ignore[attr-defined]

    def stream(self, messages, **kwargs):  # type: ignore[no-untyped-def]
        self.calls.append(list(messages))
        return self.model.stream(messages, **kwargs)  # type: ignore[attr-defined]


def test_follow_up_on_the_samples(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "ragloom.db", collection="samples")
    kb = VectorKnowledgeBase(store, make_embedder(DEFAULT_EMBEDDER), name="samples")
    kb.ingest([r.document for r in load_path(SAMPLES) if r.document is not None])
    model = _Recording(make_model(DEFAULT_MODEL))
    augmentor = RetrievalAugmentor([KnowledgeBaseContentRetriever(kb)],
                                   query_transformer=CompressingQueryTransformer(model),
                                   max_contents=3)
    rag = AugmentedRag(augmentor, model, sessions=SessionStore(tmp_path / "ragloom.db"),  # type: ignore[arg-type]
                       memory=MessageWindowMemory(6), max_answer_tokens=32)

    first = rag.query("How long is the battery warranty?", session="chat")
    assert first.queries == ("How long is the battery warranty?",)

    second = rag.query("And for the frame?", session="chat")
    query = second.queries[0].lower()
    assert "warranty" in query and "frame" in query  # standalone: names the subject
    top = second.sources[0].chunk
    assert top.source.endswith("product-faq.md")
    assert "lifetime warranty" in top.text  # the warranty section, not another one
    sent = model.calls[-1]
    contents = [getattr(m, "content", "") for m in sent]
    assert "How long is the battery warranty?" in contents  # history reached the model
    assert first.answer in contents
    stored = SessionStore(tmp_path / "ragloom.db").messages("chat")
    assert len(stored) == 4 and stored[3].metadata["queries"] == list(second.queries)
    store.close()

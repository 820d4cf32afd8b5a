"""NaiveRag as the simplest composition of the retrieval augmentor."""

from __future__ import annotations

from collections.abc import Sequence

from ragloom.filters import MetadataFilters
from ragloom.rag import NaiveRag
from ragloom.testing import ScriptedModel
from ragloom.types import QueryMatch

from .conftest import small_kb


class _PlainKnowledgeBase:
    """Follows the KnowledgeBase protocol but is no VectorKnowledgeBase."""

    name = "plain"

    def __init__(self) -> None:
        self.inner = small_kb()

    def retrieve(self, query: str, filters: MetadataFilters | None = None) -> list[QueryMatch]:
        return self.inner.retrieve(query, filters)


class _Reverse:
    def rerank(self, question: str, matches: Sequence[QueryMatch]) -> list[QueryMatch]:
        return list(reversed(matches))


def test_several_knowledge_bases_metadata_keys_and_temperature() -> None:
    seen: dict[str, object] = {}

    class Recording(ScriptedModel):
        def chat(self, messages, **kwargs):  # type: ignore[no-untyped-def,override]
            seen.update(kwargs)
            return super().chat(messages, **kwargs)

    model = Recording(["Frames: lifetime [1]."])
    other = small_kb("other", {"x.md": "Frames of other brands have a five year warranty."})
    rag = NaiveRag([small_kb("shop"), other], model, grounded=False,
                   metadata_keys=("file_name",), temperature=0.3)
    answer = rag.query("frame warranty")
    assert {s.knowledge_base for s in answer.sources} == {"shop", "other"}
    prompt = model.calls[0][-1].content
    assert "(file_name: warranty.md)" in prompt and "(file_name: x.md)" in prompt
    assert seen["temperature"] == 0.3


def test_any_knowledge_base_and_a_reranker() -> None:
    rag = NaiveRag(_PlainKnowledgeBase(), ScriptedModel(["x [1]"]), grounded=False)
    plain = rag.query("frame warranty")
    assert plain.sources[0].chunk.source == "warranty.md"
    assert plain.sources[0].knowledge_base == "default"
    reranked = NaiveRag(_PlainKnowledgeBase(), None, reranker=_Reverse()).query("frame warranty")
    assert reranked.sources == list(reversed(plain.sources))


def test_grounded_default_still_works_on_a_plain_knowledge_base() -> None:
    answer = NaiveRag(_PlainKnowledgeBase(), ScriptedModel(["Lifetime [1]."])).query(
        "How long is the frame warranty?")
    assert answer.sources and answer.origin in ("model", "quote", "refusal")

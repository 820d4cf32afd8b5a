"""Scoring models and re-ranking.

No cross-encoder's weights can be obtained on this machine (no PyPI package ships
one), so the CrossEncoder path is tested with a tiny randomly initialised BERT
built here: it proves the plumbing (loading a local folder, batching, scores in
[0, 1], min_score, ordering), not the quality of a trained model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.advanced import (
    ChatModelScoringModel,
    CrossEncoderScoringModel,
    Query,
    QueryResults,
    RerankingContentAggregator,
    ScoringReranker,
)
from ragloom.errors import InvalidInputError
from ragloom.protocols import Reranker
from ragloom.testing import ScriptedModel
from ragloom.types import QueryMatch, TextChunk, TextDocument


def _m(text: str, score: float = 0.5) -> QueryMatch:
    doc = TextDocument.create(text, source=text[:10])
    return QueryMatch(chunk=TextChunk.create(doc, text, index=0, start=0, end=len(text)),
                      score=score, knowledge_base="kb")


class _Overlap:
    """Scores by shared words: a transparent stand-in for a trained scorer."""

    def score(self, query: str, texts: list[str]) -> list[float]:
        words = set(query.lower().split())
        return [len(words & set(t.lower().split())) / max(1, len(words)) for t in texts]


def test_scoring_reranker_orders_filters_and_is_a_reranker() -> None:
    reranker = ScoringReranker(_Overlap(), min_score=0.3, top_k=5)
    assert isinstance(reranker, Reranker)
    matches = [_m("delivery is free", 0.9), _m("frame warranty is lifetime", 0.1),
               _m("warranty for gears", 0.5)]
    out = reranker.rerank("frame warranty", matches)
    assert [m.chunk.text for m in out] == ["frame warranty is lifetime", "warranty for gears"]
    assert out[0].score == 1.0 and out[0].raw_score == 0.1
    with pytest.raises(InvalidInputError):
        ScoringReranker(_Overlap(), min_score=2.0)


def test_reranking_aggregator_scores_against_the_question() -> None:
    aggregator = RerankingContentAggregator(_Overlap(), min_score=0.5, max_results=1)
    results = [QueryResults(query=Query(text="frame warranty"),
                            lists=[[_m("delivery is free"), _m("frame warranty is lifetime")]])]
    out = aggregator.aggregate("frame warranty", results)
    assert [m.chunk.text for m in out] == ["frame warranty is lifetime"]


def test_chat_model_scorer_reads_a_number() -> None:
    model = ScriptedModel(["8", "Score: 2 out of 10", "no idea", "15"])
    scorer = ChatModelScoringModel(model)
    assert scorer.score("q", ["a", "b", "c", "d"]) == [0.8, 0.2, 0.0, 1.0]
    assert "Passage: a" in model.calls[0][-1].content


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sentence_transformers")
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "frame", "warranty", "is",
             "lifetime", "delivery", "free", "the", "how", "long"]
    (folder / "vocab.txt").write_text("\n".join(words) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, num_labels=1,
                        max_position_embeddings=64)
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.mark.integration
def test_cross_encoder_from_a_local_folder(tiny_cross_encoder: Path) -> None:
    scorer = CrossEncoderScoringModel(str(tiny_cross_encoder), batch_size=2)
    texts = ["frame warranty is lifetime", "delivery is free", "the frame", "how long"]
    scores = scorer.score("how long is the frame warranty", texts)
    assert len(scores) == 4 and all(0.0 <= s <= 1.0 for s in scores)
    assert len(set(scores)) > 1  # a real forward pass, not a constant
    assert scorer.score("how long", texts) == scorer.score("how long", texts)  # deterministic
    matches = [_m(t) for t in texts]
    reranked = ScoringReranker(scorer, min_score=sorted(scores)[1]).rerank(
        "how long is the frame warranty", matches)
    assert len(reranked) == 3
    assert [m.score for m in reranked] == sorted(scores, reverse=True)[:3]


def test_cross_encoder_constructor_is_cheap_and_bad_folder_is_clear(tmp_path: Path) -> None:
    scorer = CrossEncoderScoringModel(str(tmp_path / "missing"))
    assert scorer._model is None
    with pytest.raises(InvalidInputError, match="cannot load the cross-encoder"):
        scorer.score("q", ["a"])

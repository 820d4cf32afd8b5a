"""Paraphrased question terms earn partial credit from the bundled embedder; codes and
names never do."""

from __future__ import annotations

import pytest

from ragloom.answering.gate import idf_of, measure, on_subject, proper_terms
from ragloom.answering.grounding import content_words
from ragloom.answering.question import read_question
from ragloom.answering.sentences import SentenceRanker
from ragloom.answering.similar import WordSimilarity
from ragloom.errors import ProviderConnectionError
from ragloom.testing import HashingEmbedder
from ragloom.types import QueryMatch, TextChunk, TextDocument


def match(text: str, source: str, score: float = 0.9) -> QueryMatch:
    document = TextDocument.create(text, source=source)
    chunk = TextChunk.create(document, text, index=0, start=0, end=len(text))
    return QueryMatch(chunk=chunk, score=score)


@pytest.fixture(scope="module")
def similar() -> WordSimilarity:
    from ragloom.registry import DEFAULT_EMBEDDER, make_embedder

    return WordSimilarity(make_embedder(DEFAULT_EMBEDDER))


def test_a_synonym_earns_more_than_an_unrelated_word(similar: WordSimilarity) -> None:
    close = similar.closeness("shut", ["closes", "saturday"])
    far = similar.closeness("shut", ["calories", "saturday"])
    assert close > 0.3
    assert far < close
    assert 0.0 <= far <= 1.0


def test_vectors_are_cached_and_bounded() -> None:
    embedder = HashingEmbedder(dimension=32)
    similar = WordSimilarity(embedder, max_words=3)
    similar.closeness("power", ["wattage", "weight", "price", "colour"])
    assert len(similar._vectors) == 3  # the least recently used went out


def test_an_embedder_that_fails_gives_no_credit() -> None:
    class Down(HashingEmbedder):
        def embed_documents(self, texts):  # type: ignore[no-untyped-def]
            raise ProviderConnectionError("down")

    assert WordSimilarity(Down(dimension=8)).closeness("shut", ["closes"]) == 0.0


def test_bounds_are_checked() -> None:
    with pytest.raises(ValueError):
        WordSimilarity(HashingEmbedder(dimension=8), low=0.7, high=0.6)


def test_a_paraphrased_attribute_raises_the_coverage(similar: WordSimilarity) -> None:
    question = read_question("when does millfield library shut on saturday")
    matches = [match("Branch: Millfield Library\nSaturday: closes at 13:00.", "hours.md")]
    ranker = SentenceRanker(HashingEmbedder(dimension=64))
    evidence, missing = on_subject(question, ranker.rank(question.text, matches), matches)
    assert not missing
    idf = idf_of(question, evidence)
    plain = measure(question, evidence, matches, idf)
    soft = measure(question, evidence, matches, idf, similar)
    assert "shut" in plain.missing
    assert soft.coverage > plain.coverage


def test_codes_are_never_matched_softly(similar: WordSimilarity) -> None:
    question = read_question("kx200 power")
    matches = [match("Feature: Power; KX100: 2200 W", "kx100.md")]
    ranker = SentenceRanker(HashingEmbedder(dimension=64))
    evidence = ranker.rank(question.text, matches)
    signals = measure(question, evidence, matches, idf_of(question, evidence), similar)
    assert "kx200" in signals.missing


def test_a_capitalised_title_word_is_not_a_name() -> None:
    question = read_question("how many people fit in the hall")
    texts = ["Slide 4\nPeople\nHeadcount at year end: 236", "People: 120 seated"]
    assert "people" not in proper_terms(question, texts)
    assert "oakfield" in proper_terms(read_question("oakfield hall capacity"),
                                      ["Meetings are held at Oakfield Hall."])


def test_contractions_typed_without_apostrophe_are_not_key_terms() -> None:
    assert content_words("whats the warranty, i dont know") == ["warranty", "know"]


def test_a_hosted_embedder_is_not_asked_for_word_vectors(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from ragloom.answering.similar import word_similarity_for
    from ragloom.embeddings.openai import OpenAIEmbedder

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    hosted = OpenAIEmbedder("text-embedding-3-small", base_url="http://127.0.0.1:9/v1")
    assert word_similarity_for(hosted) is None  # each word would be a paid request
    assert word_similarity_for(None) is None
    assert isinstance(word_similarity_for(HashingEmbedder(dimension=8)), WordSimilarity)

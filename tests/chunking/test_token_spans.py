"""Pieces measured from one tokenization of the whole text: the same sizes, and so
the same chunks, as tokenizing every piece on its own (the real bundled tokenizer)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloom.chunking import RecursiveSplitter
from ragloom.chunking.measure import Measure, word_edge
from ragloom.embeddings.token_spans import splits_at_word_edges, word_token_spans
from ragloom.types import TextDocument

tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def wordpiece() -> object:
    from ragloom.embeddings.local import bundled_model_path
    from ragloom.embeddings.onnx import load_tokenizer

    tokenizer = load_tokenizer(bundled_model_path())
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


class Counter:
    """The real tokenizer as a plain TokenCounter, counting its calls."""

    def __init__(self, tokenizer: object) -> None:
        self.tokenizer = tokenizer
        self.counts = 0

    def count_tokens(self, text: str) -> int:
        self.counts += 1
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)  # type: ignore[attr-defined]


class Spanner(Counter):
    """The same, able to say where the tokens lie."""

    def __init__(self, tokenizer: object) -> None:
        super().__init__(tokenizer)
        self.spans = 0

    def token_spans(self, text: str) -> list[tuple[int, int]] | None:
        self.spans += 1
        return word_token_spans(self.tokenizer, text)


# Words that tokenize into several pieces, accents (composed and combining), CJK,
# invisible and control characters, numbers with points, a word longer than the
# tokenizer's word limit, and separators of every kind the splitter cuts at.
WORDS = ["cell", "Héllo", "naïve", "e\u0301x", "日本語", "a\u200bb", "3.5", "don't", "U.S.",
         "x\x00y", "z\x1cz", "antidisestablishmentarianism", "q" * 120, "🧬gene", "ﬁne"]
GAPS = [" ", "  ", "\n", "\n\n", ". ", ", ", "-", "\t", "\u3000", "\xa0", "", "? ", ";"]
texts = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(GAPS)), min_size=1,
                 max_size=60).map(lambda pairs: "".join(w + g for w, g in pairs))


def test_the_bundled_tokenizer_keeps_its_tokens_inside_words(wordpiece: object) -> None:
    assert splits_at_word_edges(wordpiece)
    spans = word_token_spans(wordpiece, "Héllo, wörld")
    assert spans is not None and [(a, b) for a, b in spans] == [(0, 5), (5, 6), (7, 12)]


@settings(max_examples=150, deadline=None)
@given(texts)
def test_a_piece_between_word_edges_counts_what_it_tokenizes_to_alone(
    wordpiece: object, text: str
) -> None:
    measure = Measure(Spanner(wordpiece), text)
    alone = Counter(wordpiece)
    edges = [p for p in range(len(text) + 1) if word_edge(text, p)]
    for start, end in itertools.combinations(edges[:: max(1, len(edges) // 12)], 2):
        assert measure.span(start, end) == alone.count_tokens(text[start:end]), (start, end)


@settings(max_examples=150, deadline=None)
@given(texts, st.sampled_from([(4, 1), (12, 3), (40, 10)]))
def test_chunks_are_the_same_as_with_a_counter_that_tokenizes_every_piece(
    wordpiece: object, text: str, sizes: tuple[int, int]
) -> None:
    document = TextDocument.create(text, source="t")
    plain = RecursiveSplitter(*sizes, token_counter=Counter(wordpiece)).split(document)
    spanner = Spanner(wordpiece)
    spanned = RecursiveSplitter(*sizes, token_counter=spanner).split(document)
    assert [(c.start, c.end) for c in spanned] == [(c.start, c.end) for c in plain]
    assert spanner.spans <= 1


def test_a_document_is_tokenized_once_rather_than_once_per_piece(wordpiece: object) -> None:
    text = "\n\n".join(" ".join(f"Sentence {s} of paragraph {p} about cells." for s in range(30))
                       for p in range(30))
    plain, spanner = Counter(wordpiece), Spanner(wordpiece)
    a = RecursiveSplitter(token_counter=plain).split(TextDocument.create(text, source="t"))
    b = RecursiveSplitter(token_counter=spanner).split(TextDocument.create(text, source="t"))
    assert [(c.start, c.end) for c in a] == [(c.start, c.end) for c in b]
    assert plain.counts > 500
    assert spanner.spans == 1 and spanner.counts <= 1  # the one call is the overhead probe


def test_a_tokenizer_whose_tokens_cross_word_edges_is_asked_piece_by_piece(
    wordpiece: object,
) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    byte_level = Tokenizer(models.BPE())
    byte_level.pre_tokenizer = pre_tokenizers.ByteLevel()
    assert not splits_at_word_edges(byte_level)
    assert word_token_spans(byte_level, "a b") is None
    spanner = Spanner(wordpiece)
    spanner.tokenizer = byte_level  # type: ignore[assignment]
    spanner.count_tokens = lambda text: len(text.split())  # type: ignore[method-assign]
    measure = Measure(spanner, "one two three four")
    assert measure.span(0, 7) == 2 and measure.span(4, 18) == 3
    assert spanner.spans == 1  # asked once, then never again


@pytest.mark.parametrize("text, position, edge", [
    ("ab cd", 2, True), ("ab cd", 3, True), ("abcd", 2, False), ("a,b", 1, True),
    ("ab", 0, True), ("ab", 2, True), ("a\u00a0b", 1, True), ("a\u200bb", 1, False),
    ("e\u0301x", 1, False), ("日本", 1, False), ("a¿b", 1, True), ("x\x00y", 1, False),
])
def test_word_edges(text: str, position: int, edge: bool) -> None:
    assert word_edge(text, position) is edge

"""Invariants every splitter keeps, on random text (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragloom.chunking import (
    CharacterSplitter,
    LineSplitter,
    MarkdownSplitter,
    ParagraphSplitter,
    RecursiveSplitter,
    RegexSplitter,
    SentenceSplitter,
    WordSplitter,
)
from ragloom.protocols import Chunker
from ragloom.types import TextDocument
from tests.chunking.test_recursive import CountingCounter

# Text built from pieces that exercise every boundary the splitters look for.
PIECES = st.sampled_from([
    "word", "Dr.", "e.g.", " ", "  ", "\n", "\n\n", "\n \n", ". ", "! ", "? ", "A", "b",
    "Sentence ends. ", "# Head\n", "## Sub ##\n", "```\n", "é", "\t", "x" * 40, "---", "#",
])
TEXTS = st.one_of(st.text(max_size=300), st.lists(PIECES, max_size=80).map("".join))

SPLITTERS: list[tuple[Chunker, bool]] = [  # (splitter, whether it keeps every character)
    (RecursiveSplitter(chunk_size=40, chunk_overlap=10), True),
    (RecursiveSplitter(chunk_size=7, chunk_overlap=0), True),
    (RecursiveSplitter(chunk_size=12, chunk_overlap=3, token_counter=CountingCounter(1)), True),
    (MarkdownSplitter(chunk_size=30, chunk_overlap=5), False),
    (ParagraphSplitter(), True),
    (LineSplitter(), True),
    (SentenceSplitter(sentences=2, overlap=1), True),
    (WordSplitter(words=3, overlap=1), True),
    (CharacterSplitter(size=10, overlap=3), True),
    (RegexSplitter(r"[.!?]"), False),
]


def covered(text: str, chunks: list[tuple[int, int]]) -> set[int]:
    return {i for start, end in chunks for i in range(start, end)}


@settings(max_examples=150, deadline=None)
@given(text=TEXTS, page_cut=st.integers(min_value=1, max_value=200))
def test_offsets_pages_indexes_and_coverage(text: str, page_cut: int) -> None:
    starts = [0, min(page_cut, len(text))]
    document = TextDocument.create(text, source="prop", metadata={"page_starts": starts})
    for splitter, keeps_all in SPLITTERS:
        chunks = splitter.split(document)
        for position, chunk in enumerate(chunks):
            assert text[chunk.start:chunk.end] == chunk.text, splitter
            assert chunk.text.strip() == chunk.text and chunk.text, splitter
            assert chunk.index == position
            assert chunk.page == (2 if chunk.start >= starts[1] and starts[1] > 0 else 1)
        if keeps_all:
            visible = {i for i, ch in enumerate(text) if not ch.isspace()}
            assert visible <= covered(text, [(c.start, c.end) for c in chunks]), splitter
        if not text.strip():
            assert chunks == []


@settings(max_examples=100, deadline=None)
@given(text=TEXTS, size=st.integers(min_value=2, max_value=60),
       overlap_ratio=st.floats(min_value=0, max_value=0.9))
def test_recursive_chunks_never_exceed_the_size(
    text: str, size: int, overlap_ratio: float
) -> None:
    overlap = min(size - 1, int(size * overlap_ratio))
    splitter = RecursiveSplitter(chunk_size=size, chunk_overlap=overlap)
    chunks = splitter.split(TextDocument.create(text, source="prop"))
    assert all(len(c.text) <= size for c in chunks)
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)

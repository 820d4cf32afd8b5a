from __future__ import annotations

import itertools
import re

import pytest

from ragloom.chunking import MarkdownSplitter, RecursiveSplitter, markdown_sections
from ragloom.types import TextDocument

_WORD = re.compile(r"\w+|[^\w\s]")


class CountingCounter:
    """Words and punctuation as tokens, plus ``special`` tokens per call (like [CLS] [SEP])."""

    name = "counting"

    def __init__(self, special: int = 0) -> None:
        self.special = special
        self.calls = 0
        self.characters = 0

    def count_tokens(self, text: str) -> int:
        self.calls += 1
        self.characters += len(text)
        return len(_WORD.findall(text)) + self.special


def doc(text: str) -> TextDocument:
    return TextDocument.create(text, source="test")


LOREM = ("The quick brown fox jumps over the lazy dog. " * 3 + "\n") * 4


def long_text(paragraphs: int) -> str:
    return "\n\n".join(f"Paragraph {p}. " + LOREM for p in range(paragraphs))


def test_defaults_follow_the_length_unit() -> None:
    characters = RecursiveSplitter()
    assert (characters.chunk_size, characters.chunk_overlap) == (1000, 150)
    tokens = RecursiveSplitter(token_counter=CountingCounter())
    assert (tokens.chunk_size, tokens.chunk_overlap) == (200, 30)
    assert "tokens:counting" in tokens.settings_key()
    assert "characters" in characters.settings_key()
    assert RecursiveSplitter(chunk_size=100).chunk_overlap == 50


def test_character_chunks_fit_and_prefer_paragraph_breaks() -> None:
    text = long_text(6)
    chunks = RecursiveSplitter(chunk_size=700, chunk_overlap=0).split(doc(text))
    assert all(len(c.text) <= 700 for c in chunks)
    assert all(c.text.startswith("Paragraph") for c in chunks[:3])
    assert "".join(c.text for c in chunks).replace("\n", "").replace(" ", "") == \
        text.replace("\n", "").replace(" ", "")


def test_overlap_is_carried_from_the_previous_chunk() -> None:
    text = " ".join(f"w{i}" for i in range(200))
    chunks = RecursiveSplitter(chunk_size=60, chunk_overlap=20).split(doc(text))
    assert len(chunks) > 5
    for before, after in itertools.pairwise(chunks):
        assert after.start < before.end, "consecutive chunks overlap"
        assert before.end - after.start <= 20
        assert after.end > before.end, "every chunk brings new text"


def test_token_sizes_are_respected_including_special_tokens() -> None:
    counter = CountingCounter(special=2)
    text = long_text(20)
    chunks = RecursiveSplitter(chunk_size=50, chunk_overlap=10, token_counter=counter).split(
        doc(text))
    sizes = [counter.count_tokens(c.text) for c in chunks]
    assert max(sizes) <= 50
    assert sum(sizes) / len(sizes) > 30, "chunks are filled, not one word each"


def test_token_counter_cost_is_linear_in_the_document() -> None:
    counter = CountingCounter()
    text = long_text(300)  # ~170 kB
    chunks = RecursiveSplitter(chunk_size=200, chunk_overlap=30, token_counter=counter).split(
        doc(text))
    assert len(chunks) > 100
    assert counter.characters <= 4 * len(text)
    assert counter.calls <= len(text) // 5


def test_a_giant_word_is_cut_by_characters() -> None:
    counter = CountingCounter()
    text = "x" * 5000 + " tail"
    chunks = RecursiveSplitter(chunk_size=300, chunk_overlap=0).split(doc(text))
    assert [len(c.text) for c in chunks[:-1]] == [300] * 16
    token_chunks = RecursiveSplitter(chunk_size=3, chunk_overlap=0,
                                     token_counter=counter).split(doc("a-b-c-d-e-f-g-h"))
    assert all(counter.count_tokens(c.text) <= 3 for c in token_chunks)


def test_split_spans_of_a_region() -> None:
    text = "skip this. " + "keep " * 50
    splitter = RecursiveSplitter(chunk_size=40, chunk_overlap=0)
    spans = splitter.split_spans(text, 11, len(text))
    assert spans[0][0] >= 11 and spans[-1][1] == len(text)


MARKDOWN = """Preface line.

# Guide

## Install
Run pip.

```python
# not a header
print("x")
```

## Use ##
Call it.

### Details
More.

# Appendix
Extra.
"""


def test_markdown_sections_and_header_paths() -> None:
    chunks = MarkdownSplitter(chunk_size=1000, chunk_overlap=0).split(doc(MARKDOWN))
    sections = [c.metadata["section"] for c in chunks]
    assert sections == ["", "Guide > Install", "Guide > Use", "Guide > Use > Details",
                        "Appendix"]
    assert chunks[1].metadata["headers"] == {"h1": "Guide", "h2": "Install"}
    assert "# not a header" in chunks[1].text
    assert chunks[3].text == "### Details\nMore."
    for chunk in chunks:
        assert MARKDOWN[chunk.start:chunk.end] == chunk.text


def test_long_markdown_sections_are_sub_split_keeping_headers() -> None:
    body = " ".join(f"word{i}" for i in range(300))
    text = f"# Top\n\n## Long\n{body}\n\n## Short\nend"
    chunks = MarkdownSplitter(chunk_size=200, chunk_overlap=20).split(doc(text))
    long_chunks = [c for c in chunks if c.metadata["section"] == "Top > Long"]
    assert len(long_chunks) > 5 and all(len(c.text) <= 200 for c in long_chunks)
    assert chunks[-1].metadata["section"] == "Top > Short"
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert MarkdownSplitter(100, 10).settings_key().startswith("MarkdownSplitter(Recursive")


def test_markdown_sections_without_headers() -> None:
    assert markdown_sections("plain text") == [(0, 10, {}, True)]


@pytest.mark.parametrize("overlap", [0, 10])
def test_chunks_stay_in_order(overlap: int) -> None:
    chunks = RecursiveSplitter(chunk_size=80, chunk_overlap=overlap).split(doc(long_text(3)))
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)

from __future__ import annotations

import pytest

from ragloom.chunking import (
    SPLITTERS,
    CharacterSplitter,
    LineSplitter,
    ParagraphSplitter,
    PrependTitle,
    RecursiveSplitter,
    RegexSplitter,
    SentenceSplitter,
    TransformingChunker,
    WordSplitter,
    make_splitter,
    sentence_spans,
)
from ragloom.errors import ConfigurationError
from ragloom.protocols import Chunker
from ragloom.types import TextDocument


def doc(text: str, **metadata: object) -> TextDocument:
    return TextDocument.create(text, source="test", metadata=metadata)


def texts(chunker: Chunker, text: str) -> list[str]:
    return [c.text for c in chunker.split(doc(text))]


def sentences(text: str) -> list[str]:
    return [text[s:e].strip() for s, e in sentence_spans(text)]


def test_sentences_respect_abbreviations_initials_and_punctuation() -> None:
    text = ("Dr. Smith met Mr. J. R. Jones at 5 p.m. yesterday. Was it fun?! Yes. "
            'He said "Stop." Then e.g. apples, etc. were sold. Version 2.5 shipped.\n\n'
            "no punctuation here\nnext line")
    assert sentences(text) == [
        "Dr. Smith met Mr. J. R. Jones at 5 p.m. yesterday.", "Was it fun?!", "Yes.",
        'He said "Stop."', "Then e.g. apples, etc. were sold.", "Version 2.5 shipped.",
        "no punctuation here\nnext line",
    ]
    assert sentences("i am here. and lower case continues") == [
        "i am here. and lower case continues"]


def test_simple_splitters() -> None:
    text = "First para line one.\nLine two!\n\n\n  Second para.  \n \nThird."
    assert texts(ParagraphSplitter(), text) == [
        "First para line one.\nLine two!", "Second para.", "Third."]
    assert texts(LineSplitter(), text) == [
        "First para line one.", "Line two!", "Second para.", "Third."]
    assert texts(SentenceSplitter(), text) == [
        "First para line one.", "Line two!", "Second para.", "Third."]
    assert texts(SentenceSplitter(sentences=2, overlap=1), text) == [
        "First para line one.\nLine two!", "Line two!\n\n\n  Second para.",
        "Second para.  \n \nThird."]
    assert texts(WordSplitter(words=3, overlap=1), "a b c d e f g") == ["a b c", "c d e", "e f g"]
    assert texts(WordSplitter(words=3, overlap=0), "a b c d") == ["a b c", "d"]
    assert texts(CharacterSplitter(size=4, overlap=1), "abcdefghij") == ["abcd", "defg", "ghij"]
    assert texts(RegexSplitter(r"\s*---\s*"), "one --- two---three") == ["one", "two", "three"]
    assert texts(RegexSplitter(r"(?m)^## ", keep_separator=True), "intro\n## A\na\n## B\nb") == [
        "intro", "## A\na", "## B\nb"]


@pytest.mark.parametrize("name", sorted(SPLITTERS))
def test_every_splitter_gives_nothing_for_blank_documents(name: str) -> None:
    options = {"pattern": ","} if name == "regex" else {}
    splitter = make_splitter(name, **options)
    assert isinstance(splitter, Chunker)
    for text in ("", "   ", "\n\n\t \n"):
        assert splitter.split(doc(text)) == []


def test_chunks_carry_document_metadata_index_offsets_and_pages() -> None:
    text = "Page one text.\n\nPage two text.\n\nStill page two. Page three."
    starts = [0, text.index("Page two"), text.index("Page three")]
    document = doc(text, page_starts=starts, title="T", lang="en")
    chunks = SentenceSplitter().split(document)
    assert [c.page for c in chunks] == [1, 2, 2, 3]
    assert [c.index for c in chunks] == [0, 1, 2, 3]
    for chunk in chunks:
        assert text[chunk.start:chunk.end] == chunk.text
        assert chunk.metadata["title"] == "T" and chunk.metadata["lang"] == "en"
        assert chunk.metadata["source"] == "test" and chunk.document_id == document.id
        assert chunk.metadata["start"] == chunk.start and chunk.metadata["page"] == chunk.page
        assert "page_starts" not in chunk.metadata
    assert all(c.page is None for c in SentenceSplitter().split(doc(text)))


def test_settings_keys_are_stable_and_distinguish_parameters() -> None:
    assert WordSplitter(10, 2).settings_key() == WordSplitter(10, 2).settings_key()
    keys = {
        WordSplitter(10, 2).settings_key(), WordSplitter(10, 3).settings_key(),
        CharacterSplitter().settings_key(), SentenceSplitter().settings_key(),
        RecursiveSplitter().settings_key(), RecursiveSplitter(500, 50).settings_key(),
        make_splitter("markdown").settings_key(),  # type: ignore[attr-defined]
        RegexSplitter("x").settings_key(), RegexSplitter("y").settings_key(),
    }
    assert len(keys) == 9
    assert WordSplitter(10, 2).settings_key() == "WordSplitter(words=10, overlap=2)"


def test_make_splitter_names_and_errors() -> None:
    assert isinstance(make_splitter("recursive", chunk_size=50, chunk_overlap=5),
                      RecursiveSplitter)
    with pytest.raises(ConfigurationError, match="unknown splitter 'nope'; choose one of"):
        make_splitter("nope")
    with pytest.raises(ConfigurationError, match="bad options for the 'word' splitter"):
        make_splitter("word", size=3)
    with pytest.raises(ConfigurationError, match="overlap"):
        make_splitter("character", size=10, overlap=10)
    with pytest.raises(ConfigurationError, match="not a valid regular expression"):
        make_splitter("regex", pattern="(")


def test_prepend_title_before_embedding() -> None:
    document = doc("Alpha one. Beta two.", title="Guide")
    plain = SentenceSplitter().split(document)
    chunker = TransformingChunker(SentenceSplitter(), PrependTitle())
    titled = chunker.split(document)
    assert [c.text for c in titled] == ["Guide\n\nAlpha one.", "Guide\n\nBeta two."]
    assert [(c.start, c.end, c.page) for c in titled] == [(c.start, c.end, c.page) for c in plain]
    assert titled[0].id != plain[0].id and titled[0].metadata == plain[0].metadata
    assert "PrependTitle" in chunker.settings_key()
    assert "SentenceSplitter" in chunker.settings_key()
    untitled = doc("No title here.")
    assert PrependTitle().transform(SentenceSplitter().split(untitled), untitled)[0].text == (
        "No title here.")


def test_a_table_split_between_chunks_keeps_its_header_with_every_part() -> None:
    rows = "\n".join(f"Cottage {n} | {n + 1} | £{100 * n}" for n in range(40))
    text = "Our cottages\n\nCottage | Sleeps | Price\n" + rows + "\n\nBook early."
    chunks = RecursiveSplitter(chunk_size=200, chunk_overlap=0).split(doc(text))
    inside = [c for c in chunks if c.text.startswith("Cottage ") and "Sleeps" not in c.text]
    assert len(inside) >= 2  # the table was split
    assert all(c.metadata["table_header"] == "Cottage | Sleeps | Price" for c in inside)
    assert all(c.text == text[c.start:c.end] for c in chunks)  # offsets still hold
    first = next(c for c in chunks if "Cottage | Sleeps | Price" in c.text)
    assert "table_header" not in first.metadata  # it holds its own header
    assert all("table_header" not in c.metadata for c in chunks
               if not c.text.startswith("Cottage "))  # prose has none


def test_a_markdown_table_header_skips_its_separator_line() -> None:
    from ragloom.chunking.base import table_header

    text = "| Area | Day |\n|---|---|\n| Harbourside | Thursday |\n| Castle | Monday |"
    assert table_header(text, text.index("| Castle")) == "| Area | Day |"
    assert table_header(text, 0) is None
    prose = "A line of prose.\nAnother line."
    assert table_header(prose, prose.index("Another")) is None

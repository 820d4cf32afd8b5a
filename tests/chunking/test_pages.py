"""Recursive chunks never cross a page boundary."""

from ragloom.chunking import RecursiveSplitter
from ragloom.types import TextDocument


def test_recursive_chunks_stay_within_their_page() -> None:
    pages = ["apples " * 30, "bananas " * 30, "cherries " * 30]
    text = "\n\n".join(page.strip() for page in pages)
    starts = [0]
    for page in pages[:-1]:
        starts.append(starts[-1] + len(page.strip()) + 2)
    doc = TextDocument.create(text, source="fruit.pdf", metadata={"page_starts": starts})
    chunks = RecursiveSplitter(chunk_size=500, chunk_overlap=50).split(doc)
    assert [c.page for c in chunks] == [1, 2, 3]
    for chunk in chunks:
        assert text[chunk.start:chunk.end] == chunk.text
        assert len({word for word in chunk.text.split()}) == 1

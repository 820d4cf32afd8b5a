"""Inputs shared by the embedder tests."""

#: Texts of very different lengths (one empty), so sorting by length and batching
#: reorder them: embedders must still return vectors in input order.
MIXED_LENGTHS = [
    "short",
    "a much longer sentence about proteins folding in the cell " * 6,
    "",
    "medium length text about lunch breaks at work",
    "tiny",
]

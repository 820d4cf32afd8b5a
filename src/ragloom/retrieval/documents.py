"""Documents from chunk matches: each document ranked by its best chunk.

Used by ``ragloom search --documents`` and by the evaluation runner (BEIR judges
whole documents, while the knowledge base ranks chunks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragloom.types import QueryMatch


@dataclass(frozen=True)
class DocumentMatch:
    """A document, the score of its best chunk, and that chunk."""

    source: str
    document_id: str
    score: float
    best: QueryMatch
    chunks: int

    @property
    def key(self) -> str:
        """The source when known, else the document id."""
        return self.source or self.document_id


def documents_from_matches(
    matches: Sequence[QueryMatch], top_n: int | None = None
) -> list[DocumentMatch]:
    """Group chunk matches by (knowledge base, document), best chunk first.

    ``matches`` must be best first (as every search returns them); the document's
    score is its best chunk's score, and documents keep the order of their best chunks.
    """
    found: dict[tuple[str, str], DocumentMatch] = {}
    for match in matches:
        key = (match.knowledge_base, match.chunk.document_id)
        known = found.get(key)
        if known is None:
            found[key] = DocumentMatch(source=match.chunk.source,
                                       document_id=match.chunk.document_id,
                                       score=match.score, best=match, chunks=1)
        else:
            found[key] = DocumentMatch(source=known.source, document_id=known.document_id,
                                       score=known.score, best=known.best,
                                       chunks=known.chunks + 1)
    documents = list(found.values())
    return documents[:top_n] if top_n is not None else documents

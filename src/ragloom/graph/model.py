"""Plain types of the knowledge graph: what extractors return and what the store keeps.

Every entity and relation an extractor returns is tied to the chunk it came from and
carries ``evidence``: the passage of that chunk that supports it. Frozen dataclasses,
no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ragloom.types import TextChunk, TextDocument


@dataclass(frozen=True, kw_only=True)
class Entity:
    """A named thing found in one chunk."""

    name: str
    type: str = "concept"
    aliases: tuple[str, ...] = ()
    evidence: str = ""
    weight: float = 1.0


@dataclass(frozen=True, kw_only=True)
class Relation:
    """``source`` --``relation``--> ``target`` (entity names), with the supporting text."""

    source: str
    relation: str
    target: str
    evidence: str = ""
    weight: float = 1.0


@dataclass(frozen=True, kw_only=True)
class ChunkGraph:
    """What one chunk yielded."""

    chunk_id: str
    entities: tuple[Entity, ...] = ()
    relations: tuple[Relation, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ExtractionFailure:
    """A chunk an extractor gave up on, and why (kept with the knowledge base)."""

    chunk_id: str
    reason: str
    attempts: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"chunk_id": self.chunk_id, "reason": self.reason, "attempts": self.attempts}


@dataclass(frozen=True, kw_only=True)
class DocumentGraph:
    """One document's extraction: a graph per chunk plus the chunks that failed."""

    document_id: str
    extractor: str
    chunks: tuple[ChunkGraph, ...] = ()
    failures: tuple[ExtractionFailure, ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Mention:
    """Where a (merged) entity is mentioned: a chunk and the supporting text."""

    chunk_id: str
    evidence: str
    #: How salient the entity is in the chunk (the extractor's weight; summed to rank).
    weight: float = 1.0


@dataclass(frozen=True, kw_only=True)
class MergedEntity:
    """An entity after merging within a document: one name, its aliases, its mentions."""

    name: str
    type: str
    aliases: tuple[str, ...] = ()
    mentions: tuple[Mention, ...] = ()


@dataclass(frozen=True, kw_only=True)
class MergedRelation:
    """A relation between two merged entities (by their canonical names) in one chunk."""

    source: str
    relation: str
    target: str
    chunk_id: str
    evidence: str
    weight: float = 1.0


@dataclass(frozen=True, kw_only=True)
class StoredEntity:
    """An entity as the knowledge base holds it, merged across documents."""

    id: str
    name: str
    type: str
    aliases: tuple[str, ...] = ()
    mentions: int = 0
    documents: int = 0
    weight: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "type": self.type,
                "aliases": list(self.aliases), "mentions": self.mentions,
                "documents": self.documents, "weight": round(self.weight, 3)}


@dataclass(frozen=True, kw_only=True)
class StoredRelation:
    """A relation as stored: entity ids and names, summed weight, one evidence passage."""

    source_id: str
    source: str
    relation: str
    target_id: str
    target: str
    weight: float
    evidence: str
    chunk_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"source_id": self.source_id, "source": self.source, "relation": self.relation,
                "target_id": self.target_id, "target": self.target,
                "weight": round(self.weight, 4), "evidence": self.evidence,
                "chunk_ids": list(self.chunk_ids)}


@dataclass(frozen=True, kw_only=True)
class Neighbour:
    """An entity reached from another in ``hops`` steps, with the path's strength."""

    entity: StoredEntity
    hops: int
    strength: float
    via: str = ""
    relation: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {**self.entity.to_dict(), "hops": self.hops, "strength": round(self.strength, 4),
                "via": self.via, "relation": self.relation}


@dataclass
class GraphStats:
    """Running totals of one ingestion's graph extraction (mutable, for reports)."""

    documents: int = 0
    chunks: int = 0
    entities: int = 0
    relations: int = 0
    seconds: float = 0.0
    failures: list[tuple[str, ExtractionFailure]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"documents": self.documents, "chunks": self.chunks, "entities": self.entities,
                "relations": self.relations, "seconds": round(self.seconds, 3),
                "failures": [{"document_id": doc, **f.to_dict()} for doc, f in self.failures]}


@runtime_checkable
class GraphExtractor(Protocol):
    """Turns a document's chunks into entities and relations.

    ``name`` identifies the extractor and its settings: a document extracted with
    another name is extracted again on the next ingest.
    """

    @property
    def name(self) -> str: ...

    def extract(self, document: TextDocument, chunks: Sequence[TextChunk]) -> DocumentGraph: ...

"""Copy a knowledge base between stores with its vectors: no re-embedding.

Works between any two stores that implement :class:`~ragloom.protocols.DocumentIndex`
and ``export_entries(batch_size)`` (SQLite, PostgreSQL, Milvus). Each document is
written with its chunks through ``replace_document`` (so the copy has the same
document records, settings and content hashes, and an unchanged file is still
skipped by the next ``ragloom ingest``); chunks without a document record go through
``add``. The embedder binding is copied first, so a different embedder is refused
on the copy as on the original. Counts are verified at the end.

Memory: chunks are buffered per document until all of a document's chunks have
been read; stores that export a document's chunks together (SQLite in insertion
order, PostgreSQL by document) keep one document in memory at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragloom.errors import StoreError
from ragloom.protocols import StoredDocument
from ragloom.types import Document, VectorEntry


@dataclass(frozen=True)
class MigrationReport:
    name: str
    documents: int
    chunks: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"knowledge_base": self.name, "documents": self.documents,
                "chunks": self.chunks, "seconds": round(self.seconds, 3)}


class _Writes:
    """Documents ready to write, written a batch at a time where the target can
    (``replace_documents``: one transaction, or one set of calls, per batch)."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.ready: list[tuple[StoredDocument, list[VectorEntry]]] = []

    def put(self, stored: StoredDocument, entries: list[VectorEntry]) -> None:
        self.ready.append((stored, entries))

    def flush(self) -> None:
        by_settings: dict[str, list[tuple[Document, list[VectorEntry]]]] = {}
        for stored, entries in self.ready:
            document = Document(id=stored.id, source=stored.source,
                                metadata=dict(stored.metadata))
            by_settings.setdefault(stored.settings, []).append((document, entries))
        self.ready = []
        for settings, items in by_settings.items():
            if hasattr(self.target, "replace_documents"):
                self.target.replace_documents(items, settings=settings)
                continue
            for document, entries in items:
                self.target.replace_document(document, entries, settings=settings)


def copy_knowledge_base(
    source: Any, target: Any, *, batch_size: int = 1000,
    progress: Callable[[int], None] | None = None,
) -> MigrationReport:
    """Copy everything of ``source`` into ``target`` (which should be empty)."""
    import time

    started = time.perf_counter()
    if not hasattr(source, "export_entries"):
        raise StoreError(f"{type(source).__name__} cannot export its vectors for a migration")
    info = source.collection_info()
    if info is not None:
        target.bind_embedder(info.embedder, info.dimension)
    documents = {stored.id: stored for stored in source.list_documents()}
    pending: dict[str, list[VectorEntry]] = {}
    written: set[str] = set()
    writes = _Writes(target)
    copied = 0
    for batch in source.export_entries(batch_size):
        loose: list[VectorEntry] = []
        for entry in batch:
            stored = documents.get(entry.chunk.document_id)
            if stored is None:
                loose.append(entry)
                continue
            chunks = pending.setdefault(stored.id, [])
            chunks.append(entry)
            if len(chunks) >= stored.chunk_count:
                writes.put(stored, pending.pop(stored.id))
                written.add(stored.id)
        writes.flush()
        if loose:
            target.add(loose)
        copied += len(batch)
        if progress is not None:
            progress(copied)
    for doc_id, chunks in pending.items():  # counts that did not add up: write what there is
        writes.put(documents[doc_id], chunks)
        written.add(doc_id)
    for doc_id, stored in documents.items():
        if doc_id not in written:  # documents without chunks
            writes.put(stored, [])
    writes.flush()
    report = MigrationReport(name=str(getattr(source, "name", "")), documents=len(documents),
                             chunks=copied, seconds=time.perf_counter() - started)
    verify(source, target)
    return report


def verify(source: Any, target: Any) -> None:
    """Refuse a copy whose chunk or document counts differ from the original's."""
    counts = (source.count(), len(source.list_documents()))
    copied = (target.count(), len(target.list_documents()))
    if counts != copied:
        raise StoreError(
            f"the copy of {getattr(source, 'name', '')!r} holds {copied[0]} chunks and "
            f"{copied[1]} documents; the original {counts[0]} and {counts[1]}. Drop the "
            "copy and run the migration again (was the original written to meanwhile?)")

"""MilvusStore's writes: chunk rows, deletes, document records.

Milvus has no multi-row transactions: a write is ordered so that a crash leaves at
worst stale extra chunks of a document whose record has not changed yet, which the
next ingestion of that document replaces (the record is written last). A batch of
documents (:meth:`MilvusWriter.replace_documents`) costs the calls of one: Milvus
Lite pays per call (each one a scan of its in-memory segment for a filter), so
ingestion writes documents in batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragloom.errors import DimensionMismatchError, InvalidInputError
from ragloom.filters import MetadataFilters
from ragloom.lexical.tokenize import tokenize
from ragloom.stores.document_records import check_document_entries
from ragloom.stores.memory import dense_values
from ragloom.stores.milvus_client import INFO_ID, NO_VECTOR, MilvusCollections
from ragloom.stores.milvus_expr import (
    compile_expression,
    flat_filter_fields,
    ids_expression,
    string_literal,
)
from ragloom.stores.milvus_schema import MAX_TEXT_BYTES
from ragloom.stores.pgvector_sql import plain
from ragloom.types import Document, VectorEntry

_STORE = "MilvusStore"
_DOC_FIELDS = ["id", "source", "data"]


def chunk_rows(name: str, entries: Sequence[VectorEntry], dimension: int | None
               ) -> list[dict[str, Any]]:
    """Validated Milvus rows, the last entry with an id winning (nothing is written
    if any entry is refused)."""
    rows: dict[str, dict[str, Any]] = {}
    for entry in entries:
        vector = np.asarray(dense_values(entry.embedding, _STORE), dtype=np.float32)
        if dimension is None:
            dimension = int(vector.shape[0])
        if vector.shape[0] != dimension:
            raise DimensionMismatchError(
                f"vector has {vector.shape[0]} dimensions; collection {name!r} holds "
                f"{dimension}. Use the embedder the collection was built with.")
        chunk = entry.chunk
        text = chunk.text.replace("\x00", "\ufffd")
        terms = " ".join(tokenize(text))
        if max(len(text.encode("utf-8")), len(terms.encode("utf-8"))) > MAX_TEXT_BYTES:
            raise InvalidInputError(
                f"chunk {chunk.id} has more than {MAX_TEXT_BYTES} bytes of text, Milvus's "
                "limit; split documents into smaller chunks")
        metadata = plain(dict(chunk.metadata))
        rows[chunk.id] = {
            "id": chunk.id, "document_id": chunk.document_id, "text": text,
            "terms": terms, "metadata": metadata, "fm": flat_filter_fields(metadata),
            "position": {"index": chunk.index, "start": chunk.start, "end": chunk.end,
                         "page": chunk.page},
            "dense": vector.tolist()}
    return list(rows.values())


class MilvusWriter:
    """The writing half of :class:`~ragloom.stores.milvus.MilvusStore`."""

    def __init__(self, db: MilvusCollections, metric: str) -> None:
        self.db = db
        self.metric = metric

    def _rows(self, entries: Sequence[VectorEntry]) -> list[dict[str, Any]]:
        rows = chunk_rows(self.db.name, entries, self.db.dimension())
        self.db.ensure(len(rows[0]["dense"]) if rows else None, self.metric)
        return rows

    def _document_ids_of(self, ids: Sequence[str]) -> set[str]:
        if not ids or not self.db.has_chunks():
            return set()
        rows = self.db.call("reading", "get", self.db.chunks, ids=list(ids),
                            output_fields=["document_id"])
        return {row["document_id"] for row in rows}

    def recount(self, document_ids: set[str]) -> None:
        """Set the chunk counts of these documents' records (those that exist)."""
        if not document_ids:
            return
        records = self.db.call("reading", "get", self.db.documents, ids=sorted(document_ids),
                               output_fields=_DOC_FIELDS)
        for record in records:
            data = dict(record["data"])
            data["chunk_count"] = self.db.count(ids_expression("document_id", [record["id"]]))
            self.db.call("writing", "upsert", self.db.documents,
                         [{"id": record["id"], "source": record["source"], "data": data,
                           "v": NO_VECTOR}])

    def add(self, entries: Sequence[VectorEntry]) -> None:
        with self.db.lock:
            rows = self._rows(entries)
            touched = self._document_ids_of([row["id"] for row in rows])
            self.db.call("writing", "upsert", self.db.chunks, rows)
            self.db.wrote(self.db.chunks, len(rows))
            self.recount(touched | {row["document_id"] for row in rows})

    def delete_chunks(self, expression: str) -> tuple[int, set[str]]:
        """Delete the chunks matching ``expression``; how many, and their documents."""
        if not self.db.has_chunks():
            return 0, set()
        found = self.db.call("reading", "query", self.db.chunks, filter=expression,
                             output_fields=["id", "document_id"])
        if not found:
            return 0, set()
        self.db.call("deleting", "delete", self.db.chunks,
                     filter=ids_expression("id", [row["id"] for row in found]))
        return len(found), {row["document_id"] for row in found}

    def delete(self, ids: Sequence[str]) -> int:
        with self.db.lock:
            removed, documents = self.delete_chunks(ids_expression("id", list(ids)))
            self.recount(documents)
            return removed

    def delete_where(self, filters: MetadataFilters | None) -> int:
        with self.db.lock:
            if self.db.info() is None:
                return 0
            removed, documents = self.delete_chunks(
                compile_expression(filters) or "id != \"\"")
            if filters is None:
                self.db.call("deleting", "delete", self.db.documents,
                             filter=f"id != \"{INFO_ID}\"")
                return removed
            self.recount(documents)
            counted = self.db.call("reading", "get", self.db.documents,
                                   ids=sorted(documents), output_fields=_DOC_FIELDS)
            empty = [row["id"] for row in counted if int(row["data"]["chunk_count"]) == 0]
            if empty:
                self.db.call("deleting", "delete", self.db.documents,
                             filter=ids_expression("id", empty))
            return removed

    def replace_documents(self, items: Sequence[tuple[Document, Sequence[VectorEntry]]],
                          settings: str) -> None:
        """Store documents and their chunks, each replacing any earlier document with
        its source (or id) and all of its chunks; records are written last."""
        for document, entries in items:
            check_document_entries(document, entries)
        if not items:
            return
        with self.db.lock:
            rows = self._rows([entry for _, entries in items for entry in entries])
            sources = [document.source for document, _ in items]
            ids = [document.id for document, _ in items]
            if len(set(sources)) < len(sources) or len(set(ids)) < len(ids) or len(rows) < sum(
                    len({e.id for e in entries}) for _, entries in items):
                # A source, document or chunk twice: one after another, as asked.
                for item in items:
                    self.replace_documents([item], settings)
                return
            old = self.db.call(
                "reading", "query", self.db.documents,
                filter=f"source in [{', '.join(map(string_literal, sources))}] or "
                       f"{ids_expression('id', ids)}",
                output_fields=["id"])
            doomed = sorted({row["id"] for row in old} | set(ids))
            if rows:
                self.db.call("writing", "upsert", self.db.chunks, rows)
                self.db.wrote(self.db.chunks, len(rows))
            stale = ids_expression("document_id", doomed)
            if rows:
                stale += f" and not ({ids_expression('id', [row['id'] for row in rows])})"
            # By expression: one call (and one scan on Milvus Lite), not a query first.
            self.db.call("deleting", "delete", self.db.chunks, filter=stale)
            others = sorted(set(doomed) - set(ids))
            if others:
                self.db.call("deleting", "delete", self.db.documents,
                             filter=ids_expression("id", others))
            self.db.call("writing", "upsert", self.db.documents, [
                {"id": document.id, "source": document.source, "v": NO_VECTOR,
                 "data": {"content_hash": str(document.metadata.get("content_hash", "")),
                          "settings": settings, "metadata": plain(dict(document.metadata)),
                          "chunk_count": len({entry.id for entry in entries})}}
                for document, entries in items])
            self.db.wrote(self.db.documents, len(items))

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        with self.db.lock:
            if self.db.info() is None:
                return 0
            found = self.db.call("reading", "get", self.db.documents,
                                 ids=[i for i in document_ids if i != INFO_ID],
                                 output_fields=["id"])
            self.delete_chunks(ids_expression("document_id", list(document_ids)))
            if found:
                self.db.call("deleting", "delete", self.db.documents,
                             filter=ids_expression("id", [row["id"] for row in found]))
            return len(found)


__all__ = ["MilvusWriter", "chunk_rows"]

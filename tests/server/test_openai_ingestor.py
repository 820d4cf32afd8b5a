"""VectorStoreIngestor: the files of one request go through one stream (one pipeline
run per vector store), however many there are, and each ends with its own status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.protocols import Chunker
from ragloom.server.v1.chunking import AUTO
from ragloom.server.v1.collections import VectorStoreCollections
from ragloom.server.v1.db import MetaDB
from ragloom.server.v1.ingest import VectorStoreIngestor
from ragloom.testing import HashingEmbedder


class _Counting(VectorStoreCollections):
    def __init__(self, path: str) -> None:
        super().__init__(path, HashingEmbedder(16))
        self.streams = 0

    def knowledge_base(self, vs_id: str, chunker: Chunker | None = None) -> VectorKnowledgeBase:
        self.streams += 1
        return super().knowledge_base(vs_id, chunker)


def _files(db: MetaDB, count: int) -> list[tuple[str, str]]:
    with db.write() as conn:
        conn.execute("INSERT INTO oai_vector_stores (id, tenant, created_at, last_active_at, "
                     "metadata) VALUES ('vs_1', 't', 0, 0, '{}')")
        for number in range(count):
            file_id = f"file-{number:04d}"
            data = b"" if number == 7 else f"Abstract {number}.\n\nIt says {number}.".encode()
            conn.execute("INSERT INTO oai_files VALUES (?, 't', ?, 'assistants', ?, 0, NULL)",
                         (file_id, f"{number}.txt", len(data)))
            conn.execute("INSERT INTO oai_file_data VALUES (?, ?)", (file_id, data))
            conn.execute("INSERT INTO oai_vs_files (vs_id, file_id, tenant, status, "
                         "attributes, chunking, created_at) VALUES ('vs_1', ?, 't', "
                         "'in_progress', '{}', ?, 0)", (file_id, json.dumps(AUTO)))
    return [("vs_1", f"file-{number:04d}") for number in range(count)]


def test_one_request_is_one_stream_and_every_file_ends(tmp_path: Path) -> None:
    db = MetaDB(str(tmp_path / "openai.sqlite"))
    collections = _Counting(str(tmp_path / "vectors.sqlite"))
    ingestor = VectorStoreIngestor(db, collections)
    items = _files(db, 600)  # more than the 512 a group held before
    ingestor.submit("t", items)
    ingestor.ensure_started()
    try:
        assert ingestor.wait_idle(120)
    finally:
        ingestor.stop()
    rows = {r["file_id"]: r for r in db.rows("SELECT * FROM oai_vs_files")}
    assert collections.streams == 1
    assert [f for f, r in rows.items() if r["status"] != "completed"] == ["file-0007"]
    assert json.loads(rows["file-0007"]["last_error"])["code"] == "invalid_file"
    assert rows["file-0003"]["usage_bytes"] == len(b"Abstract 3.\n\nIt says 3.")
    store: Any = collections.store("vs_1")
    assert len(store.list_documents()) == 599

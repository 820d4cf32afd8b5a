"""Files still being attached when the server stops are ingested when it starts again,
once each."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import openai

from ragloom.testing import HashingEmbedder
from ragloom.types import Embedding
from tests.server.openai_support import make_app, serve


class StuckEmbedder(HashingEmbedder):
    """Never finishes embedding documents until released (a server that dies mid-batch)."""

    def __init__(self) -> None:
        super().__init__(64)
        self.release = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> list[Embedding]:
        self.release.wait()
        return super().embed_documents(texts)


def test_attach_resumes_after_restart(tmp_path: Path) -> None:
    stuck = StuckEmbedder()
    with serve(make_app(tmp_path, stuck, None)) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="key-a", max_retries=0)
        vs = client.vector_stores.create(name="docs")
        ids = [client.files.create(file=(f"{i}.txt", f"Walrus fact {i}.".encode()),
                                   purpose="assistants").id for i in range(3)]
        batch = client.vector_stores.file_batches.create(vector_store_id=vs.id, file_ids=ids)
        assert batch.status == "in_progress"
    try:
        with serve(make_app(tmp_path, HashingEmbedder(64), None)) as url:
            client = openai.OpenAI(base_url=f"{url}/v1", api_key="key-a", max_retries=0)
            deadline = time.monotonic() + 20
            while client.vector_stores.retrieve(vs.id).file_counts.completed < 3:
                assert time.monotonic() < deadline, "the batch did not resume"
                time.sleep(0.05)
            done = client.vector_stores.file_batches.retrieve(batch.id, vector_store_id=vs.id)
            assert done.status == "completed" and done.file_counts.completed == 3
            hits = client.vector_stores.search(vs.id, query="walrus fact", max_num_results=10)
            assert sorted(h.file_id for h in hits.data) == sorted(ids)  # once each
    finally:
        stuck.release.set()

"""The issue's findings with the real bundled MiniLM behind ``ragloom serve``: the
model accepted under its upstream name, token arrays embedded by it, and
``score_threshold: 0.7`` keeping a related question's file and dropping every file for
an unrelated one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openai
import pytest

from tests.server.conftest import start_server

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
UPSTREAM = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.mark.integration
@pytest.mark.slow
def test_thresholds_and_names_with_the_bundled_minilm(tmp_path: Path) -> None:
    import bpe_openai

    server = start_server(tmp_path / "ragloom.db", embedder="local:all-MiniLM-L6-v2-int8",
                          llm="none")
    try:
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="any", max_retries=0)
        vs = client.vector_stores.create(name="handbook",
                                         extra_body={"embedding_model": UPSTREAM})
        for path in sorted(SAMPLES.iterdir()):
            fid = client.files.create(file=(path.name, path.read_bytes()),
                                      purpose="assistants").id
            client.vector_stores.files.create_and_poll(vector_store_id=vs.id, file_id=fid,
                                                       poll_interval_ms=50)
        related = client.vector_stores.search(
            vs.id, query="How long is the unpaid lunch break?",
            ranking_options={"score_threshold": 0.7})
        assert related.data and related.data[0].filename == "staff-handbook.md"
        assert all(hit.score >= 0.7 for hit in related.data)
        unrelated_query = "volcanic obsidian forms when lava cools quickly"
        assert client.vector_stores.search(vs.id, query=unrelated_query).data
        assert client.vector_stores.search(
            vs.id, query=unrelated_query, ranking_options={"score_threshold": 0.7}).data == []

        text = "unpaid lunch break"
        ids = list(bpe_openai.get_encoding("cl100k_base").encode(text))
        by_ids = client.embeddings.create(model=UPSTREAM, input=[ids], encoding_format="float")
        by_text = client.embeddings.create(model="local:all-MiniLM-L6-v2-int8", input=text,
                                           encoding_format="float")
        np.testing.assert_allclose(by_ids.data[0].embedding, by_text.data[0].embedding,
                                   rtol=1e-5, atol=1e-6)
    finally:
        server.stop()

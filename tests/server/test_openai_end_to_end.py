"""End to end with the real bundled models: the official client uploads a policy,
attaches it, searches it and gets a cited answer from the bundled language model."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from tests.server.openai_support import make_app, serve

pytestmark = [pytest.mark.integration, pytest.mark.slow]

POLICY = ("Lunch policy\n\nThe unpaid lunch break is 30 minutes long and is taken between "
          "noon and two.\n\nOvertime must be approved by a manager in advance.")
VPN = "Remote access\n\nConnect to the company VPN before opening the payroll system."


def test_real_models_answer_with_a_citation(tmp_path: Path) -> None:
    from ragloom.config import build_embedder, build_model, load_settings

    embedder = build_embedder(load_settings({}))
    model = build_model(load_settings({"llm": "local:smollm2"}))
    assert model is not None
    with serve(make_app(tmp_path, embedder, model, max_answer_tokens=40)) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="key-e2e", max_retries=0)
        vs = client.vector_stores.create(name="handbook")
        ids = {}
        for name, text in (("policy.txt", POLICY), ("vpn.txt", VPN)):
            ids[name] = client.files.create(file=(name, text.encode()),
                                            purpose="assistants").id
        batch = client.vector_stores.file_batches.create_and_poll(
            vector_store_id=vs.id, file_ids=list(ids.values()), poll_interval_ms=50)
        assert batch.file_counts.completed == 2
        for mode in ("vector", "keyword", "hybrid"):
            hits = client.vector_stores.search(vs.id, query="How long is the lunch break?",
                                               extra_body={"search_mode": mode})
            assert hits.data[0].file_id == ids["policy.txt"], mode
        embedded = client.embeddings.create(model=embedder.name, input="lunch break")
        assert len(embedded.data[0].embedding) == embedder.dimension
        response = client.responses.create(
            model=model.name, input="How long is the unpaid lunch break?",
            tools=[{"type": "file_search", "vector_store_ids": [vs.id]}],
            include=["file_search_call.results"], max_output_tokens=40)
        assert response.output_text.strip()
        annotations = response.output[1].content[0].annotations  # type: ignore[union-attr]
        assert annotations, response.output_text
        assert annotations[0].file_id == ids["policy.txt"]  # type: ignore[union-attr]
        assert response.usage is not None and response.usage.output_tokens > 0

"""One end-to-end ask through the server with the real bundled models: upload, the
worker ingests with MiniLM, and SmolLM2 answers over SSE with sources first."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.server.conftest import sse_events, start_server, wait_batch

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.mark.integration
@pytest.mark.slow
def test_streamed_answer_with_the_bundled_models(tmp_path: Path) -> None:
    server = start_server(tmp_path / "ragloom.db", embedder="local:all-MiniLM-L6-v2-int8",
                          llm="local:smollm2")
    try:
        client = server.client()
        client.post("/api/knowledge-bases", json={"name": "handbook"})
        files = [("files", (path.name, path.read_bytes(), "text/markdown"))
                 for path in sorted(SAMPLES.iterdir())]
        batch = client.post("/api/knowledge-bases/handbook/documents", files=files).json()
        assert wait_batch(client, batch["id"], timeout=300)["status"] == "completed"
        question = {"question": "How long is the unpaid lunch break?",
                    "knowledge_bases": ["handbook"], "stream": True}
        with client.stream("POST", "/api/ask", json=question, timeout=300) as response:
            events = sse_events("".join(response.iter_text()))
        names = [name for name, _ in events]
        assert names[0] == "sources" and names[-1] == "done", names
        assert events[0][1]["sources"][0]["source"] == "staff-handbook.md"
        done = events[-1][1]
        assert "30" in done["answer"], done["answer"]
        assert done["usage"]["output_tokens"] > 0
        assert done["model"].startswith("local:") or "smollm" in done["model"].lower()
    finally:
        server.stop()

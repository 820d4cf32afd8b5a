"""Run by ``test_llamastack_07.py`` with a Python >= 3.12 that has
``llama-stack-client`` 0.7.x: the client's own methods against a ragloom server.

Usage: ``python llamastack_07_script.py BASE_URL API_KEY MODEL VECTOR_STORE_ID KB``;
prints one JSON object with what each call returned.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from llama_stack_client import LlamaStackClient
from llama_stack_client.lib.agents.agent import Agent


def turn_summary(chunks: Any) -> dict[str, Any]:
    events, steps, text, files = [], [], "", []
    for chunk in chunks:
        event = chunk.event
        events.append(type(event).__name__)
        step_type = getattr(event, "step_type", None)
        if type(event).__name__ == "StepStarted":
            steps.append(step_type)
        delta = getattr(event, "delta", None)
        if getattr(delta, "text", None):
            text += delta.text
        if chunk.response is not None:
            for item in chunk.response.output:
                for result in getattr(item, "results", None) or []:
                    files.append(result.filename)
    return {"events": events, "steps": steps, "text": text, "files": files}


def main() -> None:
    url, key, model, vs_id, kb = sys.argv[1:6]
    client = LlamaStackClient(base_url=url, api_key=key, max_retries=0)
    out: dict[str, Any] = {}

    client.vector_io.insert(vector_store_id=kb, chunks=[{
        "chunk_id": "parking-1", "content": "Parking permits come from the front desk.",
        "metadata": {"document_id": "parking.md"},
        "chunk_metadata": {"document_id": "parking.md", "chunk_id": "parking-1"},
        "embedding": [0.0], "embedding_dimension": 1, "embedding_model": "any"}])
    found = client.vector_io.query(vector_store_id=kb, query="parking permits",
                                   params={"max_chunks": 1})
    chunk = found.chunks[0]
    out["vector_io_kb"] = {"document_id": chunk.chunk_metadata.document_id,
                           "chunk_id": chunk.chunk_id, "model": chunk.embedding_model,
                           "dimension": chunk.embedding_dimension}
    found = client.vector_io.query(vector_store_id=vs_id, query="unpaid lunch break",
                                   params={"max_chunks": 2})
    out["vector_io_vs"] = [c.content for c in found.chunks]

    page = client.vector_stores.search(vector_store_id=vs_id, query="lunch break",
                                       ranking_options={"ranker": "auto",
                                                        "score_threshold": 0.0})
    out["search"] = [r.filename for r in page.data]

    file_search = Agent(client, model=model, instructions="Answer from the handbook.",
                        tools=[{"type": "file_search", "vector_store_ids": [vs_id]}])
    session = file_search.create_session("file-search")
    out["session_is_conversation"] = client.conversations.retrieve(session).id == session
    out["stream"] = turn_summary(file_search.create_turn(
        messages=[{"role": "user", "content": "How long is the unpaid lunch break?"}],
        session_id=session, stream=True))
    whole = file_search.create_turn(
        messages=[{"role": "user", "content": "And the VPN?"}], session_id=session,
        stream=False)
    out["whole"] = whole.output_text
    items = client.conversations.items.list(session)
    out["conversation_items"] = len(items.data)

    rag = Agent(client, model=model, instructions="You are a helpful assistant.", tools=[
        {"name": "builtin::rag", "args": {
            "vector_db_ids": [kb],
            "query_config": {"max_chunks": 2, "mode": "hybrid",
                             "ranker": {"type": "rrf", "impact_factor": 60.0}}}}])
    out["rag_stream"] = turn_summary(rag.create_turn(
        messages=[{"role": "user", "content": "How many days of annual leave?"}],
        session_id=rag.create_session("rag"), stream=True))
    print(json.dumps(out))


if __name__ == "__main__":
    main()

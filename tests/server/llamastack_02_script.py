"""Run by ``test_llamastack_py312.py`` with a Python >= 3.12 that has
``llama-stack-client`` 0.2.23 (the specification's era): its own methods against a
ragloom server.

Usage: ``python llamastack_02_script.py BASE_URL API_KEY MODEL``; prints one JSON
object with what each call returned.
"""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stdout
from typing import Any

from llama_stack_client import LlamaStackClient
from llama_stack_client.lib.agents.agent import Agent
from llama_stack_client.lib.agents.event_logger import EventLogger

DOCS = [{"document_id": "lunch.md", "content": "The unpaid lunch break is 30 minutes.",
         "mime_type": "text/plain", "metadata": {}},
        {"document_id": "leave.md", "content": "Annual leave is 25 days a year.",
         "mime_type": "text/plain", "metadata": {}}]


def main() -> None:
    url, key, model = sys.argv[1:4]
    client = LlamaStackClient(base_url=url, api_key=key, max_retries=0)
    out: dict[str, Any] = {}
    db = client.vector_dbs.register(vector_db_id="handbook", embedding_model="m",
                                    vector_db_name="Handbook")
    out["registered"] = [db.identifier, db.vector_db_name]
    client.tool_runtime.rag_tool.insert(documents=DOCS, vector_db_id="handbook",
                                        chunk_size_in_tokens=128)
    client.vector_io.insert(vector_db_id="handbook", chunks=[{
        "content": "Parking permits come from the front desk.",
        "metadata": {"document_id": "parking.md"},
        "chunk_metadata": {"document_id": "parking.md", "chunk_id": "p1"}}])
    found = client.vector_io.query(vector_db_id="handbook", query="parking permits",
                                   params={"max_chunks": 1})
    chunk = found.chunks[0]
    out["vector_io"] = [chunk.metadata["document_id"], chunk.chunk_metadata.chunk_id]
    rag = client.tool_runtime.rag_tool.query(content="annual leave",
                                             vector_db_ids=["handbook"],
                                             query_config={"max_chunks": 1})
    out["rag_query"] = rag.metadata["document_ids"]
    out["toolgroups"] = [g.identifier for g in client.toolgroups.list()]
    invoked = client.tool_runtime.invoke_tool(tool_name="knowledge_search", kwargs={
        "query": "lunch break", "vector_db_ids": ["handbook"]})
    out["invoke"] = invoked.metadata["document_ids"][0]
    agent = Agent(client, agent_config={
        "model": model, "instructions": "You are a helpful assistant.",
        "enable_session_persistence": False, "max_infer_iters": 2,
        "toolgroups": [{"name": "builtin::rag", "args": {
            "vector_db_ids": ["handbook"],
            "query_config": {"max_chunks": 1, "mode": "hybrid",
                             "ranker": {"type": "rrf", "impact_factor": 60.0}}}}]})
    session = agent.create_session("spec")
    printed = io.StringIO()
    with redirect_stdout(printed):
        for line in EventLogger().log(agent.create_turn(
                messages=[{"role": "user", "content": "How long is the lunch break?"}],
                session_id=session, stream=True)):
            line.print()
    out["log"] = printed.getvalue()
    out["agents"] = len(client.agents.list().data)
    out["sessions"] = len(client.agents.session.list(agent_id=agent.agent_id).data)
    store = client.vector_stores.create(name="policies")  # under /v1/openai/v1
    out["vector_store"] = store.id
    print(json.dumps(out))


if __name__ == "__main__":
    main()

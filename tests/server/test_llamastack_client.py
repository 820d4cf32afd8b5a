"""Llama Stack's 0.2 client (``llama-stack-client`` 0.2.12 in this venv), through its
own methods, against the real app on 127.0.0.1: the specification's Vector IO
(register, insert, query), RAG tool (insert, query) and agents, the tool runtime, the
``/v1/openai/v1`` alias, restarts and tenants."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

llama_stack_client = pytest.importorskip("llama_stack_client")

from llama_stack_client import LlamaStackClient, NotFoundError  # noqa: E402
from llama_stack_client.lib.agents.agent import Agent  # noqa: E402
from llama_stack_client.lib.agents.event_logger import EventLogger  # noqa: E402

from tests.server.conftest import LiveServer, start_server  # noqa: E402

MODEL = "fake:echo"  # repeats its prompt: the passages the turn retrieved, then the question
DOCS = [
    {"document_id": "lunch.md", "content": "The unpaid lunch break is 30 minutes.",
     "mime_type": "text/plain", "metadata": {"dept": "hr"}},
    {"document_id": "vpn.md", "content": "Connect to the VPN before opening payroll.",
     "mime_type": "text/plain", "metadata": {}},
    {"document_id": "leave.md", "content": "Annual leave is 25 days for every employee.",
     "mime_type": "text/plain", "metadata": {}},
]
RAG = {"name": "builtin::rag", "args": {
    "vector_db_ids": ["handbook"],
    "query_config": {"max_chunks": 2, "mode": "hybrid",
                     "ranker": {"type": "rrf", "impact_factor": 60.0},
                     "max_tokens_in_context": 512,
                     "chunk_template": "Result {index}\nContent: {chunk.content}\n"
                                       "Metadata: {metadata}\n"}}}


def start(db: Path) -> tuple[LiveServer, dict[str, str]]:
    from ragloom.server.auth import KeyStore
    from ragloom.server.db import ServerDatabase

    database = ServerDatabase(db.parent / "server.db")
    store = KeyStore(database)
    keys = {name: store.create_key(name).key for name in ("alice", "bob")}
    database.close()
    return start_server(db, rate_limit=0), keys


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[LiveServer, dict[str, str], Path]]:
    db = tmp_path_factory.mktemp("llamastack") / "ragloom.db"
    server, keys = start(db)
    client = LlamaStackClient(base_url=server.url, api_key=keys["alice"], max_retries=0)
    registered = client.vector_dbs.register(vector_db_id="handbook",
                                            embedding_model="all-MiniLM-L6-v2")
    assert registered.identifier == "handbook" and registered.type == "vector_db"
    client.tool_runtime.rag_tool.insert(documents=DOCS, vector_db_id="handbook",
                                        chunk_size_in_tokens=128)
    yield server, keys, db
    server.stop()


def alice(served: tuple[LiveServer, dict[str, str], Path]) -> LlamaStackClient:
    server, keys, _ = served
    return LlamaStackClient(base_url=server.url, api_key=keys["alice"], max_retries=0)


def test_vector_dbs_register_list_get_and_unregister(served: Any) -> None:
    client = alice(served)
    listed = client.vector_dbs.list()
    assert [db.identifier for db in listed] == ["handbook"]
    assert listed[0].embedding_model == "fake:hashing-64"
    assert listed[0].embedding_dimension == 64
    assert client.vector_dbs.retrieve("handbook").identifier == "handbook"
    client.vector_dbs.register(vector_db_id="scratch", embedding_model="x",
                               embedding_dimension=64)
    client.vector_io.insert(vector_db_id="scratch", chunks=[
        {"content": "Temporary note about parking.", "metadata": {"document_id": "note"}}])
    assert client.vector_io.query(vector_db_id="scratch", query="parking").chunks
    client.vector_dbs.unregister("scratch")
    with pytest.raises(NotFoundError):
        client.vector_dbs.retrieve("scratch")
    assert [db.identifier for db in client.vector_dbs.list()] == ["handbook"]
    with pytest.raises(llama_stack_client.BadRequestError, match="embedding_dimension"):
        client.vector_dbs.register(vector_db_id="wrong", embedding_model="m",
                                   embedding_dimension=384)


def test_vector_io_insert_and_query(served: Any) -> None:
    client = alice(served)
    client.vector_io.insert(vector_db_id="handbook", chunks=[
        {"content": "Parking permits are issued by the front desk.",
         "metadata": {"document_id": "parking.md", "topic": "parking"}}])
    found = client.vector_io.query(vector_db_id="handbook", query="parking permits",
                                   params={"max_chunks": 1})
    assert len(found.chunks) == len(found.scores) == 1
    chunk = found.chunks[0]
    assert chunk.metadata["document_id"] == "parking.md"
    assert chunk.metadata["topic"] == "parking"
    raw = chunk.model_dump()
    assert raw["chunk_metadata"]["document_id"] == "parking.md"
    assert raw["embedding_model"] == "fake:hashing-64" and raw["embedding_dimension"] == 64
    keyword = client.vector_io.query(vector_db_id="handbook", query="VPN",
                                     params={"mode": "keyword"})
    assert keyword.chunks[0].metadata["document_id"] == "vpn.md"


def test_rag_tool_query(served: Any) -> None:
    client = alice(served)
    result = client.tool_runtime.rag_tool.query(
        content="How many days of annual leave?", vector_db_ids=["handbook"],
        query_config=RAG["args"]["query_config"])  # type: ignore[index]
    texts = [item.text for item in result.content]  # type: ignore[union-attr]
    assert texts[0].startswith("knowledge_search tool found")
    assert result.metadata["document_ids"][0] == "leave.md"
    assert "Annual leave is 25 days" in texts[1]


def test_toolgroups_tools_and_invoke(served: Any) -> None:
    client = alice(served)
    assert [g.identifier for g in client.toolgroups.list()] == ["builtin::rag"]
    assert client.toolgroups.get("builtin::rag").provider_id == "rag-runtime"
    tools = client.tools.list(toolgroup_id="builtin::rag")
    assert [t.identifier for t in tools] == ["knowledge_search"]
    assert [t.name for t in client.tool_runtime.list_tools(tool_group_id="builtin::rag")] == [
        "knowledge_search"]
    result = client.tool_runtime.invoke_tool(tool_name="knowledge_search", kwargs={
        "query": "unpaid lunch break", "vector_db_ids": ["handbook"],
        "query_config": {"max_chunks": 1}})
    assert result.metadata is not None
    assert result.metadata["document_ids"] == ["lunch.md"]
    assert "30 minutes" in str(result.content)
    with pytest.raises(NotFoundError):
        client.tool_runtime.invoke_tool(tool_name="web_search", kwargs={"query": "x"})
    with pytest.raises(llama_stack_client.BadRequestError, match="vector_db_ids"):
        client.tool_runtime.invoke_tool(tool_name="knowledge_search", kwargs={"query": "x"})


def make_agent(client: LlamaStackClient, **config: Any) -> Agent:
    agent_config: Any = {"model": MODEL, "instructions": "You are a helpful assistant.",
                         "enable_session_persistence": False, "toolgroups": [RAG],
                         "max_infer_iters": 3, **config}
    return Agent(client, agent_config=agent_config)


def test_agent_turn_streams_a_knowledge_search_step(served: Any) -> None:
    client = alice(served)
    agent = make_agent(client)
    session_id = agent.create_session("handbook-questions")
    turn = agent.create_turn(messages=[{"role": "user",
                                        "content": "How long is the unpaid lunch break?"}],
                             session_id=session_id, stream=True)
    printed = io.StringIO()
    with redirect_stdout(printed):
        for line in EventLogger().log(turn):
            line.print()
    log = printed.getvalue()
    assert "tool_execution> Tool:knowledge_search Args:" in log
    assert "tool_execution> Tool:knowledge_search Response:" in log
    assert "lunch.md" in log  # the step's results name the file they came from
    assert "inference> " in log and "30 minutes" in log
    session = client.agents.session.retrieve(session_id=session_id, agent_id=agent.agent_id)
    assert len(session.turns) == 1
    steps = session.turns[0].steps
    assert [s.step_type for s in steps] == ["tool_execution", "inference"]
    response = steps[0].tool_responses[0]  # type: ignore[union-attr]
    assert response.tool_name == "knowledge_search"
    assert response.metadata is not None and response.metadata["document_ids"][0] == "lunch.md"


def test_agent_turn_without_streaming_keeps_the_session(served: Any) -> None:
    client = alice(served)
    agent = make_agent(client)
    session_id = agent.create_session("two-turns")
    first = agent.create_turn(messages=[{"role": "user", "content": "Annual leave days?"}],
                              session_id=session_id, stream=False)
    assert "25 days" in str(first.output_message.content)  # type: ignore[union-attr]
    second = agent.create_turn(messages=[{"role": "user", "content": "And the VPN?"}],
                               session_id=session_id, stream=False)
    tool_step = second.steps[0]  # type: ignore[union-attr]
    assert tool_step.tool_responses[0].metadata["document_ids"][0] == "vpn.md"  # type: ignore[union-attr]
    session = client.agents.session.retrieve(session_id=session_id, agent_id=agent.agent_id)
    assert [t.turn_id for t in session.turns] == [first.turn_id, second.turn_id]  # type: ignore[union-attr]
    got = client.agents.turn.retrieve(turn_id=first.turn_id, agent_id=agent.agent_id,  # type: ignore[union-attr]
                                      session_id=session_id)
    assert got.output_message.content == first.output_message.content  # type: ignore[union-attr]
    step = client.agents.steps.retrieve(step_id=tool_step.step_id, turn_id=second.turn_id,  # type: ignore[union-attr]
                                        session_id=session_id, agent_id=agent.agent_id)
    assert step.step.step_type == "tool_execution"
    client.agents.session.delete(session_id=session_id, agent_id=agent.agent_id)
    with pytest.raises(NotFoundError):
        client.agents.session.retrieve(session_id=session_id, agent_id=agent.agent_id)
    client.agents.delete(agent.agent_id)
    with pytest.raises(NotFoundError):
        client.agents.session.create(agent_id=agent.agent_id, session_name="gone")


def test_agent_config_errors(served: Any) -> None:
    client = alice(served)
    bad = llama_stack_client.BadRequestError
    with pytest.raises(bad, match="builtin::websearch"):
        make_agent(client, toolgroups=["builtin::websearch"])
    with pytest.raises(bad, match="mode"):
        make_agent(client, toolgroups=[{"name": "builtin::rag", "args": {
            "vector_db_ids": ["handbook"], "query_config": {"mode": "semantic"}}}])
    with pytest.raises(NotFoundError, match="does not exist"):
        make_agent(client, model="meta-llama/Llama-3.2-3B-Instruct")
    with pytest.raises(NotFoundError):  # a vector db the tenant does not have
        agent = make_agent(client, toolgroups=[{"name": "builtin::rag",
                                                "args": {"vector_db_ids": ["nope"]}}])
        agent.create_turn(messages=[{"role": "user", "content": "x"}],
                          session_id=agent.create_session("s"), stream=False)


def test_openai_calls_under_the_0_2_prefix(served: Any) -> None:
    client = alice(served)
    store = client.vector_stores.create(name="policies")
    assert store.id.startswith("vs_")
    assert store.id in [s.id for s in client.vector_stores.list().data]
    found = client.vector_stores.search(vector_store_id=store.id, query="anything")
    assert found.data == []
    completion: Any = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "echo this"}])
    assert "echo this" in completion.choices[0].message.content


def test_another_tenant_sees_nothing(served: Any) -> None:
    server, keys, _ = served
    owner = alice(served)
    agent = make_agent(owner)
    session_id = agent.create_session("private")
    bob = LlamaStackClient(base_url=server.url, api_key=keys["bob"], max_retries=0)
    assert bob.vector_dbs.list() == []
    for call in (
        lambda: bob.vector_dbs.retrieve("handbook"),
        lambda: bob.vector_dbs.unregister("handbook"),
        lambda: bob.vector_io.query(vector_db_id="handbook", query="lunch"),
        lambda: bob.tool_runtime.invoke_tool(tool_name="knowledge_search", kwargs={
            "query": "lunch", "vector_db_ids": ["handbook"]}),
        lambda: bob.agents.delete(agent.agent_id),
        lambda: bob.agents.session.create(agent_id=agent.agent_id, session_name="x"),
        lambda: bob.agents.session.retrieve(session_id=session_id, agent_id=agent.agent_id),
        lambda: bob.agents.turn.create(session_id=session_id, agent_id=agent.agent_id,
                                       messages=[{"role": "user", "content": "hi"}],
                                       stream=False),
    ):
        with pytest.raises(NotFoundError):
            call()
    assert owner.vector_dbs.retrieve("handbook").identifier == "handbook"


def test_agents_and_vector_dbs_survive_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "ragloom.db"
    server, keys = start(db)
    try:
        client = LlamaStackClient(base_url=server.url, api_key=keys["alice"], max_retries=0)
        client.vector_dbs.register(vector_db_id="kept", embedding_model="m")
        client.tool_runtime.rag_tool.insert(documents=DOCS[:1], vector_db_id="kept",
                                            chunk_size_in_tokens=64)
        agent = make_agent(client, toolgroups=[{"name": "builtin::rag",
                                                "args": {"vector_db_ids": ["kept"]}}])
        session_id = agent.create_session("kept")
        agent.create_turn(messages=[{"role": "user", "content": "lunch?"}],
                          session_id=session_id, stream=False)
    finally:
        server.stop()
    server = start_server(db, rate_limit=0)
    try:
        client = LlamaStackClient(base_url=server.url, api_key=keys["alice"], max_retries=0)
        assert [d.identifier for d in client.vector_dbs.list()] == ["kept"]
        session = client.agents.session.retrieve(session_id=session_id,
                                                 agent_id=agent.agent_id)
        assert len(session.turns) == 1
        stored: Any = client.get(f"/v1/agents/{agent.agent_id}", cast_to=object)
        assert stored["agent_config"]["model"] == MODEL
    finally:
        server.stop()


@pytest.mark.integration
@pytest.mark.slow
def test_spec_agent_with_the_bundled_models(tmp_path: Path) -> None:
    """The specification's agent example, end to end with MiniLM and SmolLM2."""
    samples = Path(__file__).resolve().parents[2] / "samples"
    server = start_server(tmp_path / "ragloom.db", embedder="local:all-MiniLM-L6-v2-int8",
                          llm="local:smollm2", rate_limit=0)
    try:
        client = LlamaStackClient(base_url=server.url, max_retries=0, timeout=300)
        client.vector_dbs.register(vector_db_id="handbook", embedding_model="all-MiniLM-L6-v2",
                                   embedding_dimension=384)
        client.tool_runtime.rag_tool.insert(
            vector_db_id="handbook", chunk_size_in_tokens=256,
            documents=[{"document_id": path.name, "content": path.read_text(),
                        "mime_type": "text/markdown", "metadata": {}}
                       for path in sorted(samples.iterdir())])
        agent = Agent(client, agent_config={
            "model": "local:smollm2", "instructions": "You are a helpful assistant.",
            "enable_session_persistence": False, "max_infer_iters": 3,
            "sampling_params": {"max_tokens": 64},
            "toolgroups": [{"name": "builtin::rag", "args": {
                "vector_db_ids": ["handbook"],
                "query_config": {"max_chunks": 3, "mode": "hybrid",
                                 "ranker": {"type": "rrf", "impact_factor": 60.0}}}}]})
        turn: Any = agent.create_turn(
            messages=[{"role": "user", "content": "How long is the unpaid lunch break?"}],
            session_id=agent.create_session("integration"), stream=False)
        search = turn.steps[0].tool_responses[0]
        assert search.metadata["document_ids"][0] == "staff-handbook.md"
        answer = str(turn.output_message.content)
        assert re.search(r"\b30\s*minutes", answer), answer
    finally:
        server.stop()

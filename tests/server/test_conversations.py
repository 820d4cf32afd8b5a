"""The Conversations API and ``/v1/responses`` with ``conversation``, through OpenAI's
own client against the real app: items, history carried into the next answer,
``response_id`` on streamed item and part events, the ``builtin::rag`` tool, and
another tenant's conversation as a 404."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.server.conftest import LiveServer, start_server

MODEL = "fake:echo"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    from ragloom.server.auth import KeyStore
    from ragloom.server.db import ServerDatabase

    db = tmp_path_factory.mktemp("conversations") / "ragloom.db"
    database = ServerDatabase(db.parent / "server.db")
    keys = {name: KeyStore(database).create_key(name).key for name in ("alice", "bob")}
    database.close()
    server = start_server(db, rate_limit=0)
    http = server.client(keys["alice"])
    http.post("/v1/tool-runtime/rag-tool/insert", json={
        "vector_db_id": "kb", "chunk_size_in_tokens": 128, "documents": [
            {"document_id": "leave.md", "content": "Annual leave is 25 days a year."},
            {"document_id": "vpn.md", "content": "Use the VPN for payroll."}]})
    yield server, keys
    server.stop()


def client(served: tuple[LiveServer, dict[str, str]], who: str = "alice") -> openai.OpenAI:
    server, keys = served
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key=keys[who], max_retries=0)


RAG: Any = [{"name": "builtin::rag", "args": {"vector_db_ids": ["kb"],
                                             "query_config": {"max_chunks": 1}}}]


def test_conversation_objects_and_items(served: tuple[LiveServer, dict[str, str]]) -> None:
    alice = client(served)
    conversation = alice.conversations.create(
        metadata={"name": "s1"}, items=[{"type": "message", "role": "user",
                                         "content": "Hello there"}])
    assert conversation.id.startswith("conv_") and conversation.metadata == {"name": "s1"}
    assert alice.conversations.retrieve(conversation.id).id == conversation.id
    items = alice.conversations.items.list(conversation.id, order="asc")
    assert [i.content[0].text for i in items.data] == ["Hello there"]  # type: ignore[union-attr]
    added = alice.conversations.items.create(conversation.id, items=[
        {"type": "message", "role": "assistant", "content": "Hi!"}])
    item_id = added.data[0].id
    got = alice.conversations.items.retrieve(item_id, conversation_id=conversation.id)
    assert got.id == item_id  # type: ignore[union-attr]
    alice.conversations.items.delete(item_id, conversation_id=conversation.id)
    assert len(alice.conversations.items.list(conversation.id).data) == 1
    updated = alice.conversations.update(conversation.id, metadata={"name": "s2"})
    assert updated.metadata == {"name": "s2"}
    assert alice.conversations.delete(conversation.id).deleted is True
    with pytest.raises(openai.NotFoundError):
        alice.conversations.retrieve(conversation.id)


def test_responses_keep_a_conversation(served: tuple[LiveServer, dict[str, str]]) -> None:
    alice = client(served)
    conversation = alice.conversations.create()
    first = alice.responses.create(model=MODEL, input="My name is Ada.",
                                   conversation=conversation.id)
    assert "Ada" in first.output_text
    second = alice.responses.create(model=MODEL, input="How many days of annual leave?",
                                    conversation=conversation.id, tools=RAG,
                                    include=["file_search_call.results"])
    search = next(o for o in second.output if o.type == "file_search_call")
    assert search.results[0].filename == "leave.md"  # type: ignore[union-attr,index]
    assert "25 days" in second.output_text
    model = served[0].state.models.model()  # the fake model keeps what it was sent
    assert any(m.content == "My name is Ada." for m in model.calls[-1])  # the history
    roles = [i.role for i in alice.conversations.items.list(  # type: ignore[union-attr]
        conversation.id, order="asc").data if i.type == "message"]
    assert roles == ["user", "assistant", "user", "assistant"]
    with pytest.raises(openai.BadRequestError, match="not both"):
        alice.responses.create(model=MODEL, input="x", conversation=conversation.id,
                               previous_response_id=first.id)


def test_streamed_item_and_part_events_carry_the_response_id(
        served: tuple[LiveServer, dict[str, str]]) -> None:
    alice = client(served)
    conversation = alice.conversations.create()
    stream = alice.responses.create(model=MODEL, input="Annual leave?", tools=RAG,
                                    conversation=conversation.id, stream=True)
    events = list(stream)
    response_id = events[0].response.id  # type: ignore[union-attr]
    marked = [e for e in events if e.type.startswith(("response.output_item.",
                                                      "response.content_part."))]
    assert len(marked) == 6  # the search item and the message: added/done, part added/done
    assert all(getattr(e, "response_id", None) == response_id for e in marked)
    assert events[-1].type == "response.completed"
    assert len(alice.conversations.items.list(conversation.id).data) == 3


def test_another_tenants_conversation_is_not_found(
        served: tuple[LiveServer, dict[str, str]]) -> None:
    alice, bob = client(served), client(served, "bob")
    conversation = alice.conversations.create(metadata={"secret": "yes"})
    for call in (lambda: bob.conversations.retrieve(conversation.id),
                 lambda: bob.conversations.items.list(conversation.id),
                 lambda: bob.conversations.delete(conversation.id),
                 lambda: bob.responses.create(model=MODEL, input="hi",
                                              conversation=conversation.id)):
        with pytest.raises(openai.NotFoundError):
            call()
    with pytest.raises(openai.NotFoundError):  # alice's knowledge base, asked by bob
        bob.responses.create(model=MODEL, input="leave?", tools=RAG)
    assert alice.conversations.retrieve(conversation.id).metadata == {"secret": "yes"}

"""``responses`` with ``file_search`` through the official client: citations, streaming
(both client styles), stored conversations, errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from ragloom.testing import HashingEmbedder, ScriptedModel
from ragloom.types import ChatMessage
from tests.server.openai_support import make_app, serve

LUNCH = "Lunch policy\n\nThe unpaid lunch break is 30 minutes. Take it between noon and two."
VPN = "Connect to the VPN before opening the payroll system."


def reply(messages: list[ChatMessage]) -> str:
    last = messages[-1].content
    if "lunch break??" in last:  # the questions that ask for a marker: no extra word
        return "The unpaid lunch break is 30 minutes [1]."
    if "VPN" in last and "payroll" in last.split("Question:")[-1]:
        return "Connect to the VPN first."
    return "The unpaid lunch break lasts 30 minutes."


@pytest.fixture(scope="module")
def model() -> ScriptedModel:
    return ScriptedModel([reply], name="fake:scripted")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory,
          model: ScriptedModel) -> Iterator[tuple[openai.OpenAI, dict[str, str]]]:
    app = make_app(tmp_path_factory.mktemp("resp"), HashingEmbedder(128), model)
    with serve(app) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="key-alice", max_retries=0)
        vs = client.vector_stores.create(name="handbook")
        ids = {"vs": vs.id, "url": url}
        for name, text in (("lunch.txt", LUNCH), ("vpn.txt", VPN)):
            fid = client.files.create(file=(name, text.encode()), purpose="assistants").id
            client.vector_stores.files.create_and_poll(vector_store_id=vs.id, file_id=fid,
                                                       poll_interval_ms=20)
            ids[name] = fid
        yield client, ids


def tools(ids: dict[str, str]) -> Any:
    return [{"type": "file_search", "vector_store_ids": [ids["vs"]]}]


def test_citations_without_markers(setup: tuple[openai.OpenAI, dict[str, str]],
                                   model: ScriptedModel) -> None:
    client, ids = setup
    response = client.responses.create(model="fake:scripted", input="How long is lunch?",
                                       tools=tools(ids),
                                       include=["file_search_call.results"])
    # The answer engine checked the model's answer against the passage it cites and
    # shows the supporting sentence; the [n] marker became a file citation.
    assert response.output_text.startswith("The unpaid lunch break lasts 30 minutes.")
    assert "The unpaid lunch break is 30 minutes." in response.output_text
    assert "[1]" not in response.output_text
    call, message = response.output
    assert call.type == "file_search_call" and call.results
    assert call.results[0].file_id == ids["lunch.txt"]
    assert 0 <= (call.results[0].score or 0) <= 1
    annotations = message.content[0].annotations  # type: ignore[union-attr]
    assert annotations and annotations[0].type == "file_citation"
    assert annotations[0].file_id == ids["lunch.txt"]  # type: ignore[union-attr]
    assert annotations[0].filename == "lunch.txt"  # type: ignore[union-attr]
    # Usage is the model's own count of what it was sent and what it wrote.
    assert response.usage is not None
    sent = model.calls[-1]
    assert response.usage.input_tokens == sum(len(m.content.split()) for m in sent)
    assert response.usage.output_tokens == 7
    assert "The unpaid lunch break is 30 minutes" in sent[-1].content


def test_markers_become_annotations(setup: tuple[openai.OpenAI, dict[str, str]]) -> None:
    client, ids = setup
    response = client.responses.create(model="fake:scripted", tools=tools(ids),
                                       input="How long is the unpaid lunch break??")
    text = response.output_text
    assert text == "The unpaid lunch break is 30 minutes."
    call = response.output[0]
    assert call.type == "file_search_call" and call.results is None  # not included
    annotation = response.output[1].content[0].annotations[0]  # type: ignore[union-attr]
    assert annotation.file_id == ids["lunch.txt"]  # type: ignore[union-attr]
    assert annotation.index == len(text)  # type: ignore[union-attr]


def test_streaming_create(setup: tuple[openai.OpenAI, dict[str, str]]) -> None:
    client, ids = setup
    events = list(client.responses.create(model="fake:scripted", tools=tools(ids),
                                          input="How long is the unpaid lunch break??",
                                          stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert kinds.index("response.file_search_call.completed") < kinds.index(
        "response.output_text.delta")
    numbers = [e.sequence_number for e in events]
    assert numbers == list(range(len(events)))
    streamed = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    final = events[-1].response  # type: ignore[union-attr]
    assert streamed == final.output_text == "The unpaid lunch break is 30 minutes."
    # The engine's answer is checked before it is shown: one text delta.
    assert kinds.count("response.output_text.delta") == 1
    annotations = final.output[1].content[0].annotations  # type: ignore[union-attr]
    assert [a.file_id for a in annotations] == [ids["lunch.txt"]]  # type: ignore[union-attr]


def test_streaming_helper(setup: tuple[openai.OpenAI, dict[str, str]]) -> None:
    client, ids = setup
    with client.responses.stream(model="fake:scripted", tools=tools(ids),
                                 input="How long is lunch?") as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == final.output_text
    assert final.output_text.startswith("The unpaid lunch break lasts 30 minutes.")
    annotations = final.output[1].content[0].annotations  # type: ignore[union-attr]
    assert annotations and annotations[0].file_id == ids["lunch.txt"]  # type: ignore[union-attr]


def test_previous_response_id(setup: tuple[openai.OpenAI, dict[str, str]],
                              model: ScriptedModel) -> None:
    client, ids = setup
    first = client.responses.create(model="fake:scripted", input="How long is lunch?",
                                    tools=tools(ids))
    second = client.responses.create(model="fake:scripted", previous_response_id=first.id,
                                     input="And what about payroll and the VPN?",
                                     tools=tools(ids))
    sent = model.calls[-1]
    assert [m.role for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1].content == "How long is lunch?"
    assert sent[2].content == first.output_text
    assert second.previous_response_id == first.id
    assert client.responses.retrieve(first.id).output_text == first.output_text
    items = client.responses.input_items.list(second.id)
    assert [i.content[0].text for i in items.data] == [  # type: ignore[union-attr]
        "And what about payroll and the VPN?"]
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="fake:scripted", input="x",
                                previous_response_id="resp_missing")
    bob = openai.OpenAI(base_url=f"{ids['url']}/v1", api_key="key-bob", max_retries=0)
    with pytest.raises(openai.NotFoundError):
        bob.responses.retrieve(first.id)
    with pytest.raises(openai.NotFoundError):
        bob.responses.create(model="fake:scripted", input="x", tools=tools(ids))
    assert client.responses.delete(first.id) is None
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)


def test_unsupported_options_are_400(setup: tuple[openai.OpenAI, dict[str, str]]) -> None:
    client, _ = setup
    for kwargs in (
        {"tools": [{"type": "web_search"}]},
        {"include": ["reasoning.encrypted_content"]},
        {"background": True},
    ):
        with pytest.raises(openai.BadRequestError):
            client.responses.create(model="fake:scripted", input="x", **kwargs)
    with pytest.raises(openai.BadRequestError) as info:
        client.responses.create(model="gpt-unknown", input="x")
    assert info.value.body["code"] == "model_not_allowed"  # type: ignore[index]

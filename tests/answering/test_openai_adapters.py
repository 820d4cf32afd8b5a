"""``/v1/chat/completions`` with knowledge and ``/v1/responses`` with ``file_search``
answer through the answer engine: the request's system text, temperature, token limit
and earlier turns reach the model (official ``openai`` client, a real server)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

openai = pytest.importorskip("openai")
pytest.importorskip("fastapi")

from ragloom.testing import HashingEmbedder, ScriptedModel  # noqa: E402
from ragloom.types import ChatMessage, ChatResponse, Tool  # noqa: E402
from tests.server.openai_support import make_app, serve  # noqa: E402

LUNCH = "The unpaid lunch break is 30 minutes long and is taken between noon and two."
TRAVEL = "Train tickets are refunded in second class only."


class Recording(ScriptedModel):
    """A scripted model that also records the options of every call."""

    def __init__(self) -> None:
        super().__init__([self.reply], name="hosted:recording")
        self.options: list[dict[str, Any]] = []

    @staticmethod
    def reply(messages: list[ChatMessage]) -> str:
        return ("The unpaid lunch break is 30 minutes [1]." if "lunch" in
                messages[-1].content.lower() else "I don't know.")

    def chat(self, messages: str | Sequence[ChatMessage], *, tools: Sequence[Tool] = (),
             stop: Sequence[str] | None = None, temperature: float | None = None,
             max_tokens: int | None = None) -> ChatResponse:
        self.options.append({"temperature": temperature, "max_tokens": max_tokens})
        return super().chat(messages, tools=tools, stop=stop)


@pytest.fixture(scope="module")
def model() -> Recording:
    return Recording()


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, model: Recording
          ) -> Iterator[tuple[Any, str]]:
    app = make_app(Path(tmp_path_factory.mktemp("adapters")), HashingEmbedder(64), model)
    with serve(app) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="key-alice", max_retries=0)
        store = client.vector_stores.create(name="handbook")
        for name, text in (("lunch.md", LUNCH), ("travel.txt", TRAVEL)):
            file_id = client.files.create(file=(name, text.encode()),
                                          purpose="assistants").id
            client.vector_stores.files.create_and_poll(vector_store_id=store.id,
                                                       file_id=file_id, poll_interval_ms=20)
        yield client, store.id


def test_chat_completion_settings_and_history_reach_the_model(
        setup: tuple[Any, str], model: Recording) -> None:
    client, store = setup
    completion = client.chat.completions.create(
        model="hosted:recording", temperature=0.6, max_tokens=50,
        messages=[{"role": "system", "content": "Answer for the handbook bot."},
                  {"role": "user", "content": "Is there a travel policy?"},
                  {"role": "assistant", "content": "Yes, tickets are refunded."},
                  {"role": "user", "content": "How long is the unpaid lunch break?"}],
        extra_body={"vector_store_ids": [store]})
    sent = model.calls[-1]
    assert sent[0] == ChatMessage.system("Answer for the handbook bot.")
    assert [(m.role, m.content) for m in sent[1:3]] == [
        ("user", "Is there a travel policy?"), ("assistant", "Yes, tickets are refunded.")]
    assert "30 minutes" in sent[-1].content  # the passages' sentences, then the question
    assert model.options[-1] == {"temperature": 0.6, "max_tokens": 50}
    answer = completion.model_extra["answer"]
    assert answer["refused"] is False and answer["citations"]
    cited = completion.model_extra["sources"][answer["citations"][0] - 1]
    assert "lunch" in cited["text"]
    assert "30 minutes" in (completion.choices[0].message.content or "")
    assert completion.usage is not None and completion.usage.completion_tokens > 0


def test_chat_completion_refusal_is_marked(setup: tuple[Any, str]) -> None:
    client, store = setup
    completion = client.chat.completions.create(
        model="hosted:recording", messages=[{"role": "user",
                                           "content": "What is the capital of Peru?"}],
        extra_body={"vector_store_ids": [store]})
    assert completion.model_extra["answer"]["refused"] is True
    assert completion.model_extra["answer"]["refusal_reason"]
    assert "could not find" in (completion.choices[0].message.content or "")


def test_response_settings_and_history_reach_the_model(setup: tuple[Any, str],
                                                       model: Recording) -> None:
    client, store = setup
    tools = [{"type": "file_search", "vector_store_ids": [store]}]
    first = client.responses.create(model="hosted:recording", tools=tools,
                                    input="Is there a travel policy?")
    second = client.responses.create(
        model="hosted:recording", tools=tools, previous_response_id=first.id,
        instructions="Answer for the handbook bot.", temperature=0.3, max_output_tokens=60,
        input="How long is the unpaid lunch break?")
    sent = model.calls[-1]
    assert sent[0] == ChatMessage.system("Answer for the handbook bot.")
    assert ("user", "Is there a travel policy?") in [(m.role, m.content) for m in sent]
    assert ("assistant", first.output_text) in [(m.role, m.content) for m in sent]
    assert model.options[-1] == {"temperature": 0.3, "max_tokens": 60}
    assert "30 minutes" in second.output_text and "[1]" not in second.output_text
    annotations = second.output[-1].content[0].annotations
    assert [a.filename for a in annotations] == ["lunch.md"]

"""A file's and a vector store's life through the official ``openai`` client on a real
uvicorn: deleting a file takes it out of every vector store (also across a crash),
vector stores expire as OpenAI documents (a clock the test sets), and reading a
file's bytes or parsed text runs in the server's pool, not on the event loop."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from starlette.concurrency import run_in_threadpool

from ragloom.server.v1.collections import VectorStoreCollections
from ragloom.testing import HashingEmbedder, ScriptedModel
from tests.server.openai_support import make_app, serve

DAY = 86_400
START = 1_800_000_000


class Clock:
    def __init__(self) -> None:
        self.now = float(START)

    def __call__(self) -> float:
        return self.now

    def advance(self, days: float) -> None:
        self.now += days * DAY


class RecordingPool:
    """The server's bounded pool as the routes see it (``run_cpu``), noting which
    functions ran in it and whether any ran on the event loop's thread."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.on_loop: list[str] = []

    async def __call__(self, function: Callable[..., Any], *args: Any) -> Any:
        loop_thread = threading.get_ident()

        def call() -> Any:
            name = getattr(function, "__qualname__", repr(function))
            self.ran.append(name)
            if threading.get_ident() == loop_thread:
                self.on_loop.append(name)
            return function(*args)

        return await run_in_threadpool(call)


@pytest.fixture(scope="module")
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
def pool() -> RecordingPool:
    return RecordingPool()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("oai-life")


def app_on(folder: Path, clock: Clock, pool: RecordingPool) -> Any:
    return make_app(folder, HashingEmbedder(128), ScriptedModel(["ok"]), clock=clock,
                    run_cpu=pool)


@pytest.fixture(scope="module")
def app(folder: Path, clock: Clock, pool: RecordingPool) -> Any:
    return app_on(folder, clock, pool)


@pytest.fixture(scope="module")
def base_url(app: Any) -> Iterator[str]:
    with serve(app) as url:
        yield url


@pytest.fixture(scope="module")
def client(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base_url}/v1", api_key="key-alice", max_retries=0)


def upload(client: openai.OpenAI, name: str, text: str) -> str:
    return client.files.create(file=(name, text.encode()), purpose="assistants").id


def attach(client: openai.OpenAI, vs_id: str, file_id: str) -> None:
    done = client.vector_stores.files.create_and_poll(vector_store_id=vs_id, file_id=file_id,
                                                      poll_interval_ms=20)
    assert done.status == "completed", done.last_error


def file_search(vs_id: str) -> Any:
    return {"type": "file_search", "vector_store_ids": [vs_id]}


def found(client: openai.OpenAI, vs_id: str, query: str) -> set[str]:
    return {hit.file_id for hit in client.vector_stores.search(
        vs_id, query=query, max_num_results=50, extra_body={"search_mode": "keyword"}).data}


# ------------------------------------------------------------------ deleting a file
def test_deleting_a_file_takes_it_out_of_every_vector_store(client: openai.OpenAI) -> None:
    walrus = upload(client, "walrus.txt", "Walruses haul out on sea ice to rest.")
    seal = upload(client, "seal.txt", "Seals haul out on beaches to rest.")
    one = client.vector_stores.create(name="one")
    two = client.vector_stores.create(name="two")
    for file_id in (walrus, seal):
        attach(client, one.id, file_id)
    attach(client, two.id, walrus)
    assert found(client, one.id, "haul out rest") == {walrus, seal}
    assert found(client, two.id, "walruses") == {walrus}

    assert client.files.delete(walrus).deleted is True

    assert found(client, one.id, "haul out rest walruses") == {seal}
    assert found(client, two.id, "walruses haul out") == set()
    counts = client.vector_stores.retrieve(one.id).file_counts
    assert (counts.total, counts.completed) == (1, 1)
    counts = client.vector_stores.retrieve(two.id).file_counts
    assert (counts.total, counts.completed) == (0, 0)
    assert [f.id for f in client.vector_stores.files.list(vector_store_id=one.id)] == [seal]
    with pytest.raises(openai.NotFoundError):
        client.vector_stores.files.retrieve(vector_store_id=two.id, file_id=walrus)
    with pytest.raises(openai.NotFoundError):
        client.files.content(walrus)
    with pytest.raises(openai.NotFoundError):  # deleting twice: it is gone
        client.files.delete(walrus)


def test_another_tenants_file_delete_is_a_404_and_changes_nothing(
        base_url: str, client: openai.OpenAI) -> None:
    mine = upload(client, "otter.txt", "Otters hold hands while they sleep.")
    vs = client.vector_stores.create(name="mine")
    attach(client, vs.id, mine)
    other = openai.OpenAI(base_url=f"{base_url}/v1", api_key="key-bob", max_retries=0)
    with pytest.raises(openai.NotFoundError):
        other.files.delete(mine)
    assert found(client, vs.id, "otters sleep") == {mine}
    assert client.vector_stores.retrieve(vs.id).file_counts.completed == 1


def test_a_crash_midway_through_a_delete_is_finished_at_the_next_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock, pool = Clock(), RecordingPool()
    first = app_on(tmp_path, clock, pool)
    with serve(first) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="key-alice", max_retries=0)
        gone = upload(client, "gone.txt", "Narwhals have one long tusk.")
        kept = upload(client, "kept.txt", "Belugas are white whales.")
        vs = client.vector_stores.create(name="crash")
        attach(client, vs.id, gone)
        attach(client, vs.id, kept)

        def crash(self: Any, vs_id: str, file_id: str) -> int:
            raise RuntimeError("killed")  # the process dies after the tables' commit

        with monkeypatch.context() as patch:
            patch.setattr(VectorStoreCollections, "delete_file", crash)
            # The delete's cleanup is a job: it fails, the delete itself is done.
            assert client.files.delete(gone).deleted
        # The tables' step is whole: the file and its link are gone, counts exact...
        with pytest.raises(openai.NotFoundError):
            client.files.retrieve(gone)
        assert client.vector_stores.retrieve(vs.id).file_counts.total == 1
    # ... and the chunks owed to the store leave it before the next server serves.
    with serve(app_on(tmp_path, clock, pool)) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="key-alice", max_retries=0)
        assert found(client, vs.id, "narwhals tusk belugas whales") == {kept}


# --------------------------------------------------------------------------- expiry
def test_a_vector_store_expires_after_its_days_without_use(
        client: openai.OpenAI, clock: Clock, base_url: str) -> None:
    first = upload(client, "krill.txt", "Krill swarms feed the great whales.")
    vs = client.vector_stores.create(name="expiring", file_ids=[first],
                                     expires_after={"anchor": "last_active_at", "days": 2})
    assert vs.last_active_at == int(clock.now)
    assert vs.expires_at == int(clock.now) + 2 * DAY
    client.vector_stores.files.poll(vector_store_id=vs.id, file_id=first,
                                    poll_interval_ms=20)

    clock.advance(1.5)  # a search is use: the two days start again
    assert found(client, vs.id, "krill whales") == {first}
    got = client.vector_stores.retrieve(vs.id)
    assert got.last_active_at == int(clock.now) and got.expires_at == int(clock.now) + 2 * DAY

    clock.advance(1.5)  # so is attaching a file
    attach(client, vs.id, upload(client, "plankton.txt", "Plankton drifts."))
    got = client.vector_stores.retrieve(vs.id)
    assert got.status == "completed" and got.last_active_at == int(clock.now)

    clock.advance(1.5)  # and the file_search tool of responses
    answer = client.responses.create(model="fake:scripted", input="What do krill feed?",
                                     tools=[file_search(vs.id)])
    assert "krill" in answer.output_text.lower()  # answered from the store it searched
    assert client.vector_stores.retrieve(vs.id).last_active_at == int(clock.now)

    clock.advance(1.9)  # reading and listing are not
    client.vector_stores.retrieve(vs.id)
    client.vector_stores.files.list(vector_store_id=vs.id)
    assert client.vector_stores.retrieve(vs.id).expires_at == int(clock.now - 1.9 * DAY) + 2 * DAY
    clock.advance(0.1)
    expired = client.vector_stores.retrieve(vs.id)
    assert expired.status == "expired"
    assert [s.status for s in client.vector_stores.list() if s.id == vs.id] == ["expired"]

    with pytest.raises(openai.BadRequestError) as info:
        client.vector_stores.search(vs.id, query="krill")
    assert info.value.code == "vector_store_expired"
    assert "Create a new vector store" in info.value.message
    with pytest.raises(openai.BadRequestError) as info:
        client.responses.create(model="fake:scripted", input="krill?",
                                tools=[file_search(vs.id)])
    assert info.value.code == "vector_store_expired"
    with pytest.raises(openai.BadRequestError):
        client.vector_stores.files.create(vector_store_id=vs.id, file_id=first)
    with pytest.raises(openai.BadRequestError):
        client.vector_stores.file_batches.create(vector_store_id=vs.id, file_ids=[first])
    with pytest.raises(openai.BadRequestError) as info:  # knowledge for chat completions
        client.chat.completions.create(model="fake:scripted", extra_body={
            "vector_store_ids": [vs.id]}, messages=[{"role": "user", "content": "krill?"}])
    assert info.value.code == "vector_store_expired"
    refused = httpx.post(f"{base_url}/v1/vector-io/query",  # the specification's route
                         json={"vector_db_id": vs.id, "query": "krill"},
                         headers={"Authorization": "Bearer key-alice"})
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "vector_store_expired"
    with pytest.raises(openai.BadRequestError):  # re-indexing attaches again
        client.vector_stores.files.update(vector_store_id=vs.id, file_id=first,
                                          attributes={"k": 1})
    with pytest.raises(openai.BadRequestError):  # a longer policy does not bring it back
        client.vector_stores.update(vs.id, expires_after={"anchor": "last_active_at",
                                                          "days": 30})
    renamed = client.vector_stores.update(vs.id, name="old krill")
    assert renamed.name == "old krill" and renamed.status == "expired"
    assert renamed.last_active_at == expired.last_active_at
    assert client.vector_stores.delete(vs.id).deleted


def test_a_store_without_a_policy_never_expires(client: openai.OpenAI, clock: Clock) -> None:
    vs = client.vector_stores.create(name="forever")
    assert vs.expires_after is None and vs.expires_at is None
    clock.advance(3650)
    assert client.vector_stores.retrieve(vs.id).status == "completed"
    assert client.vector_stores.search(vs.id, query="anything").data == []


def test_a_policy_set_later_counts_from_the_change(client: openai.OpenAI,
                                                   clock: Clock) -> None:
    vs = client.vector_stores.create(name="later")
    clock.advance(30)
    changed = client.vector_stores.update(vs.id, expires_after={"anchor": "last_active_at",
                                                                "days": 7})
    assert changed.status == "completed"
    assert changed.expires_at == int(clock.now) + 7 * DAY


# ------------------------------------------------------------- off the event loop
def test_file_bytes_and_parsed_text_are_read_in_the_pool(
        client: openai.OpenAI, pool: RecordingPool, base_url: str) -> None:
    text = "Manatees graze on sea grass.\n\nThey surface to breathe."
    file_id = upload(client, "manatee.txt", text)
    vs = client.vector_stores.create(name="content")
    attach(client, vs.id, file_id)
    pool.ran.clear()
    assert client.files.content(file_id).read() == text.encode()
    assert [name for name in pool.ran if "content" in name] == ["content.<locals>.read"]
    pool.ran.clear()
    pages = client.vector_stores.files.content(vector_store_id=vs.id, file_id=file_id)
    assert "Manatees" in "".join(c.text or "" for c in pages)
    assert [name for name in pool.ran if "file_content" in name] == [
        "file_content.<locals>.parse"]
    assert pool.on_loop == []
    # A missing file is still a 404 from inside the pool.
    response = httpx.get(f"{base_url}/v1/files/file-0000/content",
                         headers={"Authorization": "Bearer key-alice"})
    assert response.status_code == 404

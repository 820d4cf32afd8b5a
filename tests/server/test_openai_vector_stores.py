"""Files, vector stores, attaching and search through the official ``openai`` client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from ragloom.testing import HashingEmbedder, ScriptedModel
from tests.server.openai_support import make_app, serve

DOCS = {
    "lunch.txt": ("Lunch policy\n\nThe unpaid lunch break is 30 minutes.\n\n\n"
                  "Take it between noon and two.", {"dept": "hr", "year": 2024, "public": True}),
    "vpn.md": ("# VPN\n\nConnect to the VPN before opening the payroll system.",
               {"dept": "it", "year": 2022, "public": False}),
    "leave.txt": ("Annual leave is 25 days. Unused leave expires in March.",
                  {"dept": "hr", "year": 2020, "public": True}),
}


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("oai")
    app = make_app(tmp, HashingEmbedder(128), ScriptedModel(["The break is 30 minutes [1]."]))
    with serve(app) as url:
        yield url


@pytest.fixture(scope="module")
def client(base_url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base_url}/v1", api_key="key-alice", max_retries=0)


@pytest.fixture(scope="module")
def store(client: openai.OpenAI) -> dict[str, str]:
    """A vector store with the three files attached with attributes; name -> file id."""
    vs = client.vector_stores.create(name="handbook", metadata={"team": "ops"})
    ids = {}
    for name, (text, attributes) in DOCS.items():
        uploaded = client.files.create(file=(name, text.encode()), purpose="assistants")
        ids[name] = uploaded.id
        attached = client.vector_stores.files.create_and_poll(
            vector_store_id=vs.id, file_id=uploaded.id, attributes=attributes,
            poll_interval_ms=20)
        assert attached.status == "completed", attached.last_error
        assert attached.attributes == attributes
    ids["vs"] = vs.id
    return ids


def test_files_round_trip(client: openai.OpenAI) -> None:
    created = client.files.create(file=("notes.txt", b"a\n\n\nb"), purpose="user_data")
    assert created.id.startswith("file-") and created.bytes == 5
    assert created.purpose == "user_data" and created.filename == "notes.txt"
    assert client.files.retrieve(created.id).filename == "notes.txt"
    assert client.files.content(created.id).read() == b"a\n\n\nb"
    assert created.id in [f.id for f in client.files.list()]
    assert client.files.delete(created.id).deleted is True
    with pytest.raises(openai.NotFoundError) as info:
        client.files.retrieve(created.id)
    assert info.value.body["code"] == "not_found"  # type: ignore[index]


def test_attach_returns_in_progress_then_completes(client: openai.OpenAI,
                                                   store: dict[str, str]) -> None:
    vs = client.vector_stores.retrieve(store["vs"])
    assert vs.file_counts.completed == 3 and vs.file_counts.total == 3
    assert vs.status == "completed" and vs.usage_bytes > 0
    assert vs.metadata == {"team": "ops"}
    files = client.vector_stores.files.list(vector_store_id=store["vs"])
    assert {f.id for f in files} == {store[n] for n in DOCS}


def test_search_one_result_per_file_with_scores_in_unit_range(
        client: openai.OpenAI, store: dict[str, str]) -> None:
    for mode in ("vector", "keyword", "hybrid"):
        page = client.vector_stores.search(store["vs"], query="unpaid lunch break minutes",
                                           extra_body={"search_mode": mode})
        file_ids = [r.file_id for r in page.data]
        assert file_ids[0] == store["lunch.txt"], mode
        assert len(file_ids) == len(set(file_ids))
        assert all(0.0 <= r.score <= 1.0 for r in page.data)
        top = page.data[0]
        assert top.filename == "lunch.txt"
        assert top.attributes == DOCS["lunch.txt"][1]
        # Blank lines survive parsing, chunking and the wire.
        assert "\n\n\n" in top.content[0].text


def test_search_filters(client: openai.OpenAI, store: dict[str, str]) -> None:
    def found(filters: object, query: str = "leave lunch vpn policy") -> set[str]:
        page = client.vector_stores.search(store["vs"], query=query,
                                           filters=filters)  # type: ignore[arg-type]
        return {r.filename for r in page.data}

    assert found({"type": "eq", "key": "dept", "value": "hr"}) == {"lunch.txt", "leave.txt"}
    assert found({"type": "ne", "key": "dept", "value": "hr"}) == {"vpn.md"}
    assert found({"type": "gte", "key": "year", "value": 2022}) == {"lunch.txt", "vpn.md"}
    assert found({"type": "lt", "key": "year", "value": 2022}) == {"leave.txt"}
    assert found({"type": "in", "key": "dept", "value": ["it"]}) == {"vpn.md"}
    assert found({"type": "nin", "key": "dept", "value": ["it"]}) == {"lunch.txt",
                                                                      "leave.txt"}
    assert found({"type": "and", "filters": [
        {"type": "eq", "key": "public", "value": True},
        {"type": "gt", "key": "year", "value": 2021}]}) == {"lunch.txt"}
    assert found({"type": "or", "filters": [
        {"type": "lte", "key": "year", "value": 2020},
        {"type": "eq", "key": "dept", "value": "it"}]}) == {"leave.txt", "vpn.md"}


def test_search_options(client: openai.OpenAI, store: dict[str, str]) -> None:
    one = client.vector_stores.search(store["vs"], query="leave", max_num_results=1)
    assert len(one.data) == 1
    high = client.vector_stores.search(store["vs"], query="annual leave days",
                                       ranking_options={"score_threshold": 0.99})
    assert all(r.score >= 0.99 for r in high.data)
    rewritten = client.vector_stores.search(
        store["vs"], query="What is the unpaid lunch break?", rewrite_query=True,
        extra_body={"ranker": {"type": "rrf", "impact_factor": 30}})
    assert rewritten.search_query == ["unpaid lunch break"]  # type: ignore[attr-defined]
    assert rewritten.data[0].file_id == store["lunch.txt"]


def test_bad_requests_are_400_and_keep_the_connection(base_url: str,
                                                      store: dict[str, str]) -> None:
    headers = {"Authorization": "Bearer key-alice"}
    with httpx.Client(base_url=base_url, headers=headers) as http:
        cases = [
            {"query": "x", "extra": 1},
            {"query": "x", "search_mode": "semantic"},
            {"query": "x", "ranking_options": {"ranker": "neural"}},
            {"query": "x", "filters": {"type": "regex", "key": "a", "value": "b"}},
            {"query": "x", "max_num_results": 0},
            {"query": ""},
        ]
        for body in cases:
            response = http.post(f"/v1/vector_stores/{store['vs']}/search", json=body)
            assert response.status_code == 400, body
            error = response.json()["error"]
            assert set(error) == {"message", "type", "param", "code"} and error["message"]
        too_many = {f"k{i}": i for i in range(17)}
        for path, raw in (
            (f"/v1/vector_stores/{store['vs']}/files",
             {"file_id": store["lunch.txt"], "attributes": too_many}),
            (f"/v1/vector_stores/{store['vs']}/files",
             {"file_id": store["lunch.txt"], "attributes": {"k": "x" * 513}}),
            ("/v1/vector_stores", {"chunking_strategy": {"type": "contextual"}}),
            ("/v1/vector_stores", {"embedding_model": "nomic-embed-text-v1.5"}),
        ):
            response = http.post(path, json=raw)
            assert response.status_code == 400, (path, response.text)
        garbled = http.post(f"/v1/vector_stores/{store['vs']}/search", content=b"{not json",
                            headers={"content-type": "application/json"})
        assert garbled.status_code == 400 and garbled.json()["error"]["message"]
        assert http.post(f"/v1/vector_stores/{store['vs']}/search",
                         json={"query": "leave"}).status_code == 200


def test_missing_objects_are_404(client: openai.OpenAI, store: dict[str, str]) -> None:
    for call in (
        lambda: client.vector_stores.retrieve("vs_missing"),
        lambda: client.vector_stores.search("vs_missing", query="x"),
        lambda: client.vector_stores.files.retrieve(vector_store_id=store["vs"],
                                                    file_id="file-missing"),
        lambda: client.vector_stores.files.create(vector_store_id=store["vs"],
                                                  file_id="file-missing"),
        lambda: client.vector_stores.file_batches.retrieve(vector_store_id=store["vs"],
                                                           batch_id="vsfb_missing"),
        lambda: client.files.content("file-missing"),
    ):
        with pytest.raises(openai.NotFoundError) as info:
            call()
        body = info.value.body
        assert isinstance(body, dict) and body["type"] == "invalid_request_error"


def test_tenant_isolation(base_url: str, client: openai.OpenAI, store: dict[str, str]) -> None:
    bob = openai.OpenAI(base_url=f"{base_url}/v1", api_key="key-bob", max_retries=0)
    assert store["vs"] not in [v.id for v in bob.vector_stores.list()]
    assert not [f for f in bob.files.list() if f.id in store.values()]
    for call in (
        lambda: bob.vector_stores.retrieve(store["vs"]),
        lambda: bob.vector_stores.search(store["vs"], query="lunch"),
        lambda: bob.vector_stores.files.list(vector_store_id=store["vs"]),
        lambda: bob.vector_stores.delete(store["vs"]),
        lambda: bob.files.retrieve(store["lunch.txt"]),
        lambda: bob.files.content(store["lunch.txt"]),
        lambda: bob.files.delete(store["lunch.txt"]),
    ):
        with pytest.raises(openai.NotFoundError):
            call()
    batch = client.vector_stores.file_batches.create_and_poll(
        vector_store_id=store["vs"], file_ids=[store["lunch.txt"]], poll_interval_ms=20)
    fid = store["lunch.txt"]
    for call in (
        lambda: bob.vector_stores.update(store["vs"], name="mine"),
        lambda: bob.vector_stores.files.retrieve(vector_store_id=store["vs"], file_id=fid),
        lambda: bob.vector_stores.files.update(vector_store_id=store["vs"], file_id=fid,
                                               attributes={"a": 1}),
        lambda: bob.vector_stores.files.delete(vector_store_id=store["vs"], file_id=fid),
        lambda: bob.vector_stores.files.content(vector_store_id=store["vs"], file_id=fid),
        lambda: bob.vector_stores.file_batches.retrieve(batch.id, vector_store_id=store["vs"]),
        lambda: bob.vector_stores.file_batches.cancel(batch.id, vector_store_id=store["vs"]),
        lambda: bob.vector_stores.file_batches.list_files(batch.id,
                                                          vector_store_id=store["vs"]),
        lambda: bob.chat.completions.create(model="fake:scripted", messages=[
            {"role": "user", "content": "x"}], extra_body={"vector_store_ids": [store["vs"]]}),
    ):
        with pytest.raises(openai.NotFoundError):
            call()
    with httpx.Client(base_url=base_url, headers={"Authorization": "Bearer key-bob"}) as http:
        response = http.post("/v1/vector-io/query", json={"vector_db_id": store["vs"],
                                                          "query": "lunch"})
        assert response.status_code == 404
    # Nothing bob tried changed alice's store.
    assert client.vector_stores.retrieve(store["vs"]).name == "handbook"
    assert client.vector_stores.files.retrieve(vector_store_id=store["vs"],
                                               file_id=fid).attributes == DOCS["lunch.txt"][1]
    own = bob.vector_stores.create(name="bob")
    with pytest.raises(openai.NotFoundError):  # alice's file cannot go into bob's store
        bob.vector_stores.files.create(vector_store_id=own.id, file_id=store["lunch.txt"])


def test_batches_static_chunking_and_failures(client: openai.OpenAI, tmp_path: Path) -> None:
    vs = client.vector_stores.create(name="batch")
    good = [client.files.create(file=(f"doc{i}.txt", f"Fact number {i} about otters.".encode()),
                                purpose="assistants").id for i in range(5)]
    bad = client.files.create(file=("blob.bin", bytes(range(256)) * 4), purpose="assistants")
    batch = client.vector_stores.file_batches.create_and_poll(
        vector_store_id=vs.id, file_ids=[*good, bad.id], attributes={"kind": "otter"},
        chunking_strategy={"type": "static", "static": {"max_chunk_size_tokens": 100,
                                                        "chunk_overlap_tokens": 20}},
        poll_interval_ms=20)
    assert batch.file_counts.completed == 5 and batch.file_counts.failed == 1
    failed = client.vector_stores.files.retrieve(vector_store_id=vs.id, file_id=bad.id)
    assert failed.status == "failed" and failed.last_error is not None
    assert failed.last_error.code == "unsupported_file"
    done = client.vector_stores.files.retrieve(vector_store_id=vs.id, file_id=good[0])
    assert done.chunking_strategy.type == "static"  # type: ignore[union-attr]
    listed = client.vector_stores.file_batches.list_files(batch_id=batch.id,
                                                          vector_store_id=vs.id)
    assert len(listed.data) == 6
    hits = client.vector_stores.search(vs.id, query="otters fact number 3",
                                       filters={"type": "eq", "key": "kind", "value": "otter"})
    assert hits.data and all(h.attributes == {"kind": "otter"} for h in hits.data)
    with pytest.raises(openai.BadRequestError):
        client.vector_stores.files.create(
            vector_store_id=vs.id, file_id=good[0],
            chunking_strategy={"type": "static", "static": {"max_chunk_size_tokens": 50,
                                                            "chunk_overlap_tokens": 0}})


def test_update_attributes_and_detach(client: openai.OpenAI) -> None:
    vs = client.vector_stores.create(name="upd")
    fid = client.files.create(file=("a.txt", b"Penguins live in the south."),
                              purpose="assistants").id
    client.vector_stores.files.create_and_poll(vector_store_id=vs.id, file_id=fid,
                                               attributes={"v": 1}, poll_interval_ms=20)
    client.vector_stores.files.update(vector_store_id=vs.id, file_id=fid, attributes={"v": 2})
    client.vector_stores.files.poll(vector_store_id=vs.id, file_id=fid, poll_interval_ms=20)
    hits = client.vector_stores.search(vs.id, query="penguins",
                                       filters={"type": "eq", "key": "v", "value": 2})
    assert [h.file_id for h in hits.data] == [fid]
    content = client.vector_stores.files.content(vector_store_id=vs.id, file_id=fid)
    assert [c.text for c in content] == ["Penguins live in the south."]
    client.vector_stores.files.delete(vector_store_id=vs.id, file_id=fid)
    assert client.vector_stores.search(vs.id, query="penguins").data == []
    assert client.vector_stores.delete(vs.id).deleted


def test_a_file_with_many_matching_chunks_does_not_crowd_out_the_others(
        client: openai.OpenAI) -> None:
    vs = client.vector_stores.create(name="crowd")
    long_text = "\n\n".join(f"Beavers build dams, part {i}. " * 20 for i in range(40))
    ids = [client.files.create(file=("long.txt", long_text.encode()), purpose="assistants").id]
    ids += [client.files.create(file=(f"s{i}.txt", f"Note {i}: beavers swim.".encode()),
                                purpose="assistants").id for i in range(3)]
    client.vector_stores.file_batches.create_and_poll(
        vector_store_id=vs.id, file_ids=ids, poll_interval_ms=20,
        chunking_strategy={"type": "static", "static": {"max_chunk_size_tokens": 100,
                                                        "chunk_overlap_tokens": 0}})
    for mode in ("vector", "keyword", "hybrid"):
        page = client.vector_stores.search(vs.id, query="beavers build dams",
                                           max_num_results=4, extra_body={"search_mode": mode})
        assert sorted(r.file_id for r in page.data) == sorted(ids), mode
        assert page.data[0].file_id == ids[0] and len(page.data[0].content) == 3


def test_pdfs_parse_in_a_bounded_worker(client: openai.OpenAI) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.cell(text="Capybaras are the largest rodents.")
    vs = client.vector_stores.create(name="pdf")
    good = client.files.create(file=("rodents.pdf", bytes(pdf.output())),
                               purpose="assistants").id
    broken = client.files.create(file=("broken.pdf", b"%PDF-1.4\n1 0 obj <<"),
                                 purpose="assistants").id
    batch = client.vector_stores.file_batches.create_and_poll(
        vector_store_id=vs.id, file_ids=[good, broken], poll_interval_ms=20)
    assert batch.file_counts.completed == 1 and batch.file_counts.failed == 1
    failed = client.vector_stores.files.retrieve(vector_store_id=vs.id, file_id=broken)
    assert failed.last_error is not None and failed.last_error.code == "invalid_file"
    hit = client.vector_stores.search(vs.id, query="largest rodents").data[0]
    assert hit.file_id == good and hit.filename == "rodents.pdf"
    assert "Capybaras" in hit.content[0].text

"""Every entry point is a thin adapter over the one answer engine: the same question with
the same settings gets the same answer (text, cited documents, refused) from
``ragloom ask --json``, ``NaiveRag.query``, ``AugmentedRag.query``, the MCP ``ask``
tool, ``/api/ask`` (JSON and SSE), ``/v1/chat/completions`` with ``knowledge_bases``
and ``/v1/responses`` with ``file_search`` (the official ``openai`` client).

The documents are one short paragraph each, so every ingestion path makes the same
chunks; the embedder and model are the deterministic fakes (and, in the integration
test, the real bundled models)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
openai = pytest.importorskip("openai")

DOCS = {
    "lunch.md": "The unpaid lunch break is 30 minutes long and is taken between noon "
                "and two.",
    "travel.txt": "Train tickets are refunded in second class only.",
    "vpn.txt": "Connect to the VPN before opening the payroll system.",
}
QUESTIONS = ("How long is the unpaid lunch break?", "How are train tickets refunded?",
             "What is the capital of Peru?")
SRC = Path(__file__).resolve().parents[2] / "src"
_MARKER = re.compile(r"\s?\[\d+(?:\s*,\s*\d+)*\]")


@dataclass(frozen=True)
class Seen:
    """An answer as every entry point can show it: text without [n] markers, the
    documents it cites, and whether it refused."""

    text: str
    cited: tuple[str, ...]
    refused: bool


def seen(text: str, cited: list[str], refused: bool) -> Seen:
    return Seen(" ".join(_MARKER.sub("", text).split()),
                tuple(sorted({Path(c).name for c in cited if c})), refused)


def from_rag_answer(data: dict[str, Any]) -> Seen:
    """``RagAnswer.to_dict()`` (CLI ``--json``, NaiveRag, AugmentedRag)."""
    sources = data["sources"]
    cited = [str(sources[n - 1]["document"]) for n in data["citations"]]
    return seen(data["answer"], cited, data["refused"])


# ----------------------------------------------------------------------- the parts
@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture(scope="module")
def embedder_name() -> str:
    return "fake:hashing-64"


@pytest.fixture(scope="module")
def llm_name() -> str:
    return "fake:echo"


def run_cli(db: Path, *args: str) -> str:
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, RAGLOOM_DB=str(db), COLUMNS="200", NO_COLOR="1", PYTHONPATH=path)
    result = subprocess.run([sys.executable, "-m", "ragloom", *args], capture_output=True,
                            text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def cli_answers(db: Path, docs: Path, embedder: str, llm: str) -> list[Seen]:
    run_cli(db, "ingest", str(docs), "--embedder", embedder)
    return [from_rag_answer(json.loads(run_cli(db, "ask", q, "--llm", llm, "--json")))
            for q in QUESTIONS]


def library_kb(embedder: Any) -> Any:
    from ragloom.knowledge_base import VectorKnowledgeBase
    from ragloom.stores.memory import InMemoryVectorStore
    from ragloom.types import TextDocument

    kb = VectorKnowledgeBase(InMemoryVectorStore(), embedder, name="handbook")
    kb.ingest([TextDocument.create(text, source=name) for name, text in DOCS.items()])
    return kb


def library_answers(embedder: Any, model: Any) -> dict[str, list[Seen]]:
    from ragloom.advanced import AugmentedRag, KnowledgeBaseContentRetriever, RetrievalAugmentor
    from ragloom.answering.corpus import KnowledgeBaseCorpus
    from ragloom.answering.engine import AnswerEngine
    from ragloom.mcp.tools import DEFAULT_ASK_TOP_K, answer_question
    from ragloom.rag import NaiveRag
    from ragloom.retrieval.options import SearchOptions

    kb = library_kb(embedder)
    naive = NaiveRag(kb, model)
    augmented = AugmentedRag(RetrievalAugmentor([KnowledgeBaseContentRetriever(kb)]), model,
                             engine=AnswerEngine(kb.embedder), corpus=KnowledgeBaseCorpus([kb]))
    return {
        "NaiveRag.query": [from_rag_answer(naive.query(q).to_dict()) for q in QUESTIONS],
        "AugmentedRag.query": [from_rag_answer(augmented.query(q).to_dict())
                               for q in QUESTIONS],
        "MCP ask": [from_rag_answer(answer_question(
            kb, model, q, SearchOptions(top_k=DEFAULT_ASK_TOP_K)).to_dict())
            for q in QUESTIONS],
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, embedder_name: str,
           llm_name: str) -> Iterator[Any]:
    from tests.server.conftest import start_server

    live = start_server(tmp_path_factory.mktemp("server") / "ragloom.db",
                        embedder=embedder_name, llm=llm_name)
    yield live
    live.stop()


def server_answers(live: Any, docs: Path, model: str) -> dict[str, list[Seen]]:
    from tests.server.conftest import sse_events, wait_batch

    client = live.client()
    assert client.post("/api/knowledge-bases", json={"name": "handbook"}).status_code < 300
    files = [("files", (p.name, p.read_bytes(), "text/plain")) for p in sorted(docs.iterdir())]
    batch = client.post("/api/knowledge-bases/handbook/documents", files=files).json()
    assert wait_batch(client, batch["id"])["status"] == "completed"
    oai = openai.OpenAI(base_url=f"{live.url}/v1", api_key="unused", max_retries=0)
    store = oai.vector_stores.create(name="handbook")
    for path in sorted(docs.iterdir()):
        file_id = oai.files.create(file=(path.name, path.read_bytes()),
                                   purpose="assistants").id
        oai.vector_stores.files.create_and_poll(vector_store_id=store.id, file_id=file_id,
                                                poll_interval_ms=20)
    found: dict[str, list[Seen]] = {k: [] for k in (
        "/api/ask", "/api/ask SSE", "/v1/chat/completions", "/v1/chat/completions stream",
        "/v1/responses", "/v1/responses stream")}
    for question in QUESTIONS:
        body = {"question": question, "knowledge_bases": ["handbook"]}
        data = client.post("/api/ask", json=body).json()
        found["/api/ask"].append(seen(data["answer"], [c["source"] for c in data["citations"]],
                                      data["refused"]))
        streamed = client.post("/api/ask", json={**body, "stream": True}).text
        done = sse_events(streamed)[-1][1]
        found["/api/ask SSE"].append(seen(done["answer"],
                                          [c["source"] for c in done["citations"]],
                                          done["refused"]))
        found["/v1/chat/completions"].append(chat_answer(oai, model, question))
        found["/v1/chat/completions stream"].append(chat_stream_answer(oai, model, question))
        found["/v1/responses"].append(response_answer(oai, model, question, store.id))
        found["/v1/responses stream"].append(
            response_answer(oai, model, question, store.id, stream=True))
    return found


def chat_answer(oai: Any, model: str, question: str) -> Seen:
    completion = oai.chat.completions.create(
        model=model, messages=[{"role": "user", "content": question}],
        extra_body={"knowledge_bases": ["handbook"]})
    extra = completion.model_extra or {}
    sources, details = extra["sources"], extra["answer"]
    cited = [sources[n - 1]["document"] for n in details["citations"]]
    return seen(completion.choices[0].message.content or "", cited, details["refused"])


def chat_stream_answer(oai: Any, model: str, question: str) -> Seen:
    chunks = list(oai.chat.completions.create(
        model=model, messages=[{"role": "user", "content": question}], stream=True,
        extra_body={"knowledge_bases": ["handbook"]}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    sources = (chunks[0].model_extra or {})["sources"]
    details = (chunks[-1].model_extra or {})["answer"]
    deltas = [c for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(deltas) <= 1  # checked before it is shown: one piece
    cited = [sources[n - 1]["document"] for n in details["citations"]]
    return seen(text, cited, details["refused"])


def response_answer(oai: Any, model: str, question: str, store: str, *,
                    stream: bool = False) -> Seen:
    tools = [{"type": "file_search", "vector_store_ids": [store]}]
    if stream:
        with oai.responses.stream(model=model, input=question, tools=tools) as events:
            deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
            response = events.get_final_response()
        assert "".join(deltas) == response.output_text
    else:
        response = oai.responses.create(model=model, input=question, tools=tools)
    message = response.output[-1]
    annotations = message.content[0].annotations
    text = response.output_text
    refused = "could not find" in text.lower()
    return seen(text, [a.filename for a in annotations], refused)


def assert_all_same(answers: dict[str, list[Seen]]) -> None:
    reference_name = "NaiveRag.query"
    reference = answers[reference_name]
    # The questions are answered differently (not a constant), one is refused.
    assert len({a.text for a in reference}) == len(QUESTIONS)
    assert [a.refused for a in reference] == [False, False, True]
    assert reference[0].cited == ("lunch.md",) and reference[1].cited == ("travel.txt",)
    for name, seen_there in answers.items():
        for question, mine, theirs in zip(QUESTIONS, reference, seen_there, strict=True):
            assert theirs == mine, f"{name} answered {question!r} differently"


# ----------------------------------------------------------------------- the tests
def test_every_entry_point_gives_the_same_answer(docs: Path, server: Any, tmp_path: Path,
                                                 embedder_name: str, llm_name: str) -> None:
    from ragloom.registry import make_embedder, make_model

    answers = library_answers(make_embedder(embedder_name), make_model(llm_name))
    answers["ragloom ask --json"] = cli_answers(tmp_path / "db", docs, embedder_name, llm_name)
    answers.update(server_answers(server, docs, llm_name))
    assert_all_same(answers)


@pytest.mark.integration
@pytest.mark.slow  # about 4 minutes on 2 cores: `make test-slow`
def test_every_entry_point_gives_the_same_answer_with_the_bundled_models(
        docs: Path, tmp_path: Path) -> None:
    from ragloom.registry import DEFAULT_EMBEDDER, DEFAULT_MODEL, make_embedder, make_model
    from tests.server.conftest import start_server

    answers = library_answers(make_embedder(DEFAULT_EMBEDDER), make_model(DEFAULT_MODEL))
    answers["ragloom ask --json"] = cli_answers(tmp_path / "db", docs, DEFAULT_EMBEDDER,
                                                DEFAULT_MODEL)
    live = start_server(tmp_path / "server" / "ragloom.db", embedder=DEFAULT_EMBEDDER,
                        llm=DEFAULT_MODEL)
    try:
        answers.update(server_answers(live, docs, DEFAULT_MODEL))
    finally:
        live.stop()
    assert_all_same(answers)

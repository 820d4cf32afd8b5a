"""One knowledge base, four front doors: a LangChain retrieval chain, a Haystack
pipeline, LlamaIndex and ``ragloom search`` (the CLI, in process) return the same top
passage for the same question, with the real bundled embedder (MiniLM int8) on the
samples ingested by ``ragloom ingest``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("haystack")
pytest.importorskip("llama_index.core")

from haystack import Pipeline
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from llama_index.core import VectorStoreIndex

from ragloom.integrations.haystack import RagloomDocumentStore, RagloomRetriever
from ragloom.integrations.langchain import RagloomRetriever as LangChainRetriever
from ragloom.integrations.llama_index import RagloomEmbedding, RagloomVectorStore

pytestmark = pytest.mark.integration

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
QUESTIONS = {
    "How long is the unpaid lunch break?": "staff-handbook.md",
    "battery storage over winter": "e-bike-care.txt",
}


def ragloom_cli(db: Path, *args: str) -> str:
    """The ``ragloom`` command line, in process (typer's runner)."""
    from typer.testing import CliRunner

    from ragloom.cli.app import app

    result = CliRunner().invoke(app, [*args, "--db", str(db)], env={"NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_frameworks_and_cli_agree_on_the_top_passage(tmp_path: Path) -> None:
    db = tmp_path / "db"
    shutil.copytree(SAMPLES, tmp_path / "samples")
    ragloom_cli(db, "ingest", str(tmp_path / "samples"), "--kb", "notes")
    path = str(db)  # what --db takes: the folder (ragloom.db inside)

    retriever = LangChainRetriever(path=path, collection="notes", k=3)
    chain = ({"passages": retriever, "question": RunnablePassthrough()}
             | RunnableLambda(lambda x: x["passages"][0]))
    store = RagloomDocumentStore(path=path, collection="notes")
    pipeline = Pipeline()
    pipeline.add_component("retriever", RagloomRetriever(document_store=store, top_k=3))
    llama = VectorStoreIndex.from_vector_store(
        RagloomVectorStore(path=path, collection="notes"),
        embed_model=RagloomEmbedding(model="local:all-MiniLM-L6-v2-int8"))

    for question, expected in QUESTIONS.items():
        cli = json.loads(ragloom_cli(db, "search", question, "--kb", "notes", "--top-k", "3",
                                     "--json"))["matches"]
        assert Path(cli[0]["document"]).name == expected
        langchain_top = chain.invoke(question)
        haystack_top = pipeline.run({"retriever": {"query": question}})["retriever"]["documents"][0]
        assert langchain_top.page_content == haystack_top.content == cli[0]["text"]
        assert langchain_top.id == haystack_top.id == cli[0]["chunk_id"]
        assert langchain_top.metadata["score"] == pytest.approx(cli[0]["score"], abs=1e-6)
        assert haystack_top.score == pytest.approx(cli[0]["score"], abs=1e-6)
        # LlamaIndex searches by vector only (its default mode): the same embedder, so
        # its top chunk is that of `ragloom search --mode vector`.
        vector = json.loads(ragloom_cli(db, "search", question, "--kb", "notes", "--mode",
                                        "vector", "--top-k", "1", "--json"))["matches"]
        nodes = llama.as_retriever(similarity_top_k=1).retrieve(question)
        assert nodes[0].node.node_id == vector[0]["chunk_id"]
        assert nodes[0].score == pytest.approx(vector[0]["score"], abs=1e-5)
    store.close()

"""The CLI end to end in subprocesses, with the fast hashing embedder and scripted model."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.cli.conftest import FAKE, Cli


def test_ingest_summary_and_idempotence(cli: Cli, sample_dir: Path) -> None:
    first = cli.json("ingest", str(sample_dir), *FAKE)
    assert len(first["new"]) == 3 and not first["skipped"]
    status = cli.json("status")
    kb = status["knowledge_bases"][0]
    assert (kb["name"], kb["documents"], kb["embedder"]) == ("default", 3, "fake:hashing-256")
    second = cli.json("ingest", str(sample_dir))  # the KB's embedder is remembered
    assert len(second["unchanged"]) == 3 and second["texts_embedded"] == 0
    assert cli.json("status")["knowledge_bases"][0]["chunks"] == kb["chunks"]


def test_edit_and_sync(cli: Cli, sample_dir: Path) -> None:
    cli("ingest", str(sample_dir), *FAKE)
    before = cli.json("status")["knowledge_bases"][0]["chunks"]
    faq = sample_dir / "product-faq.md"
    faq.write_text(faq.read_text() + "\n\n## New question\n\nWe open on Sundays in summer.\n")
    report = cli.json("ingest", str(sample_dir))
    assert [Path(s).name for s in report["replaced"]] == ["product-faq.md"]
    assert len(report["unchanged"]) == 2
    hits = cli.json("search", "open on Sundays in summer", "--mode", "keyword")
    assert "Sundays" in hits["matches"][0]["text"]
    (sample_dir / "e-bike-care.txt").unlink()
    synced = cli.json("ingest", str(sample_dir), "--sync")
    assert [Path(s).name for s in synced["removed"]] == ["e-bike-care.txt"]
    status = cli.json("status")["knowledge_bases"][0]
    assert status["documents"] == 2 and status["chunks"] < before + 5


def test_ask_json_shape(cli: Cli, sample_dir: Path) -> None:
    cli("ingest", str(sample_dir), *FAKE)
    data = cli.json("ask", "How long is the unpaid lunch break?", "--llm", "fake:echo")
    assert data["answer"]
    source = data["sources"][0]
    assert {"document", "chunk_id", "score", "text", "metadata"} <= set(source)
    assert 0.0 <= source["score"] <= 1.0
    assert any("lunch" in s["text"].lower() for s in data["sources"])


def test_errors_are_clear_and_lose_nothing(cli: Cli, sample_dir: Path) -> None:
    empty = cli("ask", "anything", "--llm", "none", check=False)
    assert empty.returncode != 0 and "ingest" in empty.stderr
    cli("ingest", str(sample_dir), *FAKE)
    chunks = cli.json("status")["knowledge_bases"][0]["chunks"]
    unknown = cli("ask", "x", "--kb", "nope", "--llm", "none", check=False)
    assert unknown.returncode != 0 and "no knowledge base named 'nope'" in unknown.stderr
    wrong = cli("ask", "x", "--embedder", "fake:hashing-32", "--llm", "none", check=False)
    assert wrong.returncode != 0 and "built with fake:hashing-256" in wrong.stderr
    missing = cli("search", "x", "--filter", '{"key": "nokey", "op": "==", "value": 1}',
                  check=False)
    assert missing.returncode == 2 and "no chunk has the metadata key 'nokey'" in missing.stderr
    typed = cli("search", "x", "--filter", '{"key": "size", "op": ">", "value": "big"}',
                check=False)
    assert typed.returncode == 2 and "holds number values" in typed.stderr
    broken = cli("search", "x", "--filter", "{not json", check=False)
    assert broken.returncode == 2 and "not valid JSON" in broken.stderr
    assert cli.json("status")["knowledge_bases"][0]["chunks"] == chunks


def test_bad_files_are_skipped_and_the_rest_goes_in(cli: Cli, sample_dir: Path) -> None:
    (sample_dir / "empty.txt").write_bytes(b"")
    (sample_dir / "blob.bin").write_bytes(bytes(range(256)) * 40)
    (sample_dir / "latin1.txt").write_bytes("caf\xe9 cr\xe8me br\xfbl\xe9e".encode("latin-1") * 50)
    report = cli.json("ingest", str(sample_dir), *FAKE)
    skipped = {Path(s["source"]).name: s["reason"] for s in report["skipped"]}
    assert "empty.txt" in skipped and "blob.bin" in skipped
    assert all(reason for reason in skipped.values())
    assert len(report["new"]) >= 3


def test_delete_removes_fts_and_vector_rows(cli: Cli, sample_dir: Path) -> None:
    cli("ingest", str(sample_dir), *FAKE)
    (sample_dir / "product-faq.md").unlink()
    cli("ingest", str(sample_dir), "--sync")
    db = sqlite3.connect(cli.db / "ragloom.db")
    tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
    assert tables
    hits = cli.json("search", "warranty frames lifetime", "--mode", "keyword")
    assert all("product-faq" not in m["document"] for m in hits["matches"])
    assert json.dumps(hits)


def test_search_documents_lists_each_document_once(cli: Cli, sample_dir: Path) -> None:
    cli("ingest", str(sample_dir), *FAKE)
    chunks = cli.json("search", "the", "--mode", "keyword", "--top-k", "10")["matches"]
    assert len({m["document"] for m in chunks}) < len(chunks)  # several chunks per document
    docs = cli.json("search", "the", "--mode", "keyword", "--top-k", "10", "--documents")
    names = [m["document"] for m in docs["matches"]]
    assert len(names) == len(set(names)) == 3
    scores = [m["score"] for m in docs["matches"]]
    assert scores == sorted(scores, reverse=True)


def test_search_across_knowledge_bases(cli: Cli, sample_dir: Path, tmp_path: Path) -> None:
    cli("ingest", str(sample_dir / "staff-handbook.md"), "--kb", "staff", *FAKE)
    cli("ingest", str(sample_dir / "product-faq.md"), "--kb", "faq", *FAKE)
    data = cli.json("search", "warranty holiday discount", "--kb", "staff", "--kb", "faq",
                    "--mode", "hybrid", "--ranker", "rrf", "--score-threshold", "0.1")
    kbs = {m["knowledge_base"] for m in data["matches"]}
    assert kbs == {"staff", "faq"}
    for match in data["matches"]:
        expected = "staff-handbook.md" if match["knowledge_base"] == "staff" else "product-faq.md"
        assert match["document"].endswith(expected) and match["score"] >= 0.1
    shown = cli("search", "warranty", "--kb", "staff", "--kb", "faq")
    assert "kb" in shown.stdout and "faq" in shown.stdout

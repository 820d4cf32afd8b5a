"""The two things a new user does, with the real bundled models: ingest the samples, ask."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Cli

pytestmark = pytest.mark.integration


def test_ingest_and_ask_with_bundled_models(cli: Cli, sample_dir: Path) -> None:
    report = cli.json("ingest", str(sample_dir))
    assert len(report["new"]) == 3 and report["texts_embedded"] > 0
    kb = cli.json("status")["knowledge_bases"][0]
    assert kb["embedder"] == "local:all-MiniLM-L6-v2-int8" and kb["dimension"] == 384

    answer = cli.json("ask", "How long is the unpaid lunch break?")
    assert "30" in answer["answer"]
    assert Path(answer["sources"][0]["document"]).name == "staff-handbook.md"
    assert "30 minutes" in answer["sources"][0]["text"]
    # The best sentence states the value asked for: the bundled model is not asked.
    assert answer["origin"] == "extract" and answer["answer"].startswith("30 minutes [")

    shown = cli("ask", "How long is the unpaid lunch break?", "--verbose")
    assert "Sources" in shown.stdout and "staff-handbook.md" in shown.stdout
    assert "tokens in" in shown.stdout


def test_search_modes_with_the_real_embedder(cli: Cli, sample_dir: Path) -> None:
    cli("ingest", str(sample_dir))
    for mode in ("vector", "keyword", "hybrid"):
        hits = cli.json("search", "battery storage over winter", "--mode", mode, "--top-k", "2")
        assert Path(hits["matches"][0]["document"]).name == "e-bike-care.txt", mode
        assert all(0.0 <= m["score"] <= 1.0 for m in hits["matches"])

"""The page with the real bundled models: MiniLM ingests the samples uploaded from the
page, SmolLM2 answers in the chat, the citation opens the handbook passage."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.conftest import Served, Watched, serving

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("web-real"), "--embedder",
                 "local:all-MiniLM-L6-v2-int8", "--llm", "local:smollm2") as served:
        yield served


def test_upload_and_cited_answer_with_the_bundled_models(real_server: Served,
                                                         watched: Watched) -> None:
    page = watched.page
    page.goto(real_server.url + "/#kbs")
    page.fill("#kb-form input[name=name]", "handbook")
    page.click("#kb-form button[type=submit]")
    page.wait_for_selector("#kb-table td >> text=local:all-MiniLM-L6-v2-int8")
    page.click("#tabs a[data-screen=docs]")
    samples = sorted(str(p) for p in SAMPLES.iterdir() if p.is_file())
    page.set_input_files("#file-input", samples)
    for path in samples:
        page.wait_for_selector(f'#uploads li[data-file="{Path(path).name}"][data-status=completed]',
                               timeout=120_000)
    page.click("#tabs a[data-screen=chat]")
    page.fill("#question", "How long is the unpaid lunch break?")
    page.click("#ask-button")
    page.wait_for_selector(".msg.assistant .sources button", timeout=120_000)
    answer = page.inner_text(".msg.assistant")
    assert "30" in answer, answer
    # The server's own model answered: no fallback notice.
    assert "fallback model" not in answer, answer
    watched.shot("chat-real-models")
    page.click(".msg.assistant .sources button >> nth=0")
    page.wait_for_selector("#passage-dialog[open]")
    assert "staff-handbook.md" in page.inner_text("#passage-title")
    assert "lunch" in page.inner_text("#passage-text").lower()
    watched.shot("chat-real-models-citation")
    assert watched.errors == []

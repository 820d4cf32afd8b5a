"""Scores a threshold can trust: ``score_threshold`` 0.7 on a real server drops every
hit of an unrelated query and keeps those of a related one, on
``/v1/vector_stores/{id}/search``, ``/v1/vector-io/query`` and the RAG tool; a
document's score does not depend on what else the store or the results hold."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from ragloom.testing import HashingEmbedder, ScriptedModel
from tests.server.openai_support import make_app, serve

OTTERS = b"Sea otters hold hands while sleeping so they do not drift apart."
OTHERS = {"tax.txt": b"The quarterly tax filing deadline falls in April every year.",
          "bikes.txt": b"Chain lubrication keeps a road bicycle quiet and efficient.",
          "bread.txt": b"Sourdough bread needs a lively starter and a long cold proof."}
RELATED = "do sea otters hold hands while sleeping"
UNRELATED = "volcanic glass obsidian formation"
MODES = ("vector", "keyword", "hybrid")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[openai.OpenAI, str,
                                                                      dict[str, str]]]:
    app = make_app(tmp_path_factory.mktemp("scores"), HashingEmbedder(1024),
                   ScriptedModel(["ok"], name="fake:model"))
    with serve(app) as base:
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="key-s", max_retries=0)

        def store(name: str, files: dict[str, bytes]) -> str:
            vs = client.vector_stores.create(name=name)
            for filename, text in files.items():
                fid = client.files.create(file=(filename, text), purpose="assistants").id
                client.vector_stores.files.create_and_poll(
                    vector_store_id=vs.id, file_id=fid, poll_interval_ms=20)
            return vs.id

        stores = {"alone": store("alone", {"otters.txt": OTTERS}),
                  "crowded": store("crowded", {"otters.txt": OTTERS, **OTHERS})}
        yield client, base, stores


def search(client: openai.OpenAI, vs_id: str, query: str, mode: str = "hybrid",
           **ranking: Any) -> list[Any]:
    return client.vector_stores.search(
        vs_id, query=query, max_num_results=ranking.pop("max_num_results", 10),
        ranking_options=ranking or None,  # type: ignore[arg-type]
        extra_body={"search_mode": mode}).data


@pytest.mark.parametrize("mode", ["hybrid", "vector"])
def test_a_threshold_drops_unrelated_hits_and_keeps_related_ones(
        setup: tuple[openai.OpenAI, str, dict[str, str]], mode: str) -> None:
    client, _, stores = setup
    vs = stores["crowded"]
    unrelated = search(client, vs, UNRELATED, mode)
    assert unrelated, "without a threshold the unrelated query still finds files"
    assert search(client, vs, UNRELATED, mode, score_threshold=0.7) == []
    kept = search(client, vs, RELATED, mode, score_threshold=0.7)
    assert [h.filename for h in kept] == ["otters.txt"]
    assert kept[0].score >= 0.7
    # The old per-query rescaling, on request: the best hit is 1.0, the same ranking.
    if mode == "hybrid":
        weak = "bicycle chain quiet"  # only the bikes file is related
        rescaled = search(client, vs, weak, mode, score_normalization="per_query")
        absolute = search(client, vs, weak, mode)
        assert rescaled[0].score == pytest.approx(1.0, abs=1e-6)
        assert [h.filename for h in rescaled] == [h.filename for h in absolute]
        assert absolute[0].score < 1.0


def test_keyword_scores_are_bm25_on_a_fixed_curve(
        setup: tuple[openai.OpenAI, str, dict[str, str]]) -> None:
    client, _, stores = setup
    assert search(client, stores["crowded"], UNRELATED, "keyword") == []
    hits = search(client, stores["crowded"], RELATED, "keyword")
    assert [h.filename for h in hits] == ["otters.txt"]
    score = hits[0].score  # BM25 / (BM25 + 10): 0.5 is a BM25 of 10
    assert 0.0 < score < 1.0
    assert search(client, stores["crowded"], RELATED, "keyword",
                  score_threshold=score + 0.01) == []
    assert search(client, stores["crowded"], RELATED, "keyword",
                  score_threshold=score - 1e-6)[0].score == score  # shown to 6 places


def test_a_documents_score_does_not_depend_on_the_other_results(
        setup: tuple[openai.OpenAI, str, dict[str, str]]) -> None:
    client, _, stores = setup
    for mode in MODES:
        hits = search(client, stores["crowded"], RELATED, mode)
        best = {h.filename: h.score for h in hits}["otters.txt"]
        one = search(client, stores["crowded"], RELATED, mode, max_num_results=1)
        assert one[0].filename == "otters.txt" and one[0].score == best, mode
        only = client.vector_stores.search(
            stores["crowded"], query=RELATED, extra_body={"search_mode": mode},
            filters={"type": "eq", "key": "filename", "value": "otters.txt"}).data
        assert [h.score for h in only] == [best], mode
    # Vector scores depend on nothing but the query and the chunk, whatever else the
    # store holds (keyword scores move with BM25's collection statistics).
    alone = search(client, stores["alone"], RELATED, "vector")
    crowded = search(client, stores["crowded"], RELATED, "vector")
    assert alone[0].score == {h.filename: h.score for h in crowded}["otters.txt"]


def test_vector_io_and_the_rag_tool_threshold_the_same_scores(
        setup: tuple[openai.OpenAI, str, dict[str, str]]) -> None:
    client, base, stores = setup
    vs = stores["crowded"]
    best = search(client, vs, RELATED)[0].score
    with httpx.Client(base_url=f"{base}/v1", headers={"Authorization": "Bearer key-s"}) as http:
        def vector_io(query: str, **params: Any) -> dict[str, Any]:
            response = http.post("/vector-io/query", json={
                "vector_db_id": vs, "query": query, "params": {"mode": "hybrid", **params}})
            assert response.status_code == 200, response.text
            return response.json()  # type: ignore[no-any-return]

        assert vector_io(UNRELATED)["scores"], "found without a threshold"
        assert vector_io(UNRELATED, score_threshold=0.7) == {
            "chunks": [], "scores": [], "degraded": False, "notice": ""}
        kept = vector_io(RELATED, score_threshold=0.7)
        assert kept["scores"] == [pytest.approx(best, abs=1e-6)]
        assert "otters" in kept["chunks"][0]["content"]

        def rag(query: str, **config: Any) -> dict[str, Any]:
            response = http.post("/tool-runtime/rag-tool/query", json={
                "content": query, "vector_db_ids": [vs],
                "query_config": {"mode": "hybrid", **config}})
            assert response.status_code == 200, response.text
            return response.json()["metadata"]  # type: ignore[no-any-return]

        assert rag(UNRELATED)["scores"]
        assert rag(UNRELATED, score_threshold=0.7)["scores"] == []
        assert rag(RELATED, score_threshold=0.7)["scores"] == [pytest.approx(best, abs=1e-6)]

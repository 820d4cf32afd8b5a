"""The graph routes of the native API on a real uvicorn (fake models, offline extractor)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.conftest import LiveServer, start_server, wait_job

BRIDGE = ("The Harbor Bridge was designed by Elena Varga. It carries trams of the Aldane "
          "Transit Authority.")
VARGA = "Elena Varga was born in Tallinn. She studied at the Riga Technical Academy."


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = start_server(tmp_path_factory.mktemp("graphapi") / "kb" / "ragloom.db")
    yield server
    server.stop()


def _add(client: object, kb: str, text: str, source: str) -> None:
    job = client.post(f"/api/knowledge-bases/{kb}/documents/text",  # type: ignore[attr-defined]
                      json={"text": text, "source": source}).json()
    assert wait_job(client, job["id"])["status"] == "completed"  # type: ignore[arg-type]


def test_graph_setting_extraction_and_entity_routes(live: LiveServer) -> None:
    with live.client() as client:
        assert client.post("/api/knowledge-bases", json={"name": "g"}).status_code == 201
        _add(client, "g", "Cats sleep a lot in the Quiet Garden.", "before.txt")
        assert client.get("/api/knowledge-bases/g/graph").json()["entities"] == []
        put = client.put("/api/knowledge-bases/g/graph", json={"enabled": True})
        assert put.status_code == 200 and put.json()["settings"] == {"extractor": "offline"}
        _add(client, "g", BRIDGE, "bridge.txt")
        _add(client, "g", VARGA, "varga.txt")
        graph = client.get("/api/knowledge-bases/g/graph").json()
        names = {e["name"] for e in graph["entities"]}
        assert {"Harbor Bridge", "Elena Varga", "Tallinn"} <= names
        assert "Quiet Garden" not in names  # ingested before extraction was switched on
        entity = client.get("/api/knowledge-bases/g/graph/entities/elena varga").json()
        assert {m["source"] for m in entity["mentions"]} == {"bridge.txt", "varga.txt"}
        assert all(m["evidence"] and m["text"] for m in entity["mentions"])
        assert "Harbor Bridge" in {n["name"] for n in entity["neighbours"]}
        missing = client.get("/api/knowledge-bases/g/graph/entities/Nobody")
        assert missing.status_code == 404
        found = client.post("/api/search", json={
            "query": "Where was the designer of the Harbor Bridge born?",
            "knowledge_bases": ["g"], "graph": True, "top_k": 2}).json()
        assert {m["source"] for m in found["matches"]} == {"bridge.txt", "varga.txt"}
        off = client.put("/api/knowledge-bases/g/graph", json={"enabled": False})
        assert off.json()["settings"] is None


def test_graph_setting_survives_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "kb" / "ragloom.db"
    first = start_server(db)
    try:
        with first.client() as client:
            client.post("/api/knowledge-bases", json={"name": "g"})
            client.put("/api/knowledge-bases/g/graph", json={"enabled": True})
    finally:
        first.stop()
    second = start_server(db)
    try:
        with second.client() as client:
            _add(client, "g", BRIDGE, "bridge.txt")
            names = {e["name"] for e in client.get("/api/knowledge-bases/g/graph").json()[
                "entities"]}
            assert "Harbor Bridge" in names
    finally:
        second.stop()

"""Graph extraction stored with the chunks: merge, replace, delete, retrieval."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.graph import (
    GraphIndexer,
    OfflineExtractor,
    SqliteGraph,
    graph_indexer_for,
    make_extractor,
    name_key,
)
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.retrieval.options import SearchOptions
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing import HashingEmbedder
from ragloom.types import TextDocument

BRIDGE = ("The Harbor Bridge opened in 1998. The Harbor Bridge was designed by Elena Varga. "
          "It carries trams of the Harbor Transit Authority (HTA).")
VARGA = "Elena Vargas was born in Tallinn. Elena Varga studied architecture in Riga."
OTHER = "Cats sleep a lot. Dogs like long walks in the park."


def _doc(source: str, text: str) -> TextDocument:
    return TextDocument.create(text, source=source)


def _kb(path: Path) -> tuple[VectorKnowledgeBase, SqliteGraph]:
    store = SqliteVectorStore(path / "kb.db", collection="kb")
    graph = SqliteGraph(store)
    kb = VectorKnowledgeBase(store, HashingEmbedder(), name="kb",
                             graph=GraphIndexer(OfflineExtractor(), graph))
    return kb, graph


def test_name_key_folds_case_articles_and_plurals() -> None:
    assert name_key("The Harbor Bridges") == name_key("harbor bridge")
    assert name_key("Batteries") == "battery"
    assert name_key("e-bike") == "e-bike"


def test_entities_are_merged_across_documents_and_carry_evidence(tmp_path: Path) -> None:
    kb, graph = _kb(tmp_path)
    kb.ingest([_doc("bridge.txt", BRIDGE), _doc("varga.txt", VARGA)])
    entities = {e.name: e for e in graph.entities()}
    assert "Harbor Bridge" in entities
    # "Elena Vargas" in the second document joins "Elena Varga" of the first.
    varga = graph.find("elena vargas")
    assert varga is not None and varga.documents == 2
    assert graph.find("HTA") == graph.find("Harbor Transit Authority")
    for entity in graph.entities():
        mentions = graph.mentions([entity.id])
        assert mentions and all(evidence.strip() for *_, evidence in mentions)
    near = {n.entity.name for n in graph.neighbours(entities["Harbor Bridge"].id, hops=2)}
    assert "Tallinn" in near


def test_reingest_replaces_and_delete_removes_graph_rows(tmp_path: Path) -> None:
    kb, graph = _kb(tmp_path)
    kb.ingest([_doc("bridge.txt", BRIDGE), _doc("varga.txt", VARGA)])
    kb.ingest([_doc("varga.txt", "Elena Varga was born in Tartu.")])
    names = {e.name for e in graph.entities()}
    assert "Tartu" in names and "Tallinn" not in names and "Riga" not in names
    kb.delete_sources(["bridge.txt"])
    names = {e.name for e in graph.entities()}
    assert "Harbor Bridge" not in names and "Tartu" in names
    assert all(r.source != "Harbor Bridge" for r in graph.relations())
    kb.store.drop_collection()  # type: ignore[attr-defined]
    assert graph.entities() == []


def test_deleting_a_chunk_removes_its_mentions_and_relations(tmp_path: Path) -> None:
    kb, graph = _kb(tmp_path)
    kb.ingest([_doc("bridge.txt", BRIDGE), _doc("varga.txt", VARGA)])
    tallinn = graph.find("Tallinn")
    varga = graph.find("Elena Varga")
    assert tallinn is not None and varga is not None and varga.documents == 2
    doomed = {chunk for _, chunk, _, _ in graph.mentions([tallinn.id])}
    assert any(r.target == "Tallinn" or r.source == "Tallinn" for r in graph.relations())

    assert kb.store.delete(sorted(doomed)) == len(doomed)  # chunks only, not documents

    assert graph.find("Tallinn") is None  # its only mentions went with the chunk
    after = graph.find("Elena Varga")
    assert after is not None and after.documents == 1
    assert all(chunk not in doomed for _, chunk, _, _ in graph.mentions([after.id]))
    assert all("Tallinn" not in (r.source, r.target) for r in graph.relations())
    assert graph.find("Harbor Bridge") is not None  # the other document's rows stay


def test_graph_rows_roll_back_with_a_failed_write(tmp_path: Path) -> None:
    kb, graph = _kb(tmp_path)
    kb.ingest([_doc("bridge.txt", BRIDGE)])

    def boom(*_: object) -> None:
        raise RuntimeError("disk gone")

    kb.store.write_hooks.append(boom)  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError):
        kb.ingest([_doc("varga.txt", VARGA)])
    assert graph.find("Tallinn") is None and graph.find("Harbor Bridge") is not None


def test_graph_search_brings_in_the_second_hop(tmp_path: Path) -> None:
    kb, _ = _kb(tmp_path)
    fillers = [_doc(f"f{i}.txt", f"Designer {i} was born in the city. " + OTHER)
               for i in range(8)]
    kb.ingest([_doc("bridge.txt", BRIDGE), _doc("varga.txt", VARGA), *fillers])
    question = "In which city was the designer of the Harbor Bridge born?"
    options = SearchOptions(top_k=3, mode="keyword")
    plain = {m.chunk.source for m in kb.search(question, options).matches}
    graph = kb.search(question, options.with_(graph=True))
    found = {m.chunk.source for m in graph.matches}
    assert "varga.txt" not in plain
    assert {"bridge.txt", "varga.txt"} <= found
    assert all(0.0 <= m.score <= 1.0 for m in graph.matches)


def test_graph_setting_is_kept_with_the_knowledge_base(tmp_path: Path) -> None:
    store = SqliteVectorStore(tmp_path / "kb.db", collection="kb")

    def build(name: str, options: dict[str, object]) -> OfflineExtractor:
        extractor = make_extractor(name)
        assert isinstance(extractor, OfflineExtractor)
        return extractor

    assert graph_indexer_for(store, enable=None, build=build) is None
    assert graph_indexer_for(store, enable=True, build=build) is not None
    assert graph_indexer_for(store, enable=None, build=build) is not None
    assert SqliteGraph(store).settings() == {"extractor": "offline"}
    assert graph_indexer_for(store, enable=False, build=build) is None
    assert graph_indexer_for(store, enable=None, build=build) is None


def test_an_unusable_extractor_saves_no_setting(tmp_path: Path) -> None:
    from ragloom.errors import ConfigurationError

    store = SqliteVectorStore(tmp_path / "kb.db", collection="kb")
    with pytest.raises(ConfigurationError, match="needs a chat model"):
        graph_indexer_for(store, enable=True, extractor="llm",
                          build=lambda name, options: make_extractor(name))
    assert SqliteGraph(store).settings() is None

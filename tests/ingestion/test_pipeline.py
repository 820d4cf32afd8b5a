"""IngestionPipeline from files: skip before parsing, replace, JSONL records, sync."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any

from ragloom.chunking import LineSplitter, PrependTitle
from ragloom.ingestion import AddMetadata, IngestEvent, ParseOptions
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.loaders import Parsed, parse_bytes
from ragloom.resilience import CachedEmbedder, LRUEmbeddingCache
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing import HashingEmbedder
from tests.ingestion.conftest import chunk_ids_by_source, sources, write_folder, write_jsonl

PARSED: list[str] = []


def counting_parse(data: bytes, name: str, mime_type: str | None = None) -> list[Parsed]:
    PARSED.append(name)
    return parse_bytes(data, name, mime_type)


IN_PROCESS = ParseOptions(isolate=False, parse=counting_parse)


def test_unchanged_files_are_not_parsed_nor_embedded(kb: VectorKnowledgeBase, tmp_path: Path,
                                                     embedder: HashingEmbedder) -> None:
    folder = write_folder(tmp_path / "docs")
    first = kb.pipeline().run_paths([str(folder)], parsing=IN_PROCESS)
    assert len(first.new) == 6 and first.texts_embedded == 18
    PARSED.clear()
    embedder.calls.clear()
    second = kb.pipeline().run_paths([str(folder)], parsing=IN_PROCESS)
    assert len(second.unchanged) == 6 and second.texts_embedded == 0
    assert PARSED == [] and embedder.calls == []
    later = os.stat(folder / "doc1.txt").st_mtime + 100
    os.utime(folder / "doc1.txt", (later, later))  # touched, not changed
    third = kb.pipeline().run_paths([str(folder)], parsing=IN_PROCESS)
    assert len(third.unchanged) == 6 and third.texts_embedded == 0 and PARSED == []


def test_a_changed_file_is_replaced_and_only_new_text_embedded(
        store: SqliteVectorStore, tmp_path: Path) -> None:
    inner = HashingEmbedder(64)
    kb = VectorKnowledgeBase(store, CachedEmbedder(inner, LRUEmbeddingCache()), LineSplitter())
    folder = write_folder(tmp_path / "docs")
    kb.pipeline().run_paths([str(folder)], parsing=IN_PROCESS)
    path = folder / "doc2.txt"
    path.write_text(path.read_text() + "\nA brand new closing line.")
    inner.calls.clear()
    report = kb.pipeline().run_paths([str(folder)], parsing=IN_PROCESS)
    assert sources(report, "replaced") == ["doc2.txt"] and len(report.unchanged) == 5
    assert sum(inner.calls) == 1  # three old lines came from the cache
    assert len(chunk_ids_by_source(store)[str(path)]) == 4


def test_batches_span_documents(kb: VectorKnowledgeBase, tmp_path: Path,
                                embedder: HashingEmbedder) -> None:
    folder = write_folder(tmp_path / "docs", count=10)
    kb.pipeline(batch_size=8).run_paths([str(folder)], parsing=IN_PROCESS)
    assert embedder.calls[0] >= 8 and sum(embedder.calls) == 30 and len(embedder.calls) <= 4


def test_jsonl_shrink_loses_records_and_sync_removes_deleted_files(
        kb: VectorKnowledgeBase, store: SqliteVectorStore, tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "docs", count=3)
    records = folder / "records.jsonl"
    write_jsonl(records, 5)
    first = kb.pipeline().run_paths([str(folder)], parsing=IN_PROCESS)
    assert len(first.new) == 8
    write_jsonl(records, 3)
    (folder / "doc0.txt").unlink()
    report = kb.pipeline().run_paths([str(folder)], parsing=IN_PROCESS, sync=True)
    assert sources(report, "removed") == ["doc0.txt", "records.jsonl#3", "records.jsonl#4"]
    held = chunk_ids_by_source(store)
    assert sorted(Path(s).name for s in held) == [
        "doc1.txt", "doc2.txt", "records.jsonl#0", "records.jsonl#1", "records.jsonl#2"]
    PARSED.clear()
    again = kb.pipeline().run_paths([str(folder)], parsing=IN_PROCESS, sync=True)
    assert PARSED == [] and len(again.unchanged) == 5 and again.removed == []


def test_sync_leaves_other_folders_alone(kb: VectorKnowledgeBase, tmp_path: Path) -> None:
    one, two = write_folder(tmp_path / "one", 2), write_folder(tmp_path / "one-more", 2)
    kb.pipeline().run_paths([str(one), str(two)], parsing=IN_PROCESS)
    (two / "doc0.txt").unlink()
    report = kb.pipeline().run_paths([str(one)], parsing=IN_PROCESS, sync=True)
    assert report.removed == []


def test_a_half_stored_jsonl_file_is_parsed_again(kb: VectorKnowledgeBase,
                                                 store: SqliteVectorStore,
                                                 tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    write_jsonl(folder / "records.jsonl", 4)
    kb.pipeline().run_paths([str(folder)], parsing=IN_PROCESS)
    # What a run killed between two records leaves: some records with the file's hash.
    doomed = [d.id for d in store.list_documents() if d.source.endswith(("#2", "#3"))]
    store.delete_documents(doomed)
    report = kb.pipeline().run_paths([str(folder)], parsing=IN_PROCESS)
    assert sources(report, "new") == ["records.jsonl#2", "records.jsonl#3"]
    assert len(report.unchanged) == 2 and len(store.list_documents()) == 4


def test_transformers_change_documents_chunks_and_settings(
        kb: VectorKnowledgeBase, store: SqliteVectorStore, tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "docs", count=2)
    plain = kb.pipeline()
    plain.run_paths([str(folder)], parsing=IN_PROCESS)
    shaped = kb.pipeline(document_transformers=[AddMetadata({"team": "ops"})],
                         chunk_transformers=[PrependTitle()])
    assert shaped.settings != plain.settings
    report = shaped.run_paths([str(folder)], parsing=IN_PROCESS)
    assert len(report.replaced) == 2
    chunk = store.chunks()[0]
    assert chunk.metadata["team"] == "ops" and chunk.text.startswith("doc")


def test_progress_counts_files_and_skips_have_reasons(kb: VectorKnowledgeBase,
                                                     tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "docs", count=2)
    write_jsonl(folder / "r.jsonl", 3)
    (folder / "empty.txt").write_bytes(b"")
    events: list[IngestEvent] = []
    totals: list[int] = []
    report = kb.pipeline().run_paths([str(folder), str(tmp_path / "missing")],
                                     parsing=IN_PROCESS, progress=events.append,
                                     on_files=totals.append)
    assert totals == [5] and sum(e.last_of_file for e in events) == 5
    reasons = dict(report.skipped)
    assert reasons[str(folder / "empty.txt")] == "empty file"
    assert reasons[str(tmp_path / "missing")] == "no such file or directory"


def test_kb_ingest_of_documents_still_streams(kb: VectorKnowledgeBase,
                                              embedder: HashingEmbedder) -> None:
    from ragloom.types import TextDocument

    def generate() -> Any:
        for i in range(20):
            yield TextDocument.create(f"alpha {i}\nbeta {i}", source=f"g{i}")

    report = kb.ingest(generate())
    assert len(report.new) == 20 and max(embedder.calls) <= 8 + 2
    assert kb.ingest(generate()).texts_embedded == 0


def test_isolated_parsing_gives_the_same_documents(kb: VectorKnowledgeBase,
                                                   store: SqliteVectorStore,
                                                   tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "docs", count=3)
    write_jsonl(folder / "r.jsonl", 2)
    kb.pipeline().run_paths([str(folder)], parsing=ParseOptions(
        parse=partial(parse_bytes, text_fields=None)))
    isolated = chunk_ids_by_source(store)
    other = SqliteVectorStore(tmp_path / "other.db", collection="default")
    VectorKnowledgeBase(other, HashingEmbedder(64), LineSplitter()).pipeline().run_paths(
        [str(folder)], parsing=IN_PROCESS)
    assert chunk_ids_by_source(other) == isolated and len(isolated) == 5
    other.close()


def test_read_ahead_gives_the_same_store_and_overlaps_the_source(
        kb: VectorKnowledgeBase, store: SqliteVectorStore) -> None:
    import threading

    from ragloom.types import TextDocument

    threads: set[str] = set()

    def documents() -> Any:
        for i in range(20):
            threads.add(threading.current_thread().name)
            yield TextDocument.create(f"Line one of {i}.\nLine two of {i}.", source=f"d{i}")

    report = kb.pipeline().run(documents(), read_ahead=True)
    assert len(report.new) == 20 and report.chunks_written == 40
    assert threads == {"ragloom-ingest-reader"}
    assert len(chunk_ids_by_source(store)) == 20
    again = kb.pipeline().run(documents(), read_ahead=True)
    assert len(again.unchanged) == 20 and again.texts_embedded == 0


def test_read_ahead_passes_the_source_failure_on(kb: VectorKnowledgeBase) -> None:
    import pytest

    from ragloom.types import TextDocument

    def documents() -> Any:
        yield TextDocument.create("Fine.", source="ok")
        raise RuntimeError("the source broke")

    with pytest.raises(RuntimeError, match="the source broke"):
        kb.pipeline().run(documents(), read_ahead=True)


def test_the_reader_stays_within_its_backlog() -> None:
    import threading
    import time

    from ragloom.ingestion.pipeline import _Backlog

    stop = threading.Event()
    backlog = _Backlog(100, stop)
    assert backlog.reserve(60) and backlog.reserve(40)
    waited: list[float] = []

    def late() -> None:
        started = time.monotonic()
        backlog.reserve(30)
        waited.append(time.monotonic() - started)

    thread = threading.Thread(target=late)
    thread.start()
    time.sleep(0.2)
    assert not waited  # 130 > 100: it waits
    backlog.release(60)
    thread.join(2)
    assert waited and waited[0] >= 0.15 and backlog.used == 70
    stop.set()
    assert backlog.reserve(1000) is False  # no room, and the run stopped: no wait
    backlog.release(70)
    assert backlog.reserve(1000) and backlog.used == 1000  # alone, a big file goes

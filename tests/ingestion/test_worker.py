"""The parser process: a hanging, a memory-eating and a crashing parser are killed and
skipped with their reason, and the files after them still go in."""

from __future__ import annotations

from pathlib import Path

from ragloom.chunking import LineSplitter
from ragloom.ingestion import ParseOptions, ParseWorker
from ragloom.knowledge_base import VectorKnowledgeBase
from ragloom.stores.sqlite import SqliteVectorStore
from ragloom.testing import HashingEmbedder
from tests.ingestion.conftest import write_folder
from tests.ingestion.parsers import crashing_parse, greedy_parse, sleepy_parse

MB = 1024 * 1024


def test_a_hanging_parser_is_killed_and_the_rest_goes_in(store: SqliteVectorStore,
                                                         tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "docs", count=3)
    (folder / "hang.txt").write_text("this parse never ends")
    kb = VectorKnowledgeBase(store, HashingEmbedder(64), LineSplitter())
    report = kb.pipeline().run_paths(
        [str(folder)], parsing=ParseOptions(parse=sleepy_parse, timeout=0.5))
    assert report.skipped == [(str(folder / "hang.txt"), "parse timed out after 0.5 s")]
    assert sorted(Path(s).name for s in report.new) == ["doc0.txt", "doc1.txt", "doc2.txt"]


def test_a_memory_eating_parser_is_stopped(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "docs", count=1)
    (folder / "greedy.txt").write_text("wants all the memory")
    with ParseWorker(ParseOptions(parse=greedy_parse, memory_limit=512 * MB)) as worker:
        greedy = worker.load(str(folder / "greedy.txt"))
        after = worker.load(str(folder / "doc0.txt"))
        assert worker.restarts == 1
    assert greedy[0].document is None and greedy[0].reason == "parser ran out of memory"
    assert after[0].document is not None and "document 0" in after[0].document.text


def test_a_crashing_parser_is_recorded(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "docs", count=1)
    (folder / "crash.txt").write_text("segfaults")
    with ParseWorker(ParseOptions(parse=crashing_parse)) as worker:
        crashed = worker.load(str(folder / "crash.txt"))
        after = worker.load(str(folder / "doc0.txt"))
    assert crashed[0].reason == "parser process died with signal SIGSEGV"
    assert after[0].document is not None


def test_limits_apply_in_the_worker(tmp_path: Path) -> None:
    from ragloom.loaders import ParseLimits

    big = tmp_path / "big.txt"
    big.write_text("x " * 600)
    with ParseWorker(ParseOptions(limits=ParseLimits(max_file_bytes=1000))) as worker:
        result = worker.load(str(big))
    assert result[0].reason is not None and "max_file_bytes=1000" in result[0].reason

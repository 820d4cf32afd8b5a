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


class _HangingFileTimeout(ParseOptions):
    """A short limit for the hanging file only: the good files get minutes, so however
    loaded the machine (a fresh parser process may take seconds to start there), only
    the file that really hangs can time out."""

    def timeout_for(self, path: str) -> float:
        return 0.5 if "hang" in Path(path).name else 300.0


def test_a_hanging_parser_is_killed_and_the_rest_goes_in(store: SqliteVectorStore,
                                                         tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "docs", count=3)
    # Named to come first: the files after the killed parser need a fresh process.
    (folder / "a-hang.txt").write_text("this parse never ends")
    kb = VectorKnowledgeBase(store, HashingEmbedder(64), LineSplitter())
    report = kb.pipeline().run_paths(
        [str(folder)], parsing=_HangingFileTimeout(parse=sleepy_parse))
    assert report.skipped == [(str(folder / "a-hang.txt"), "parse timed out after 0.5 s")]
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


def test_plain_text_formats_parse_without_a_process(tmp_path: Path) -> None:
    files = {"a.txt": "Plain words.", "b.csv": "name,age\nAda,36\n",
             "c.json": '{"text": "A record."}', "d.jsonl": '{"text": "One"}\n{"text": "Two"}\n'}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with ParseWorker(ParseOptions()) as worker:
        results = {name: worker.load(str(tmp_path / name)) for name in files}
        assert (worker.started, worker.in_process) == (0, 4)
    assert results["a.txt"][0].document is not None
    assert results["a.txt"][0].document.text == "Plain words."
    assert "Ada" in (results["b.csv"][0].document.text if results["b.csv"][0].document else "")
    assert [r.document.text for r in results["d.jsonl"] if r.document] == ["One", "Two"]


def test_other_content_keeps_the_worker_whatever_its_name(tmp_path: Path) -> None:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("word/document.xml", "<w:document/>")
    (tmp_path / "zip.txt").write_bytes(buffer.getvalue())
    (tmp_path / "pdf.txt").write_bytes(b"%PDF-1.4\n% not really a PDF\n")
    (tmp_path / "page.txt").write_text("<!DOCTYPE html><html><body>Hi</body></html>")
    (tmp_path / "notes.md").write_text("# Title\n\nText.")
    (tmp_path / "big.txt").write_text("word " * 300)
    options = ParseOptions(in_process_bytes=1000)
    with ParseWorker(options) as worker:
        for name in ("zip.txt", "pdf.txt", "page.txt", "notes.md", "big.txt"):
            before = worker.in_process
            worker.load(str(tmp_path / name))
            assert worker.in_process == before, f"{name} was parsed in-process"
        assert worker.started == 1


def test_a_custom_parser_always_runs_in_the_worker(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Plain words.")
    with ParseWorker(ParseOptions(parse=sleepy_parse)) as worker:
        result = worker.load(str(tmp_path / "a.txt"))
        assert (worker.started, worker.in_process) == (1, 0)
    assert result[0].document is not None


def test_the_whole_content_decides_not_the_head() -> None:
    import pytest

    from ragloom.ingestion.worker import _NeedsWorker, _TextFormatsOnly
    from ragloom.loaders import default_parser

    guard = _TextFormatsOnly(default_parser(), frozenset({"text"}))
    assert guard(b"just text", "a.txt", None)[0].text == "just text"
    with pytest.raises(_NeedsWorker):
        guard(b"%PDF-1.7 ...", "a.txt", None)

"""AttachStream: files loaded lazily, each finished once all its documents are stored."""

from __future__ import annotations

from typing import Any

from ragloom.ingestion.report import IngestEvent
from ragloom.server.v1.attach import AttachStream
from ragloom.types import TextDocument


def _stream(finished: list[tuple[Any, ...]], loaded: list[str]) -> AttachStream:
    def load(file_id: str, row: Any) -> tuple[list[TextDocument], int] | None:
        loaded.append(file_id)
        if file_id == "bad":
            finished.append(("bad", "invalid_file", "not text"))
            return None
        return [TextDocument.create(f"{file_id} part {i}", source=f"{file_id}#{i}")
                for i in range(row)], 10 * row

    def finish(file_id: str, code: str | None, message: str, *, usage: int = 0) -> None:
        finished.append((file_id, code, message, usage))

    return AttachStream([("a", 2), ("bad", 0), ("b", 1)], load=load, finish=finish)


def test_files_load_as_the_reader_reaches_them_and_finish_after_their_last_document() -> None:
    finished: list[tuple[Any, ...]] = []
    loaded: list[str] = []
    stream = _stream(finished, loaded)
    documents = stream.documents()
    first = next(documents)
    assert loaded == ["a"] and first.source == "a#0"
    rest = list(documents)
    assert [d.source for d in rest] == ["a#1", "b#0"] and loaded == ["a", "bad", "b"]
    stream.progress(IngestEvent(source="a#0", outcome="new", chunks=1))
    assert finished == [("bad", "invalid_file", "not text")]
    stream.progress(IngestEvent(source="a#1", outcome="unchanged", chunks=1))
    assert finished[-1] == ("a", None, "", 20)
    assert [f for f, _ in stream.unfinished()] == ["b"]
    stream.progress(IngestEvent(source="b#0", outcome="skipped", reason="no text"))
    assert finished[-1] == ("b", "invalid_file", "no text", 0)
    assert stream.unfinished() == []
    stream.progress(IngestEvent(source="b#0", outcome="new", chunks=1))  # counted once
    assert len(finished) == 3

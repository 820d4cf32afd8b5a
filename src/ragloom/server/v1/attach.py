"""One stream of files into one vector store: parsed ahead, embedded in full batches,
each file finished as soon as its documents are stored.

:class:`AttachStream` feeds :meth:`ragloom.ingestion.IngestionPipeline.run` (with
``read_ahead``): its :meth:`~AttachStream.documents` runs on the pipeline's reader
thread, loading file after file while the embedder works on the chunks of the files
before, and its :meth:`~AttachStream.progress` hears each stored document and moves
a file to ``completed`` (or ``failed``, when every one of its documents was left out)
once the last of them is in. A file is finished only after its documents are
committed, so a server killed at any point leaves unfinished files ``in_progress``
with whole documents or none; they are taken again at restart, and what was
committed comes back ``unchanged``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragloom.ingestion.report import IngestEvent
from ragloom.types import TextDocument

#: Chunks per embedding call: enough texts to sort by length and pad little.
EMBED_BATCH = 256

Load = Callable[[str, Any], "tuple[list[TextDocument], int] | None"]
"""``load(file_id, row)``: the file's documents and byte size, or None when it failed
(the loader has recorded why)."""

Finish = Callable[..., None]
"""``finish(file_id, code, message, usage=bytes)``: record how a file ended."""


@dataclass
class _Track:
    file_id: str
    size: int
    remaining: int
    stored: bool = False
    reasons: list[str] = field(default_factory=list)


class AttachStream:
    """The documents of ``files`` (``(file_id, row)`` pairs), and their outcomes."""

    def __init__(self, files: Sequence[tuple[str, Any]], *, load: Load, finish: Finish) -> None:
        self.files = list(files)
        self._load = load
        self._finish = finish
        self._lock = threading.Lock()
        self._by_source: dict[str, _Track] = {}
        self._done: set[str] = set()

    def documents(self) -> Iterator[TextDocument]:
        """Every document of every file, loading each file when the reader reaches it."""
        for file_id, row in self.files:
            loaded = self._load(file_id, row)
            if loaded is None:
                with self._lock:
                    self._done.add(file_id)
                continue
            documents, size = loaded
            track = _Track(file_id, size, remaining=len(documents))
            with self._lock:
                for document in documents:
                    self._by_source[document.source] = track
            yield from documents

    def progress(self, event: IngestEvent) -> None:
        """Count a document's outcome; finish its file after the last one."""
        with self._lock:
            track = self._by_source.get(event.source)
            if track is None or track.remaining <= 0:
                return
            track.remaining -= 1
            if event.outcome == "skipped":
                track.reasons.append(event.reason or "no text to index")
            else:
                track.stored = True
            if track.remaining:
                return
            self._done.add(track.file_id)
        if track.stored:
            self._finish(track.file_id, None, "", usage=track.size)
        else:
            self._finish(track.file_id, "invalid_file", track.reasons[0])

    def unfinished(self) -> list[tuple[str, Any]]:
        """The files not finished yet (after a failure, to try one by one)."""
        with self._lock:
            return [(file_id, row) for file_id, row in self.files if file_id not in self._done]

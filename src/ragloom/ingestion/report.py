"""What an ingest reports: one :class:`IngestEvent` per document, an :class:`IngestReport`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Outcome = Literal["new", "unchanged", "replaced", "skipped"]


@dataclass(frozen=True, kw_only=True)
class IngestEvent:
    """Progress of an ingest, reported once per document (or per skipped file).

    ``last_of_file`` is False for all but the last document of a file that holds
    several (JSON arrays, JSON Lines), so a progress bar can count files.
    """

    source: str
    outcome: Outcome
    chunks: int = 0
    reason: str = ""
    last_of_file: bool = True


@dataclass(kw_only=True)
class IngestReport:
    """What an ingest did, document by document."""

    new: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    #: Files skipped without parsing: they failed before and have not changed.
    failed_before: list[str] = field(default_factory=list)
    chunks_written: int = 0
    texts_embedded: int = 0
    seconds: float = 0.0

    def record(self, event: IngestEvent) -> None:
        if event.outcome == "skipped":
            self.skipped.append((event.source, event.reason))
        else:
            getattr(self, event.outcome).append(event.source)

    def to_dict(self) -> dict[str, Any]:
        return {
            "new": self.new, "unchanged": self.unchanged, "replaced": self.replaced,
            "skipped": [{"source": s, "reason": r} for s, r in self.skipped],
            "removed": self.removed, "failed_before": self.failed_before,
            "chunks_written": self.chunks_written,
            "texts_embedded": self.texts_embedded, "seconds": round(self.seconds, 3),
        }


ProgressCallback = Callable[[IngestEvent], None]

"""The per-source manifest: what the store already holds for each file.

A file's record is what the store keeps per document: the SHA-256 of the raw
bytes (``content_hash``) and the splitter and embedder settings (``settings``).
JSON arrays and JSON Lines give one document per record, with source
``"<path>#<part>"``, metadata ``parent_source`` = the file and ``part_count`` =
how many documents the file gave; such a file is complete only when that many
records carry its current hash, so a run killed half-way through a file parses
it again next time.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from ragloom.protocols import DocumentIndex, StoredDocument

PART_COUNT_KEY = "part_count"
_READ_SIZE = 1 << 20


@dataclass(frozen=True, kw_only=True)
class ManifestEntry:
    """One stored document, reduced to what change detection needs."""

    id: str
    source: str
    content_hash: str
    settings: str
    chunk_count: int
    part_count: int | None = None


def file_of(document: StoredDocument) -> str:
    """The file a stored document came from: its ``parent_source``, else its source."""
    parent = document.metadata.get("parent_source")
    return str(parent) if parent else document.source


def hash_file(path: str, max_bytes: int | None = None) -> str | None:
    """SHA-256 of the file's bytes, read in pieces; None when it cannot be read or is
    larger than ``max_bytes`` (the parser refuses it then, with its own reason)."""
    digest = hashlib.sha256()
    read = 0
    try:
        with open(path, "rb") as handle:
            while piece := handle.read(_READ_SIZE):
                read += len(piece)
                if max_bytes is not None and read > max_bytes:
                    return None
                digest.update(piece)
    except OSError:
        return None
    return digest.hexdigest()


class Manifest:
    """What the store holds, grouped by file; built once at the start of a run."""

    def __init__(self, entries: dict[str, list[ManifestEntry]]) -> None:
        self._by_file = entries

    @classmethod
    def from_index(cls, index: DocumentIndex) -> Manifest:
        by_file: dict[str, list[ManifestEntry]] = defaultdict(list)
        for document in index.list_documents():
            count = document.metadata.get(PART_COUNT_KEY)
            by_file[file_of(document)].append(ManifestEntry(
                id=document.id, source=document.source, content_hash=document.content_hash,
                settings=document.settings, chunk_count=document.chunk_count,
                part_count=count if isinstance(count, int) else None))
        return cls(dict(by_file))

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._by_file.values())

    def files(self) -> Iterable[str]:
        return self._by_file.keys()

    def documents_of(self, path: str) -> list[ManifestEntry]:
        return list(self._by_file.get(path, ()))

    def unchanged(self, path: str, content_hash: str, settings: str) -> list[ManifestEntry] | None:
        """The stored documents of ``path`` when they are all current and complete."""
        entries = self._by_file.get(path)
        if not entries:
            return None
        if any(e.content_hash != content_hash or e.settings != settings for e in entries):
            return None
        if len(entries) == 1 and entries[0].source == path:
            return entries
        parts = [e for e in entries if e.source != path]
        if len(parts) == len(entries) and entries[0].part_count == len(entries):
            return entries
        return None

    def stale_under(self, roots: Iterable[str]) -> list[ManifestEntry]:
        """Documents whose file lies under one of ``roots`` and no longer exists."""
        prefixes = [(root, root.rstrip(os.sep) + os.sep) for root in roots]
        stale: list[ManifestEntry] = []
        for path, entries in self._by_file.items():
            under = any(path == root or path.startswith(prefix) for root, prefix in prefixes)
            if under and not os.path.isfile(path):
                stale.extend(entries)
        return stale


FAILED_BEFORE = "failed before and unchanged"


class FailedFiles:
    """Files that failed to parse, by content hash, so a re-run skips them until they
    change (``ragloom ingest --retry-failed`` tries them again).

    Kept in a JSON file beside the store (``ingest-failures.json``), per knowledge
    base: ``{knowledge_base: {path: {"hash": sha256, "reason": text}}}``. A missing
    or unreadable file is an empty record.
    """

    def __init__(self, path: str | os.PathLike[str], knowledge_base: str) -> None:
        self.path = os.fspath(path)
        self.knowledge_base = knowledge_base
        self._all: dict[str, dict[str, dict[str, str]]] = {}
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
            if isinstance(data, dict):
                self._all = {str(k): dict(v) for k, v in data.items() if isinstance(v, dict)}
        except (OSError, ValueError):
            self._all = {}
        self._mine = self._all.setdefault(knowledge_base, {})

    def reason(self, path: str, content_hash: str) -> str | None:
        """Why ``path`` failed last time, when its bytes are still the same; else None."""
        entry = self._mine.get(path)
        if isinstance(entry, dict) and entry.get("hash") == content_hash:
            return str(entry.get("reason") or "it failed to parse")
        return None

    def record(self, path: str, content_hash: str, reason: str) -> None:
        self._mine[path] = {"hash": content_hash, "reason": reason}

    def forget(self, path: str) -> None:
        self._mine.pop(path, None)

    def __len__(self) -> int:
        return len(self._mine)

    def save(self) -> None:
        """Write the record (atomically: a temporary file renamed over the old one)."""
        if not self._mine:
            self._all.pop(self.knowledge_base, None)
        folder = os.path.dirname(self.path) or "."
        os.makedirs(folder, exist_ok=True)
        temporary = f"{self.path}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(self._all, handle, ensure_ascii=False, indent=1, sort_keys=True)
        os.replace(temporary, self.path)
        self._all.setdefault(self.knowledge_base, self._mine)

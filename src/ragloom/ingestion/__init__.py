"""Ingestion: files and documents into a knowledge base, incrementally and within bounds.

* :class:`IngestionPipeline`: loader → parser → document transformers → splitter →
  chunk transformers → embedder → store, streaming, in batches that span documents.
* Incremental: a file whose raw bytes (SHA-256) and settings (splitter, transformers,
  embedding model) match the store's record is skipped before parsing
  (:class:`Manifest`); a changed one is replaced in one transaction; ``sync``
  removes the documents of files that disappeared.
* Bounded: each file is parsed under :class:`~ragloom.loaders.ParseLimits` in a
  worker process with a time and a memory limit (:class:`ParseWorker`); plain text,
  CSV and JSON, whose parsers are linear, parse in-process under the same limits.
* Resumable: a killed run leaves whole documents; the next run skips them.
* :mod:`ragloom.ingestion.cache`: the embedding cache the CLI keeps beside the
  database, and how it is kept bounded.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragloom.ingestion.manifest import Manifest, ManifestEntry, file_of, hash_file
    from ragloom.ingestion.pipeline import IngestionPipeline, check_embedder
    from ragloom.ingestion.report import IngestEvent, IngestReport, Outcome, ProgressCallback
    from ragloom.ingestion.sources import FileSelection, SourceFile, list_files
    from ragloom.ingestion.transformers import AddMetadata, DocumentTransformer
    from ragloom.ingestion.worker import ParseOptions, ParseWorker

# Submodules load on first use, so ``import ragloom`` (whose knowledge base reports
# with IngestReport) does not pull in multiprocessing and the loaders.
_WHERE = {
    "Manifest": "manifest", "ManifestEntry": "manifest", "file_of": "manifest",
    "hash_file": "manifest", "IngestionPipeline": "pipeline", "check_embedder": "pipeline",
    "IngestEvent": "report", "IngestReport": "report", "Outcome": "report",
    "ProgressCallback": "report", "FileSelection": "sources", "SourceFile": "sources",
    "list_files": "sources", "AddMetadata": "transformers",
    "DocumentTransformer": "transformers", "ParseOptions": "worker", "ParseWorker": "worker",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'ragloom.ingestion' has no attribute {name!r}")
    return getattr(importlib.import_module(f"ragloom.ingestion.{module}"), name)


__all__ = [
    "AddMetadata",
    "DocumentTransformer",
    "FileSelection",
    "IngestEvent",
    "IngestReport",
    "IngestionPipeline",
    "Manifest",
    "ManifestEntry",
    "Outcome",
    "ParseOptions",
    "ParseWorker",
    "ProgressCallback",
    "SourceFile",
    "check_embedder",
    "file_of",
    "hash_file",
    "list_files",
]

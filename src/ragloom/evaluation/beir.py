"""Load a BEIR folder: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

* corpus.jsonl: one ``{"_id", "title", "text"}`` object per line;
* queries.jsonl: one ``{"_id", "text"}`` object per line;
* qrels/test.tsv: ``query-id<TAB>corpus-id<TAB>score`` with a header line; a score
  above 0 means relevant (graded: 2 is more relevant than 1).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragloom.errors import InvalidInputError
from ragloom.types import TextDocument


@dataclass(frozen=True)
class CorpusEntry:
    id: str
    title: str
    text: str

    def document_text(self) -> str:
        """What a user would ingest: the title, a blank line, the text."""
        return f"{self.title}\n\n{self.text}" if self.title else self.text


@dataclass(frozen=True)
class BeirDataset:
    """A corpus, queries and relevance judgements; ``qrels[query_id][doc_id] = grade``."""

    name: str
    corpus: dict[str, CorpusEntry]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]

    def judged_queries(self, limit: int | None = None) -> list[tuple[str, str]]:
        """(query id, text) of the queries that have at least one relevant document."""
        judged = [(qid, text) for qid, text in self.queries.items()
                  if any(grade > 0 for grade in self.qrels.get(qid, {}).values())]
        return judged[:limit] if limit is not None else judged

    def documents(self) -> Iterator[TextDocument]:
        """One TextDocument per corpus entry; its source is the corpus id."""
        for entry in self.corpus.values():
            yield TextDocument.create(entry.document_text(), source=entry.id,
                                      metadata={"title": entry.title})


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            if not isinstance(item, dict) or "_id" not in item:
                raise InvalidInputError(f"{path}:{number}: expected an object with an '_id'")
            yield item


def load_beir(path: str | Path, *, split: str = "test") -> BeirDataset:
    """Read a BEIR data set folder; raises InvalidInputError naming what is missing."""
    root = Path(path)
    needed = [root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / f"{split}.tsv"]
    missing = [str(p) for p in needed if not p.is_file()]
    if missing:
        raise InvalidInputError(
            f"{root} is not a BEIR data set folder: missing {', '.join(missing)}. It needs "
            "corpus.jsonl, queries.jsonl and qrels/<split>.tsv"
        )
    corpus = {str(item["_id"]): CorpusEntry(str(item["_id"]), str(item.get("title") or ""),
                                            str(item.get("text") or ""))
              for item in _read_jsonl(needed[0])}
    queries = {str(item["_id"]): str(item.get("text") or "") for item in _read_jsonl(needed[1])}
    qrels: dict[str, dict[str, int]] = {}
    with needed[2].open(encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if not row or (number == 1 and row[0].strip().lower() in ("query-id", "query_id")):
                continue
            if len(row) < 3:
                raise InvalidInputError(f"{needed[2]}:{number}: expected 3 tab-separated columns")
            try:
                grade = int(float(row[2]))
            except ValueError as exc:
                raise InvalidInputError(f"{needed[2]}:{number}: score {row[2]!r} is not a number"
                                        ) from exc
            qrels.setdefault(row[0].strip(), {})[row[1].strip()] = grade
    return BeirDataset(name=root.name, corpus=corpus, queries=queries, qrels=qrels)

"""Files that failed to parse are remembered by content hash: a re-run skips them
without parsing until they change (``--retry-failed`` forces a new try)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import FAKE, Cli
from tests.loaders.samples import write_pdf


def _folder(root: Path) -> set[str]:
    root.mkdir()
    (root / "good.txt").write_text("Lanterns are counted nightly.\n", encoding="utf-8")
    write_pdf(root / "fine.pdf")
    good_pdf = (root / "fine.pdf").read_bytes()
    (root / "truncated.pdf").write_bytes(good_pdf[: len(good_pdf) // 3])
    (root / "latin1.txt").write_bytes(b"\xff\xfe\xfa" + bytes(range(128, 256)) * 20)
    (root / "empty.txt").write_bytes(b"")
    return {"truncated.pdf", "latin1.txt", "empty.txt"}


def _names(sources: list[str]) -> set[str]:
    return {Path(s.split("#")[0]).name for s in sources}


def test_failed_files_are_skipped_until_they_change(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "docs"
    bad = _folder(root)
    first: dict = cli.json("ingest", str(root), *FAKE)  # type: ignore[assignment]
    assert {Path(s["source"]).name for s in first["skipped"]} == bad
    assert first["failed_before"] == []
    record = json.loads((cli.db / "ingest-failures.json").read_text())
    assert {Path(p).name for kb in record.values() for p in kb} == bad

    again: dict = cli.json("ingest", str(root), *FAKE)  # type: ignore[assignment]
    assert _names(again["failed_before"]) == bad
    assert all("failed before and unchanged" in s["reason"] for s in again["skipped"])
    assert _names(again["unchanged"]) == {"good.txt", "fine.pdf"}

    text = cli("ingest", str(root), *FAKE).stdout
    assert "3 skipped: failed before and unchanged; --retry-failed to try again" in text

    (root / "empty.txt").write_text("Now it has words.\n", encoding="utf-8")
    changed: dict = cli.json("ingest", str(root), *FAKE)  # type: ignore[assignment]
    assert _names(changed["new"]) == {"empty.txt"}
    assert _names(changed["failed_before"]) == bad - {"empty.txt"}

    retried: dict = cli.json("ingest", str(root), *FAKE, "--retry-failed")  # type: ignore[assignment]
    assert retried["failed_before"] == []
    assert {Path(s["source"]).name for s in retried["skipped"]} == bad - {"empty.txt"}
    assert not any("failed before" in s["reason"] for s in retried["skipped"])

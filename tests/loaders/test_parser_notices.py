"""What parser libraries log or warn ends in the skip reason or the debug log, never raw
on the terminal; and the default install has the parsers for every format."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import pytest

from ragloom.ingestion import ParseOptions
from ragloom.ingestion.worker import ParseWorker
from ragloom.loaders import load_file
from ragloom.loaders.base import Parsed
from ragloom.loaders.files import parse_to_results
from ragloom.loaders.notices import PARSER_LOGGERS
from tests.loaders.samples import write_pdf

REPO = Path(__file__).resolve().parents[2]


def _damaged_pdf(tmp_path: Path) -> Path:
    data = write_pdf(tmp_path / "good.pdf").read_bytes()
    damaged = tmp_path / "damaged.pdf"
    damaged.write_bytes(data[: len(data) // 2])  # no %%EOF: pypdf logs "EOF marker not found"
    return damaged


def test_damaged_pdf_notices_go_into_the_reason(tmp_path: Path,
                                                capfd: pytest.CaptureFixture[str]) -> None:
    damaged = _damaged_pdf(tmp_path)
    in_process = load_file(damaged)
    with ParseWorker(ParseOptions()) as worker:
        isolated = worker.load(str(damaged))
    for results in (in_process, isolated):
        assert results[0].document is None
        assert "EOF marker not found" in (results[0].reason or "")
    printed = capfd.readouterr()
    assert "EOF marker" not in printed.err and "EOF marker" not in printed.out


def _chatty(data: bytes, name: str, mime_type: str | None) -> list[Parsed]:
    logging.getLogger("openpyxl").warning("Workbook contains no default style")
    warnings.warn("Data Validation extension is not supported", UserWarning, stacklevel=1)
    return [Parsed(text=data.decode(), metadata={"format": "text"})]


def test_notices_of_a_good_parse_go_to_the_debug_log(
        caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> None:
    filters_before = list(warnings.filters)
    library = logging.getLogger("openpyxl")
    handlers_before = list(library.handlers)
    with caplog.at_level(logging.DEBUG, logger="ragloom.loaders"):
        results = parse_to_results(b"some text", "/docs/a.xlsx", {}, _chatty)
    assert results[0].document is not None
    logged = " ".join(r.getMessage() for r in caplog.records if r.name == "ragloom.loaders")
    assert "no default style" in logged and "Data Validation" in logged
    assert "no default style" not in capfd.readouterr().err
    # Nothing outside the parse changed.
    assert warnings.filters == filters_before
    assert library.handlers == handlers_before and library.propagate
    assert all(logging.getLogger(name).propagate for name in PARSER_LOGGERS)


def test_the_default_install_has_every_parser() -> None:
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert "ragloom[formats]" in extras["local"]  # make demo installs .[local]
    assert set(extras["formats"]) == {"ragloom[pdf,office,html]"}

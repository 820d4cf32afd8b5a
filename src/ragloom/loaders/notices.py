"""What parser libraries say while they parse, caught instead of printed.

pypdf logs "EOF marker not found" on a damaged PDF, openpyxl warns about styles
it cannot read, and so on. Unhandled, those go straight to the terminal (Python's
last-resort log handler, the warnings module), in the middle of the CLI's progress
output and with no file name. :func:`captured_notices` collects them for the length
of one parse: a file that is skipped carries them in its reason, a file that is
read logs them at debug level on ``ragloom.loaders``. Nothing outside the block
changes: the library loggers get their handlers and ``propagate`` back, and the
warnings filters are restored by :func:`warnings.catch_warnings`.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

# The loggers of the parser libraries ragloom calls (and of what they call).
PARSER_LOGGERS = ("pypdf", "PyPDF2", "openpyxl", "docx", "pptx", "bs4", "html5lib",
                  "charset_normalizer", "PIL")
MAX_NOTICES = 5
_lock = threading.Lock()

log = logging.getLogger("ragloom.loaders")


class _Collect(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.into.append(record.getMessage())
        except Exception:  # a malformed library message must not break the parse
            self.into.append(str(record.msg))


@contextmanager
def captured_notices() -> Iterator[list[str]]:
    """Collect parser-library log warnings and Python warnings raised in the block.

    The list it yields fills as the block runs (first distinct messages first).
    Parses in one process are serialised on a lock while captured, because both
    the warnings filters and logger settings belong to the process.
    """
    notices: list[str] = []
    handler = _Collect(notices)
    with _lock:
        loggers = [logging.getLogger(name) for name in PARSER_LOGGERS]
        saved = [logger.propagate for logger in loggers]
        for logger in loggers:
            logger.addHandler(handler)
            logger.propagate = False
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    yield notices
                finally:
                    notices.extend(f"{w.category.__name__}: {w.message}" for w in caught)
        finally:
            for logger, propagate in zip(loggers, saved, strict=True):
                logger.removeHandler(handler)
                logger.propagate = propagate
    unique = list(dict.fromkeys(n.strip() for n in notices if n.strip()))
    notices[:] = unique


def summary(notices: list[str]) -> str:
    """The notices as one line for a skip reason: ``; parser said: a | b``."""
    if not notices:
        return ""
    shown = notices[:MAX_NOTICES]
    more = f" (+{len(notices) - MAX_NOTICES} more)" if len(notices) > MAX_NOTICES else ""
    return "; parser said: " + " | ".join(" ".join(n.split()) for n in shown) + more

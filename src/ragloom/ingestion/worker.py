"""Parsing in a separate, bounded process.

One persistent worker process parses one file at a time: the main process sends a
path, the worker loads it with :func:`ragloom.loaders.load_file` (under
:class:`~ragloom.loaders.ParseLimits`) and answers with the documents as JSON. The
worker runs under an address-space limit (``RLIMIT_AS``) and the main process
waits at most ``timeout`` seconds per file; a worker that hangs, runs out of memory
or dies is killed, the file is recorded as skipped with the reason, and the next
file gets a fresh worker.

Plain text, CSV, JSON and JSON Lines files up to ``in_process_bytes`` are parsed in
the calling process instead, with the same limits: their parsers are the built-in
ones (the standard library's UTF-8 decoder, ``csv`` and ``json``), linear in the
input, with nothing native of their own that could hang or crash, and a round trip
through the worker costs more than such a parse (about 1 ms of CPU per file, which
on a 2-core machine comes out of the embedder's time). The format is decided from the
file's head the way :func:`~ragloom.loaders.detect.detect_format` decides it, so a
``.txt`` holding a PDF, a ZIP or HTML still goes to the worker. A custom ``parse``
function always runs in the worker.

Messages are JSON over a pipe (no pickle on the data path). The worker is started
with the ``forkserver`` method where the platform has it (``spawn`` elsewhere): a
worker forked from the main process would inherit torch's threads and memory,
and ``forkserver`` restarts a killed worker in about 20 ms against ~0.4 s for
``spawn``. The parse function given to the worker must be importable by name (a
module-level function or a :func:`functools.partial` of one), as multiprocessing
hands it over when it starts the process.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from ragloom.loaders.base import LoadResult, ParseFunction, ParseLimits
from ragloom.types import TextDocument

GIB = 1024 ** 3
#: Formats the built-in parsers read in linear time with the standard library alone.
#: Markdown is not among them: its title pattern backtracks on hostile lines.
IN_PROCESS_FORMATS = frozenset({"text", "csv", "json", "jsonl"})
#: Larger files go to the worker even in those formats, for its memory limit.
IN_PROCESS_BYTES = 8 * 1024 * 1024
_HEAD_BYTES = 8192


@dataclass(frozen=True, kw_only=True)
class ParseOptions:
    """How files are parsed: limits on the content, the time and the memory of a parse.

    ``isolate=False`` parses in the calling process (no time or memory limit).
    ``parse`` replaces :func:`ragloom.loaders.parse_bytes` (it must be importable by
    name when ``isolate`` is on). With the built-in parser, files of
    ``in_process_formats`` up to ``in_process_bytes`` are parsed in the calling
    process even when ``isolate`` is on (an empty set sends every file to the worker).
    """

    limits: ParseLimits = field(default_factory=ParseLimits)
    text_fields: Sequence[str] | None = None
    timeout: float = 30.0
    memory_limit: int | None = 2 * GIB
    isolate: bool = True
    parse: ParseFunction | None = None
    in_process_formats: frozenset[str] = IN_PROCESS_FORMATS
    in_process_bytes: int = IN_PROCESS_BYTES

    def timeout_for(self, path: str) -> float:
        """Seconds one file may take (``timeout``). A subclass may give files different
        limits: the tests give a hanging file a short one and the others plenty, so a
        loaded machine never times a good file out."""
        return self.timeout

    def parser(self) -> ParseFunction:
        if self.parse is not None:
            return self.parse
        from ragloom.loaders import default_parser

        return default_parser(self.limits, self.text_fields)


class _OutOfMemory(BaseException):
    """Escapes the loader's catch-all (which catches Exception) so the worker can
    report the memory limit rather than a generic parser failure."""


@dataclass(frozen=True)
class _Guarded:
    parse: ParseFunction

    def __call__(self, data: bytes, name: str, mime_type: str | None) -> Any:
        try:
            return self.parse(data, name, mime_type)
        except MemoryError as exc:
            raise _OutOfMemory from exc


class _NeedsWorker(BaseException):
    """A file found not to be of an in-process format once read whole (a BaseException,
    so the loader's catch-all does not turn it into a skip)."""


@dataclass(frozen=True)
class _TextFormatsOnly:
    """The built-in parser, for content of the in-process formats only."""

    parse: ParseFunction
    formats: frozenset[str]

    def __call__(self, data: bytes, name: str, mime_type: str | None) -> Any:
        from ragloom.loaders.detect import detect_format

        if detect_format(data, name, mime_type) not in self.formats:
            raise _NeedsWorker
        return self.parse(data, name, mime_type)


def _limit_memory(limit: int | None) -> None:
    if limit is None:
        return
    import resource

    # Where the limit is not allowed, the worker runs without it (the time limit holds).
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def results_to_json(results: Sequence[LoadResult]) -> list[dict[str, Any]]:
    return [{"source": r.source, "reason": r.reason,
             "document": r.document.to_dict() if r.document is not None else None}
            for r in results]


def results_from_json(items: Sequence[dict[str, Any]]) -> list[LoadResult]:
    return [LoadResult(source=str(item["source"]), reason=item.get("reason"),
                       document=TextDocument.from_dict(item["document"])
                       if item.get("document") is not None else None)
            for item in items]


def _worker_main(conn: Connection, parse: ParseFunction, limits: ParseLimits,
                 memory_limit: int | None) -> None:
    from ragloom.loaders import load_file

    _limit_memory(memory_limit)
    guarded = _Guarded(parse)
    while True:
        try:
            request = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        if request.get("stop"):
            return
        try:
            results = load_file(request["path"], limits=limits, parse=guarded)
            reply = json.dumps({"results": results_to_json(results)}).encode("utf-8")
        except (_OutOfMemory, MemoryError):
            reply = b'{"error": "oom"}'
        try:
            conn.send_bytes(reply)
        except MemoryError:
            conn.send_bytes(b'{"error": "oom"}')
        if reply == b'{"error": "oom"}':
            return  # a fresh worker starts with a clean heap


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        # The fork server imports only the loaders, not the caller's __main__ or torch.
        ctx.set_forkserver_preload(["ragloom.ingestion.worker", "ragloom.loaders"])
        return ctx
    return multiprocessing.get_context("spawn")


class ParseWorker:
    """A persistent parser process with a per-file time limit and a memory limit."""

    def __init__(self, options: ParseOptions) -> None:
        self.options = options
        self._parse = options.parser()
        self._process: Any = None
        self._conn: Connection | None = None
        self.restarts = 0
        self.started = 0
        self.in_process = 0

    def _in_process(self, path: str) -> bool:
        """Whether the built-in parser can read this file here (see the module notes)."""
        options = self.options
        if options.parse is not None or not options.in_process_formats:
            return False
        from ragloom.loaders.detect import detect_format

        try:
            with open(path, "rb") as handle:
                if os.fstat(handle.fileno()).st_size > options.in_process_bytes:
                    return False
                head = handle.read(_HEAD_BYTES)
        except OSError:
            return True  # load_file reports why it cannot be read, without a process
        # A cheap look at the head; _TextFormatsOnly decides again on the whole content.
        return (not head.startswith(b"PK")
                and detect_format(head, path) in options.in_process_formats)

    def _start(self) -> Connection:
        if self._conn is not None and self._process is not None and self._process.is_alive():
            conn: Connection = self._conn
            return conn
        self._discard()
        ctx = _context()
        pipe: tuple[Connection, Connection] = ctx.Pipe()
        parent, child = pipe
        process = ctx.Process(
            target=_worker_main, name="ragloom-parse",
            args=(child, self._parse, self.options.limits, self.options.memory_limit),
            daemon=True)
        process.start()
        child.close()
        self._process, self._conn = process, parent
        self.started += 1
        return parent

    def _discard(self) -> None:
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join(5)
            self._process.close()
        if self._conn is not None:
            self._conn.close()
        self._process, self._conn = None, None

    def load(self, path: str) -> list[LoadResult]:
        """The documents of one file, or one skip with a reason; never raises for a
        bad file."""
        from ragloom.loaders import load_file

        if not self.options.isolate:
            return load_file(path, limits=self.options.limits, parse=self._parse)
        if self._in_process(path):
            try:
                results = load_file(path, limits=self.options.limits, parse=_TextFormatsOnly(
                    self._parse, self.options.in_process_formats))
            except _NeedsWorker:
                pass  # the whole content is of another format than its head suggested
            else:
                self.in_process += 1
                return results
        conn = self._start()
        started = time.monotonic()
        try:
            conn.send_bytes(json.dumps({"path": path}).encode("utf-8"))
            timeout = self.options.timeout_for(path)
            if not conn.poll(timeout):
                self._restart()
                return [LoadResult(source=path, reason=f"parse timed out after {timeout:g} s")]
            reply = json.loads(conn.recv_bytes())
        except (EOFError, OSError, BrokenPipeError):
            code = self._process.exitcode if self._process is not None else None
            self._process_join()
            code = self._process.exitcode if self._process is not None else code
            self._restart()
            return [LoadResult(source=path, reason=_death_reason(code, time.monotonic()
                                                                   - started))]
        if reply.get("error") == "oom":
            self._restart()
            return [LoadResult(source=path, reason="parser ran out of memory")]
        return results_from_json(reply["results"])

    def _process_join(self) -> None:
        if self._process is not None:
            self._process.join(1)

    def _restart(self) -> None:
        self.restarts += 1
        self._discard()

    def close(self) -> None:
        if self._conn is not None and self._process is not None and self._process.is_alive():
            try:
                self._conn.send_bytes(b'{"stop": true}')
                self._process.join(2)
            except OSError:
                pass
        self._discard()

    def __enter__(self) -> ParseWorker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _death_reason(exit_code: int | None, seconds: float) -> str:
    import signal

    if exit_code is not None and exit_code < 0:
        try:
            name = signal.Signals(-exit_code).name
        except ValueError:
            name = str(-exit_code)
        if name == "SIGKILL":
            return "parser process was killed (out of memory?)"
        return f"parser process died with signal {name}"
    return f"parser process died (exit code {exit_code}) after {seconds:.1f} s"

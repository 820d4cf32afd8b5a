"""The threaded HTTP server every vendor fake builds on."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Reply:
    """What the fake model says next: text and/or tool calls (name, arguments)."""

    text: str = "Hello from the fake server."
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    input_tokens: int = 11
    output_tokens: int = 7


@dataclass
class Fault:
    """An injected failure; ``hang`` keeps the connection open without answering."""

    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b'{"error": {"message": "injected failure"}}'
    content_type: str = "application/json"
    hang: bool = False


@dataclass
class Response:
    status: int = 200
    body: Any = None
    chunks: list[bytes] | None = None
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


App = Callable[[Recorded, Reply], Response]


def sse(events: list[tuple[str | None, Any]]) -> list[bytes]:
    """Server-sent events: ``(event name or None, JSON data or a raw string)``."""
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        prefix = f"event: {name}\n" if name else ""
        out.append(f"{prefix}data: {payload}\n\n".encode())
    return out


class FakeServer:
    """``with FakeServer(app) as server: ... server.url ...``"""

    def __init__(self, app: App) -> None:
        self.app = app
        self.requests: list[Recorded] = []
        self.faults: deque[Fault] = deque()
        self.replies: deque[Reply] = deque()
        self.default_reply = Reply()
        #: Seconds between streamed chunks (a slow model), and the most requests that
        #: were ever in progress at once (what a client's concurrency limit bounds).
        self.chunk_delay = 0.0
        self.in_flight = 0
        self.max_in_flight = 0
        self._count = threading.Lock()
        self._closing = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        # A short poll interval keeps shutdown (and so each test) fast.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,),
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet tests
                return

            def do_GET(self) -> None:
                server._serve(self)

            def do_POST(self) -> None:
                server._serve(self)

        return Handler

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        with self._count:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self._answer(handler)
        finally:
            with self._count:
                self.in_flight -= 1

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        recorded = Recorded(handler.command, parts.path, parse_qs(parts.query),
                            {k.lower(): v for k, v in handler.headers.items()}, body)
        self.requests.append(recorded)
        if self.faults:
            self._fault(handler, self.faults.popleft())
            return
        reply = self.replies.popleft() if self.replies else self.default_reply
        response = self.app(recorded, reply)
        handler.send_response(response.status)
        handler.send_header("Content-Type", response.content_type)
        for key, value in response.headers.items():
            handler.send_header(key, value)
        if response.chunks is not None:
            handler.send_header("Connection", "close")
            handler.end_headers()
            for chunk in response.chunks:
                if self.chunk_delay:
                    time.sleep(self.chunk_delay)
                handler.wfile.write(chunk)
                handler.wfile.flush()
            return
        data = json.dumps(response.body).encode()
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _fault(self, handler: BaseHTTPRequestHandler, fault: Fault) -> None:
        if fault.hang:
            self._closing.wait(10)
            return
        handler.send_response(fault.status)
        handler.send_header("Content-Type", fault.content_type)
        handler.send_header("Content-Length", str(len(fault.body)))
        for key, value in fault.headers.items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(fault.body)

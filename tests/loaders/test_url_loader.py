from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from ragloom.errors import ParseError
from ragloom.loaders import fetch_url, load_url
from ragloom.loaders import url as url_module

PAGE = b"<html><head><title>Remote</title></head><body><p>Remote text.</p></body></html>"


class _Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        type(self).seen.append(self.path)
        port = int(self.server.server_address[1])  # type: ignore[index]
        routes = {
            "/page": (200, "text/html; charset=utf-8", PAGE),
            "/data": (200, "application/json", b'[{"text": "one"}, {"text": "two"}]'),
            "/notes.md": (200, "application/octet-stream", b"# Remote notes\n\nbody"),
            "/big": (200, "text/plain", b"x" * 300_000),
        }
        if self.path in routes:
            status, kind, body = routes[self.path]
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/hop":
            self.send_response(302)
            self.send_header("Location", "/page")
            self.end_headers()
        elif self.path == "/elsewhere":
            self.send_response(301)
            self.send_header("Location", f"http://127.0.0.2:{port}/page")
            self.end_headers()
        elif self.path in ("/trickle", "/trickle-headers"):
            # One byte every 0.2 s: each read succeeds, the whole never ends in time.
            try:
                if self.path == "/trickle":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                else:
                    self.wfile.write(b"HTTP/1.0 200 OK\r\n")
                for _ in range(100):
                    self.wfile.write(b"x" if self.path == "/trickle" else b"X-Slow: 1\r\n")
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                pass  # the client gave up, as the test wants
        elif self.path == "/slow":
            time.sleep(1.5)
            try:
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"late")
            except OSError:
                pass  # the client gave up, as the test wants
        else:
            self.send_response(404)
            self.end_headers()


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.integration
def test_loads_html_from_a_local_server(server: str) -> None:
    (result,) = load_url(f"{server}/page", allow_private=True)
    assert result.document is not None, result.reason
    assert result.document.text == "Remote text."
    meta = result.document.metadata
    assert meta["title"] == "Remote" and meta["mime_type"] == "text/html"
    assert meta["source"] == f"{server}/page" and meta["modified"] == "2015-10-21T07:28:00Z"


@pytest.mark.integration
def test_content_type_and_extension_pick_the_parser(server: str) -> None:
    records = load_url(f"{server}/data", allow_private=True)
    assert [r.document.text for r in records if r.document] == ["one", "two"]
    assert records[0].source == f"{server}/data#0"
    (notes,) = load_url(f"{server}/notes.md", allow_private=True)
    assert notes.document is not None and notes.document.metadata["title"] == "Remote notes"


@pytest.mark.integration
def test_redirects_are_followed_and_rechecked(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (result,) = load_url(f"{server}/hop", allow_private=True)
    assert result.document is not None and result.document.metadata["url"] == f"{server}/page"

    # Pretend 127.0.0.1 is public; the redirect to 127.0.0.2 must still be refused.
    real = url_module.address_problem

    def only_127_0_0_1_is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address,
                                 ) -> str | None:
        return None if str(address) == "127.0.0.1" else real(address)

    monkeypatch.setattr(url_module, "address_problem", only_127_0_0_1_is_public)
    _Handler.seen.clear()
    (refused,) = load_url(f"{server}/elsewhere")
    assert refused.reason is not None and "127.0.0.2" in refused.reason
    assert _Handler.seen == ["/elsewhere"]


@pytest.mark.integration
def test_size_cap_and_timeout_and_http_errors(server: str) -> None:
    (big,) = load_url(f"{server}/big", allow_private=True, max_bytes=100_000)
    assert big.reason is not None and "max_bytes=100000" in big.reason
    started = time.monotonic()
    (slow,) = load_url(f"{server}/slow", allow_private=True, timeout=0.5)
    assert slow.reason is not None and "timed out" in slow.reason
    assert time.monotonic() - started < 1.4
    (missing,) = load_url(f"{server}/missing", allow_private=True)
    assert missing.reason == "HTTP 404 Not Found"


@pytest.mark.integration
@pytest.mark.parametrize("path", ["/trickle", "/trickle-headers"])
def test_a_trickling_server_is_abandoned_at_the_deadline(server: str, path: str) -> None:
    # Every read gets a byte well within any socket timeout: only an overall
    # deadline ends the fetch.
    started = time.monotonic()
    with pytest.raises(ParseError, match="timed out"):
        fetch_url(f"{server}{path}", allow_private=True, timeout=1.0)
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("url", [
    "http://127.0.0.1/", "http://10.1.2.3/x", "http://169.254.169.254/latest/meta-data",
    "http://[::1]:8080/", "http://localhost/", "http://224.0.0.1/", "http://0.0.0.0/",
    "http://[::ffff:127.0.0.1]/", "http://100.64.0.1/", "http://192.168.1.1/",
    "https://[fe80::1]/",
])
def test_private_addresses_are_refused_without_a_request(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_connection(*args: object, **kwargs: object) -> None:
        raise AssertionError("no connection may be opened")

    monkeypatch.setattr(socket, "create_connection", no_connection)
    with pytest.raises(ParseError, match=r"refused: .* (address|public)"):
        fetch_url(url)
    (result,) = load_url(url)
    assert not result.ok and "allow_private=True" in (result.reason or "")


def test_every_resolved_address_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    def two_addresses(host: str, port: int, *args: object, **kwargs: object) -> list[object]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.5", port))]

    monkeypatch.setattr(socket, "getaddrinfo", two_addresses)
    with pytest.raises(ParseError, match=r"10\.0\.0\.5, a private address"):
        fetch_url("http://mixed.example/")


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "/relative"])
def test_only_http_and_https(url: str) -> None:
    (result,) = load_url(url)
    assert result.reason is not None and "only http and https" in result.reason

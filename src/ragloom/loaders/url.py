"""Loading web pages and files over http and https, safely.

Before connecting, the host is resolved and every address checked: loopback,
private, link-local, multicast, reserved and other non-global addresses are refused
unless ``allow_private=True``. The connection then goes to the checked address (so a
second DNS answer cannot point elsewhere), redirects are followed by hand and checked
the same way, the body is streamed and cut at ``max_bytes``, and every socket
operation has a timeout. Proxy settings from the environment are not used.

``timeout`` is a hard wall-clock deadline for the whole fetch (redirects, headers and
body), not a per-read timeout: a watchdog closes the connection when it passes, and
the body is read in small pieces with the socket timeout cut to the time left, so a
server trickling one byte a second is abandoned on time.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import posixpath
import socket
import ssl
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from ragloom.errors import ParseError
from ragloom.loaders.base import (
    MB,
    LoadResult,
    ParseFunction,
    ParseLimits,
    iso_utc,
    sha256_hex,
)
from ragloom.loaders.files import default_parser, parse_to_results

DEFAULT_MAX_BYTES = 20 * MB
DEFAULT_TIMEOUT = 30.0
MAX_REDIRECTS = 5
READ_SIZE = 16384
USER_AGENT = "ragloom/0.1 (+https://github.com/ragloom)"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True, kw_only=True)
class FetchedResource:
    url: str
    final_url: str
    data: bytes
    content_type: str | None
    last_modified: str | None


def address_problem(address: IPAddress) -> str | None:
    """Why an address must not be fetched without ``allow_private``, or None."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    for label, flag in (("loopback", address.is_loopback), ("link-local", address.is_link_local),
                        ("multicast", address.is_multicast), ("private", address.is_private),
                        ("unspecified", address.is_unspecified),
                        ("reserved", address.is_reserved)):
        if flag:
            return f"a {label} address"
    if not address.is_global:
        return "not a public address"
    return None


def resolve(host: str, port: int, *, allow_private: bool, url: str) -> list[str]:
    """The host's addresses, all checked; ParseError when any is refused."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ParseError(url, f"cannot resolve host {host!r}: {exc}") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise ParseError(url, f"host {host!r} has no address")
    if not allow_private:
        for text in addresses:
            problem = address_problem(ipaddress.ip_address(text.split("%")[0]))
            if problem:
                raise ParseError(url, f"refused: {host} resolves to {text}, {problem} "
                                      "(pass allow_private=True to fetch from it)")
    return addresses


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, address: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, host: str, address: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        # Certificate and SNI use the host name, the connection uses the checked address.
        self.sock = self._context.wrap_socket(  # type: ignore[attr-defined]
            sock, server_hostname=self.host)


def fetch_url(
    url: str, *, allow_private: bool = False, max_bytes: int = DEFAULT_MAX_BYTES,
    timeout: float = DEFAULT_TIMEOUT,
) -> FetchedResource:
    """GET ``url`` with the checks above; ParseError with a reason when refused or failed."""
    deadline = time.monotonic() + timeout
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        parts = urlsplit(current)
        if parts.scheme not in ("http", "https"):
            raise ParseError(url, f"refused: only http and https URLs are loaded, "
                                  f"not {parts.scheme or 'a relative URL'!r}")
        if not parts.hostname:
            raise ParseError(url, "the URL has no host")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        address = resolve(parts.hostname, port, allow_private=allow_private, url=url)[0]
        remaining = max(0.1, deadline - time.monotonic())
        kind = _PinnedHTTPSConnection if parts.scheme == "https" else _PinnedHTTPConnection
        connection = kind(parts.hostname, address, port, remaining)
        watchdog = threading.Timer(remaining, _abort, (connection,))
        watchdog.daemon = True
        watchdog.start()
        try:
            path = parts.path or "/"
            if parts.query:
                path += "?" + parts.query
            connection.request("GET", path, headers={"User-Agent": USER_AGENT,
                                                     "Accept-Encoding": "identity"})
            response = connection.getresponse()
            if response.status in (301, 302, 303, 307, 308):
                location = response.getheader("Location")
                if not location:
                    raise ParseError(url, f"HTTP {response.status} redirect without a Location")
                current = urljoin(current, location)
                continue
            if response.status >= 400:
                raise ParseError(url, f"HTTP {response.status} {response.reason}")
            data = _read_capped(response, connection, url, max_bytes, deadline)
            return FetchedResource(url=url, final_url=current, data=data,
                                   content_type=response.getheader("Content-Type"),
                                   last_modified=response.getheader("Last-Modified"))
        except (OSError, ValueError, http.client.HTTPException) as exc:
            if isinstance(exc, TimeoutError) or time.monotonic() >= deadline:
                raise ParseError(url, f"timed out after {timeout:g} s") from exc
            raise ParseError(url, f"cannot fetch: {exc}") from exc
        finally:
            watchdog.cancel()
            connection.close()
    raise ParseError(url, f"more than {MAX_REDIRECTS} redirects")


def _abort(connection: http.client.HTTPConnection) -> None:
    """The watchdog: end a fetch whose deadline passed, wherever it blocks."""
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _read_capped(
    response: http.client.HTTPResponse, connection: http.client.HTTPConnection, url: str,
    max_bytes: int, deadline: float,
) -> bytes:
    declared = response.getheader("Content-Length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise ParseError(url, f"refused: {declared} bytes, more than max_bytes={max_bytes}")
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ParseError(url, "timed out while downloading")
        if connection.sock is not None:
            connection.sock.settimeout(max(0.05, left))
        # read1: what has arrived (up to READ_SIZE), not a wait for a full buffer.
        chunk = response.read1(READ_SIZE)
        if not chunk:
            if time.monotonic() >= deadline:
                raise ParseError(url, "timed out while downloading")
            return b"".join(chunks)
        size += len(chunk)
        if size > max_bytes:
            raise ParseError(url, f"refused: more than max_bytes={max_bytes} bytes")
        chunks.append(chunk)


def load_url(
    url: str,
    *,
    allow_private: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timeout: float = DEFAULT_TIMEOUT,
    limits: ParseLimits | None = None,
    text_fields: Sequence[str] | None = None,
    parse: ParseFunction | None = None,
) -> list[LoadResult]:
    """The documents at ``url`` (the Content-Type picks the parser), or one skip."""
    try:
        fetched = fetch_url(url, allow_private=allow_private, max_bytes=max_bytes,
                            timeout=timeout)
    except ParseError as exc:
        return [LoadResult(source=url, reason=exc.reason)]
    return load_fetched(fetched, limits=limits, text_fields=text_fields, parse=parse)


def load_fetched(
    fetched: FetchedResource,
    *,
    limits: ParseLimits | None = None,
    text_fields: Sequence[str] | None = None,
    parse: ParseFunction | None = None,
) -> list[LoadResult]:
    """The documents in a fetched resource (fetched apart from parsing, e.g. by a
    server's fetch pool), or one skip."""
    url = fetched.url
    if not fetched.data:
        return [LoadResult(source=url, reason="empty response")]
    path = unquote(urlsplit(fetched.final_url).path)
    name = posixpath.basename(path) or (urlsplit(fetched.final_url).hostname or "index")
    base: dict[str, Any] = {
        "source": url,
        "url": fetched.final_url,
        "mime_type": (fetched.content_type or "").split(";")[0].strip() or None,
        "file_name": name,
        "size": len(fetched.data),
        "fetched": iso_utc(time.time()),
        "content_hash": sha256_hex(fetched.data),
    }
    if fetched.last_modified:
        with contextlib.suppress(TypeError, ValueError):
            base["modified"] = iso_utc(parsedate_to_datetime(fetched.last_modified).timestamp())
    parse = parse or default_parser(limits, text_fields)

    def parse_named(data: bytes, _source: str, mime: str | None) -> Any:
        # The URL's path carries the extension detection may need.
        return parse(data, path or url, mime)

    results = parse_to_results(fetched.data, url, base, parse_named, fetched.content_type)
    return [r if r.ok else LoadResult(source=url, reason=r.reason) for r in results]


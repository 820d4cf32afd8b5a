"""What the server benchmarks share: a free port, and waiting for a server to be ready.

Not a benchmark itself; the scripts run as ``python bench/x.py`` and import it as
``_serving``.
"""

from __future__ import annotations

import socket
import subprocess
import time

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(url: str, process: subprocess.Popen[bytes] | None = None,
               timeout: float = 300) -> None:
    """Return once ``url``/ready answers 200; raise if ``process`` exits or time runs out.

    The timeout is generous: a server that builds its caches first on a loaded machine
    takes minutes.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/ready", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited (status {process.returncode})")
        time.sleep(0.2)
    raise RuntimeError(f"the server at {url} did not become ready in {timeout:.0f} s")

"""Servers for the tests, on 127.0.0.1: an app under uvicorn in a thread, or a real
``ragloom serve`` process, each returned once it answers."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_uvicorn(app: Any, port: int, *, timeout: float = 30,
                  **config: Any) -> tuple[Any, threading.Thread]:
    """``app`` under uvicorn on ``port`` in a daemon thread; the server and its thread.

    Stop it with ``server.should_exit = True`` and ``thread.join(...)``.
    """
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on",
                                           **config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"uvicorn did not start on port {port}")
        time.sleep(0.02)
    return server, thread


def launch_ragloom_serve(db: str | Path, port: int, log: Path, *options: str,
                         **popen: Any) -> subprocess.Popen[bytes]:
    """``python -m ragloom serve`` on ``db`` (a path or URL) and ``port``, not yet
    waited for; its output is appended to ``log``. ``popen`` goes to
    :class:`subprocess.Popen` (``cwd``, ``env``)."""
    command = [sys.executable, "-m", "ragloom", "serve", "--port", str(port), "--db", str(db),
               *options]
    with log.open("ab") as handle:
        return subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, **popen)


def wait_ready(port: int, process: subprocess.Popen[bytes], log: Path,
               timeout: float = 60) -> None:
    """Return once ``/ready`` on ``port`` says 200; kill ``process`` and raise (with the
    end of ``log``) if it exits or ``timeout`` passes first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/ready", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("ragloom serve did not start:\n" + log.read_text()[-3000:])


def start_ragloom_serve(db: str | Path, port: int, log: Path, *options: str,
                        timeout: float = 60, **popen: Any) -> subprocess.Popen[bytes]:
    """``python -m ragloom serve`` on ``db`` and ``port``, once ``/ready`` says 200.

    Its output is appended to ``log`` (a restart on the same log keeps both runs);
    ``popen`` goes to :class:`subprocess.Popen` (``cwd``, ``env``).
    """
    process = launch_ragloom_serve(db, port, log, *options, **popen)
    wait_ready(port, process, log, timeout)
    return process


def wait_done(client: httpx.Client, path: str, timeout: float) -> dict[str, Any]:
    """The job or batch at ``path`` once it is no longer in progress (or at ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        item: dict[str, Any] = client.get(path).json()
        if item["status"] != "in_progress" or time.monotonic() > deadline:
            return item
        time.sleep(0.05)

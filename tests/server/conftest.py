"""A real uvicorn serving ``create_app`` on 127.0.0.1 (a free port), in a thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

FAKE = {"embedder": "fake:hashing-64", "llm": "fake:echo"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LiveServer:
    url: str
    app: Any
    server: Any
    thread: threading.Thread

    @property
    def state(self) -> Any:
        return self.app.state.ragloom

    def client(self, key: str | None = None, **options: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60, **options)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)


def start_server(db: Path, **settings: Any) -> LiveServer:
    import uvicorn

    from ragloom.server.app import create_app
    from ragloom.server.settings import ServerSettings

    port = free_port()
    options = {**FAKE, **settings}
    app = create_app(ServerSettings(port=port, db=db, **options))
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None,
                            access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    live = LiveServer(url=f"http://127.0.0.1:{port}", app=app, server=server, thread=thread)
    live.state.ready.wait(30)
    return live


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = start_server(tmp_path_factory.mktemp("server") / "kb" / "ragloom.db")
    yield server
    server.stop()


def wait_job(client: httpx.Client, job_id: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        job: dict[str, Any] = client.get(f"/api/jobs/{job_id}").json()
        if job["status"] != "in_progress" or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def wait_batch(client: httpx.Client, batch_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        batch: dict[str, Any] = client.get(f"/api/batches/{batch_id}").json()
        if batch["status"] != "in_progress" or time.monotonic() > deadline:
            return batch
        time.sleep(0.05)


def sse_events(text: str) -> list[tuple[str, Any]]:
    import json

    events = []
    for block in text.strip().split("\n\n"):
        name, data = "", ""
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
        if name:
            events.append((name, json.loads(data)))
    return events

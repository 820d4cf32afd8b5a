"""A real uvicorn serving ``create_app`` on 127.0.0.1 (a free port), in a thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serving import free_port, start_uvicorn, wait_done

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

FAKE = {"embedder": "fake:hashing-64", "llm": "fake:echo"}
#: The operator's allow-list of the test servers: one more embedder than their own.
ALLOWED = {"allowed_embedders": ("fake:hashing-32",)}


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
    from ragloom.server.app import create_app
    from ragloom.server.settings import ServerSettings

    port = free_port()
    options = {**FAKE, **ALLOWED, **settings}
    app = create_app(ServerSettings(port=port, db=db, **options))
    server, thread = start_uvicorn(app, port, log_config=None, access_log=False)
    live = LiveServer(url=f"http://127.0.0.1:{port}", app=app, server=server, thread=thread)
    live.state.ready.wait(30)
    return live


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = start_server(tmp_path_factory.mktemp("server") / "kb" / "ragloom.db")
    yield server
    server.stop()


def wait_job(client: httpx.Client, job_id: str, timeout: float = 30) -> dict[str, Any]:
    return wait_done(client, f"/api/jobs/{job_id}", timeout)


def wait_batch(client: httpx.Client, batch_id: str, timeout: float = 60) -> dict[str, Any]:
    return wait_done(client, f"/api/batches/{batch_id}", timeout)


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

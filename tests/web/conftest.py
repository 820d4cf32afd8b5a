"""A real ``ragloom serve`` (fake models, fast) and Debian's Chromium driven by Playwright.

Playwright's own browser download is not available here, so the tests launch the
system Chromium (``make test`` installs Debian's ``chromium`` when it is missing) and
skip with a clear reason when there is none.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("playwright.sync_api", reason="the dev extra (playwright) is not installed")

SCREENSHOTS = Path(__file__).parent / "screenshots"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def chromium_path() -> str | None:
    for candidate in (os.environ.get("RAGLOOM_CHROMIUM"), "/usr/bin/chromium",
                      shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    url: str
    db: Path
    process: subprocess.Popen[bytes]
    key: str | None = None

    def client(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def serve(db: Path, log: Path, *options: str) -> Served:
    port = free_port()
    command = [sys.executable, "-m", "ragloom", "serve", "--port", str(port), "--db", str(db),
               *options]
    process = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(url + "/ready", timeout=2).status_code == 200:
                return Served(url=url, db=db, process=process)
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("ragloom serve did not start:\n" + log.read_text()[-3000:])
        time.sleep(0.1)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("web")
    served = serve(folder / "kb" / "ragloom.db", folder / "server.log",
                   "--embedder", "fake:hashing-64", "--llm", "fake:echo")
    yield served
    served.process.terminate()
    try:
        served.process.wait(15)
    except subprocess.TimeoutExpired:
        served.process.kill()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        pytest.skip("no Chromium found (/usr/bin/chromium): `apt-get install chromium` "
                    "(make test does it) or set RAGLOOM_CHROMIUM")
    SCREENSHOTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class Watched:
    """A page with what it reported: console errors, uncaught errors, dialogs."""

    page: Any
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    accept_dialogs: bool = False

    def shot(self, name: str) -> None:
        self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    # bypass_csp: the page's Content-Security-Policy would block a stray script on its
    # own; without it the tests show that the rendering itself never runs one (and
    # Playwright's and axe's injected scripts need eval).
    context = browser.new_context(viewport={"width": 1280, "height": 860}, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(20_000)
    seen = Watched(page)
    page.on("console", lambda m: seen.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.errors.append(f"uncaught: {e}"))

    def on_dialog(dialog: Any) -> None:
        seen.dialogs.append(f"{dialog.type}: {dialog.message}")
        if seen.accept_dialogs:
            dialog.accept()
        else:
            dialog.dismiss()

    page.on("dialog", on_dialog)
    yield seen
    context.close()

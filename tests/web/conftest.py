"""A real ``ragloom serve`` (fake models, fast) and Debian's Chromium driven by Playwright.

Playwright's own browser download is not available here, so the tests launch the
system Chromium (``make test`` installs Debian's ``chromium`` when it is missing) and
skip with a clear reason when there is none.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serving import free_port, start_ragloom_serve

pytest.importorskip("fastapi")
pytest.importorskip("playwright.sync_api", reason="the dev extra (playwright) is not installed")

SCREENSHOTS = Path(__file__).parent / "screenshots"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
FAKE_MODELS = ("--embedder", "fake:hashing-64", "--llm", "fake:echo")


def chromium_path() -> str | None:
    for candidate in (os.environ.get("RAGLOOM_CHROMIUM"), "/usr/bin/chromium",
                      shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


@dataclass
class Served:
    url: str
    db: Path
    process: subprocess.Popen[bytes]
    key: str | None = None

    def client(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()


@contextmanager
def serving(folder: Path, *options: str) -> Iterator[Served]:
    """``ragloom serve`` on a fresh database in ``folder`` (its log beside it), then stopped."""
    port = free_port()
    db = folder / "kb" / "ragloom.db"
    process = start_ragloom_serve(db, port, folder / "server.log", *options)
    served = Served(url=f"http://127.0.0.1:{port}", db=db, process=process)
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("web"), *FAKE_MODELS) as served:
        yield served


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

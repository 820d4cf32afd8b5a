"""The web page in a real browser against a real ``ragloom serve``.

One module-scoped server; the tests run in order (upload, chat, search, graph, then
the hostile document and accessibility build on what the earlier ones made). The API
key prompt has a server of its own, since a key locks every later request out.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import FAKE_MODELS, Served, Watched, serving

pytestmark = pytest.mark.integration

HOSTILE = ('Payload notes. <script>window.__pwned = 1; alert("script")</script> '
           'The parking garage code is <img src=x onerror="window.__pwned = 2; alert(2)"> 4711.')


def make_pdf(path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.multi_cell(0, 8, "Employee handbook. The unpaid lunch break lasts thirty minutes. "
                   "Alice Martin leads the Lyon office of Acme Corporation.")
    pdf.add_page()
    pdf.multi_cell(0, 8, "Holidays. Every employee of Acme Corporation gets twenty-five days "
                   "of paid holiday per year.")
    pdf.output(str(path))


def make_docx(path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading("Travel policy", level=1)
    document.add_paragraph("Bob Keller approves travel to Berlin for Acme Corporation. "
                           "Train tickets are booked in second class.")
    document.save(str(path))


def goto(watched: Watched, served: Served, screen: str) -> Any:
    page = watched.page
    page.goto(f"{served.url}/#{screen}")
    page.wait_for_selector(f"#screen-{screen}:not([hidden])")
    page.wait_for_load_state("networkidle")
    return page


def no_errors(watched: Watched, allowed: str = "^$") -> None:
    errors = [e for e in watched.errors if not re.search(allowed, e)]
    assert errors == [], errors


def test_page_and_assets_are_served_with_a_strict_policy(server: Served) -> None:
    with server.client() as client:
        page = client.get("/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert "unsafe-inline" not in page.headers["content-security-policy"]
        for asset in re.findall(r'(?:src|href)="(/[^"]+)"', page.text):
            assert client.get(asset).status_code == 200, asset
        assert client.get("/web/../app.py").status_code == 404
        assert client.get("/health").json() == {"status": "ok"}
        assert client.get("/docs").status_code == 200


def test_create_kb_upload_pdf_and_docx(server: Served, watched: Watched,
                                       tmp_path: Path) -> None:
    page = goto(watched, server, "kbs")
    page.fill("#kb-form input[name=name]", "handbook")
    page.check("#kb-form input[name=graph]")
    page.click("#kb-form button[type=submit]")
    page.wait_for_selector("#kb-table td >> text=handbook")
    assert page.locator("#kb-table tbody tr").first.locator("td").nth(1).inner_text() \
        == "fake:hashing-64"
    with server.client() as client:
        assert client.get("/api/knowledge-bases/handbook/graph").json()["settings"]

    make_pdf(tmp_path / "handbook.pdf")
    make_docx(tmp_path / "travel.docx")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    page.click("#tabs a[data-screen=docs]")
    page.wait_for_selector("#screen-docs:not([hidden])")
    page.set_input_files("#file-input", [str(tmp_path / "handbook.pdf"),
                                         str(tmp_path / "travel.docx"),
                                         str(tmp_path / "broken.pdf")])
    for name in ("handbook.pdf", "travel.docx"):
        page.wait_for_selector(f'#uploads li[data-file="{name}"][data-status=completed]',
                               timeout=60_000)
    broken = page.wait_for_selector('#uploads li[data-file="broken.pdf"][data-status=failed]',
                                    timeout=60_000)
    assert "invalid_file" in broken.inner_text()
    page.wait_for_selector("#doc-table td >> text=travel.docx")
    assert page.locator("#doc-table tbody tr").count() == 2
    page.fill("#doc-filter", "travel")
    page.wait_for_function("document.querySelectorAll('#doc-table tbody tr').length === 1")
    page.fill("#doc-filter", "")
    page.wait_for_function("document.querySelectorAll('#doc-table tbody tr').length === 2")
    # Drag and drop goes through the same upload path as the picker.
    page.evaluate("""() => {
        const data = new DataTransfer();
        data.items.add(new File(["Ferries to Zanzibar leave at dawn."], "dropped.txt",
                                {type: "text/plain"}));
        document.querySelector("#drop").dispatchEvent(
            new DragEvent("drop", {dataTransfer: data, bubbles: true, cancelable: true}));
    }""")
    page.wait_for_selector('#uploads li[data-file="dropped.txt"][data-status=completed]')
    page.wait_for_selector("#doc-table td >> text=dropped.txt")
    watched.shot("documents")
    page.click("#tabs a[data-screen=kbs]")
    page.wait_for_selector("#kb-table td.num >> text=3")
    watched.shot("knowledge-bases")
    no_errors(watched)


def test_chat_streams_an_answer_and_opens_the_cited_passage(server: Served,
                                                            watched: Watched) -> None:
    page = goto(watched, server, "chat")
    page.fill("#question", "How long is the unpaid lunch break?")
    page.click("#ask-button")
    answer = page.wait_for_selector(".msg.assistant .cite")
    body = page.locator(".msg.assistant .body").inner_text()
    assert "lunch break" in body.lower()
    assert page.locator(".msg.assistant .quote").count() >= 1
    assert page.locator("#session-list li").count() == 1
    watched.shot("chat")
    answer.click()
    dialog = page.wait_for_selector("#passage-dialog[open]")
    assert "handbook.pdf" in page.inner_text("#passage-title")
    assert "page 1" in page.inner_text("#passage-meta")
    assert "lunch break" in page.inner_text("#passage-text mark").lower()
    watched.shot("chat-citation")
    page.click("#passage-close")
    assert not dialog.is_visible()
    # The session keeps the turn: reopening it shows the answer with its citations.
    page.reload()
    page.wait_for_selector("#session-list li")
    page.click("#session-list button.open")
    page.wait_for_selector(".msg.assistant .cite")
    no_errors(watched)


def test_search_shows_scored_results(server: Served, watched: Watched) -> None:
    page = goto(watched, server, "search")
    page.fill("#search-form input[name=query]", "train tickets second class")
    page.select_option("#search-form select[name=mode]", "keyword")
    page.fill("#search-form input[name=top_k]", "3")
    page.click("#search-form button[type=submit]")
    first = page.wait_for_selector("#search-results li .meta")
    assert "travel.docx" in first.inner_text()
    assert re.search(r"score \d\.\d{3}", first.inner_text())
    page.fill("#search-form textarea[name=filters]", "{not json")
    page.click("#search-form button[type=submit]")
    page.wait_for_selector("#status.error >> text=not valid JSON")
    page.fill("#search-form textarea[name=filters]", "")
    page.click("#search-form button[type=submit]")
    watched.shot("search")
    no_errors(watched)


def test_graph_view_and_entity_click_through(server: Served, watched: Watched) -> None:
    page = goto(watched, server, "graph")
    page.wait_for_selector("#graph-svg g.node")
    assert page.locator("#graph-svg g.node").count() >= 3
    node = page.locator('#graph-svg g.node[data-entity="Acme Corporation"]')
    node.locator("circle").click()
    page.wait_for_selector("#entity-panel h2 >> text=Acme Corporation")
    panel = page.inner_text("#entity-panel")
    assert "handbook.pdf" in panel and "travel.docx" in panel
    assert page.locator("#entity-panel mark").count() >= 1
    watched.shot("graph")
    page.fill("#graph-search", "bob keller")
    page.press("#graph-search", "Enter")
    page.wait_for_selector("#entity-panel h2 >> text=Bob Keller")
    page.click("#entity-panel .neigh button >> nth=0")
    page.wait_for_function(
        "document.querySelector('#entity-panel h2').textContent !== 'Bob Keller'")
    no_errors(watched)


def test_script_in_a_document_or_an_answer_never_runs(server: Served, watched: Watched) -> None:
    with server.client() as client:
        client.post("/api/knowledge-bases", json={"name": "hostile"}).raise_for_status()
        job = client.post("/api/knowledge-bases/hostile/documents/text?wait=30",
                          json={"text": HOSTILE,
                                "source": '<img src=x onerror="window.__pwned=3">.txt'}).json()
        assert job["status"] == "completed"
    page = goto(watched, server, "docs")
    page.select_option("#kb-select", "hostile")
    cell = page.wait_for_selector('#doc-table td:has-text("pwned")')
    assert cell.inner_text() == '<img src=x onerror="window.__pwned=3">.txt'
    page.click("#tabs a[data-screen=chat]")
    page.wait_for_selector("#screen-chat:not([hidden])")
    page.click("#new-session")
    page.fill("#question", "What is the parking garage code?")
    page.click("#ask-button")
    page.wait_for_selector(".msg.assistant .sources button")
    text = page.inner_text(".msg.assistant")
    assert "<img src=x onerror" in text  # shown as text, not parsed as HTML
    page.click(".msg.assistant .sources button")
    page.wait_for_selector("#passage-dialog[open]")
    assert "<script>" in page.inner_text("#passage-text")
    page.click("#passage-close")
    page.click("#tabs a[data-screen=search]")
    page.fill("#search-form input[name=query]", "parking garage code script")
    page.click("#search-form button[type=submit]")
    page.wait_for_selector("#search-results li .text")
    page.wait_for_timeout(300)
    watched.shot("hostile-document")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#main img, #passage-dialog img").count() == 0
    assert page.locator("#main script").count() == 0
    assert watched.dialogs == []
    no_errors(watched)

    # Delete the document, then the knowledge base (each after a confirmation).
    watched.accept_dialogs = True
    page.click("#tabs a[data-screen=docs]")
    page.click('#doc-table button[aria-label^="Delete"]')
    page.wait_for_selector("#doc-table td >> text=No document yet.")
    page.click("#tabs a[data-screen=kbs]")
    page.click('#kb-table button[aria-label="Delete hostile"]')
    page.wait_for_function("!document.querySelector('#kb-table tbody').textContent"
                           ".includes('hostile')")
    assert len(watched.dialogs) == 2 and all(d.startswith("confirm") for d in watched.dialogs)
    no_errors(watched)


def sse(*events: tuple[str, dict[str, Any]]) -> str:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


def test_streamed_notices_errors_and_a_hostile_answer(server: Served, watched: Watched) -> None:
    """The stream is played by the test (page.route): a keyword-fallback notice, several
    deltas, an answer from another model whose text carries markup, then an error."""
    hostile = 'Code <img src=x onerror="window.__pwned=4"> [1]<script>window.__pwned=5</script>'
    source = {"number": 1, "chunk_id": "c1", "document_id": "d1", "source": "<b>x</b>.txt",
              "knowledge_base": "handbook", "score": 1.0, "raw_score": 1.0, "index": 0,
              "page": 3, "text": "Before. " + hostile + " After.", "metadata": {}}
    done = {"question": "q", "answer": "**Code** `4711`\n\n- one\n- two\n\n" + hostile,
            "sources": [source],
            "citations": [{"number": 1, "source": source["source"], "chunk_id": "c1"}],
            "supporting_quotes": [{"text": hostile, "number": 1}],
            "usage": {"input_tokens": 1, "output_tokens": 1}, "model": "other:backup-model",
            "degraded": True, "notice": "keyword search only: the embedder failed"}
    streams = [sse(("sources", {"sources": [source], "degraded": True,
                                "notice": "keyword search only: the embedder failed"}),
                   ("delta", {"text": "Code <img src=x "}),
                   ("delta", {"text": 'onerror="window.__pwned=4"> [1]'}),
                   ("done", done)),
               sse(("sources", {"sources": [source], "degraded": False, "notice": ""}),
                   ("error", {"error": {"message": "the model provider failed",
                                        "type": "api_error"}}))]

    def play(route: Any) -> None:
        route.fulfill(status=200, headers={"Content-Type": "text/event-stream"},
                      body=streams.pop(0))

    page = goto(watched, server, "chat")
    page.route("**/api/sessions/*/ask", play)
    page.click("#new-session")
    page.fill("#question", "What is the code?")
    page.click("#ask-button")
    cite = page.wait_for_selector(".msg.assistant .cite")
    text = page.inner_text(".msg.assistant")
    assert "keyword search only: the embedder failed" in text
    assert "fallback model other:backup-model" in text
    assert '<img src=x onerror="window.__pwned=4">' in text
    # A little Markdown, built as elements: bold, code, a list.
    assert page.inner_text(".msg.assistant strong") == "Code"
    assert page.inner_text(".msg.assistant .answer-text code") == "4711"
    assert page.locator(".msg.assistant .answer-text ul li").count() == 2
    cite.click()
    page.wait_for_selector("#passage-dialog[open]")
    assert "page 3" in page.inner_text("#passage-meta")
    assert "<script>" in page.inner_text("#passage-text mark")
    page.click("#passage-close")
    page.fill("#question", "And again?")
    page.click("#ask-button")
    page.wait_for_selector(".msg.assistant >> text=The answer failed: the model provider failed")
    watched.shot("chat-notices")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#main img, #main script").count() == 0
    assert watched.dialogs == []
    no_errors(watched)


@pytest.mark.parametrize("screen", ["kbs", "docs", "chat", "search", "graph"])
def test_no_serious_accessibility_violation(server: Served, watched: Watched,
                                            screen: str) -> None:
    from axe_playwright_python.sync_playwright import Axe

    page = goto(watched, server, screen)
    page.select_option("#kb-select", "handbook")
    if screen == "graph":
        page.wait_for_selector("#graph-svg g.node")
    if screen == "chat":
        page.click("#session-list button.open")
        page.wait_for_selector(".msg.assistant .cite")
    results = Axe().run(page)
    serious = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
               for v in results.response["violations"]
               if v["impact"] in ("serious", "critical")]
    assert serious == []
    no_errors(watched)


def test_phone_layout(server: Served, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                  has_touch=True, bypass_csp=True)
    page = context.new_page()
    try:
        from tests.web.conftest import SCREENSHOTS

        page.goto(f"{server.url}/#chat")
        page.wait_for_selector("#session-list button.open")
        page.click("#session-list button.open")
        page.wait_for_selector(".msg.assistant .cite")
        width = page.evaluate("document.documentElement.scrollWidth")
        wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
            .filter((e) => e.getBoundingClientRect().right > 391)
            .map((e) => e.tagName + '.' + e.className + '#' + e.id).slice(0, 5)""")
        assert width <= 390, f"the page scrolls sideways on a phone ({width}px): {wide}"
        page.screenshot(path=str(SCREENSHOTS / "phone-chat.png"), full_page=True)
    finally:
        context.close()


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_asks_for_an_api_key_once_one_exists(watched: Watched, tmp_path: Path) -> None:
    with serving(tmp_path, *FAKE_MODELS) as server:
        with server.client() as client:
            client.post("/api/knowledge-bases", json={"name": "handbook"}).raise_for_status()
        made = subprocess.run([sys.executable, "-m", "ragloom", "keys", "create", "--tenant",
                               "default", "--db", str(server.db)],
                              capture_output=True, text=True, check=True)
        key = re.search(r"rlk_[\w-]+", made.stdout)
        assert key, made.stdout
        # The server notices a key made by another process within a couple of seconds.
        deadline = time.monotonic() + 15
        while _status(server.url + "/api/knowledge-bases") != 401:
            assert time.monotonic() < deadline, "the server never asked for the new key"
            time.sleep(0.25)
        page = goto(watched, server, "kbs")
        page.wait_for_selector("#key-dialog[open]")
        watched.shot("api-key")
        page.fill("#key-input", key.group(0))
        page.click("#key-form button[type=submit]")
        page.wait_for_selector("#kb-table td >> text=handbook")
        assert page.evaluate("sessionStorage.getItem('ragloom.apiKey')") == key.group(0)
        assert page.evaluate("localStorage.length") == 0
        no_errors(watched, allowed=r"401")

"""HTML: the main text (``<main>``, else ``<article>``, else the body) without scripts,
styles or navigation, with paragraphs and list items on their own lines; the title.

BeautifulSoup (extra ``html``) repairs broken markup first when it is installed;
the standard library's parser does the job alone otherwise.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from ragloom.loaders.base import Parsed, ParseLimits
from ragloom.loaders.parsers.plain_text import decode_text

SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "nav", "iframe",
                     "object", "canvas", "select", "head", "title"})
_PARAGRAPH = frozenset({"p", "div", "section", "article", "main", "header", "footer", "aside",
                        "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table", "blockquote",
                        "pre", "dl", "figure", "form", "fieldset", "address", "details", "hr",
                        "body", "html"})
_LINE = frozenset({"br", "li", "tr", "dt", "dd", "figcaption", "summary", "caption"})
_CELL = frozenset({"td", "th"})
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed",
                   "source", "track", "wbr", "param"})


class _Renderer(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: list[str] = []
        self.parts: dict[str, list[str]] = {"all": [], "main": [], "article": []}
        self._open = {"main": 0, "article": 0}
        self._skip = 0
        self._pre = 0
        self._in_title = False
        self._first_cell = True
        self._cell = 0  # inside a table cell: line breaks are spaces
        self._lists: list[list[int]] = []  # open lists: [1, n] numbered, [0, 0] bulleted

    def _emit(self, text: str) -> None:
        self.parts["all"].append(text)
        for name, depth in self._open.items():
            if depth:
                self.parts[name].append(text)

    def _spaced(self) -> bool:
        parts = self.parts["all"]
        return bool(parts) and parts[-1][-1:].isspace()

    def _space(self) -> None:
        if not self._spaced():
            self._emit(" ")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in SKIPPED:
            self._skip += 1
            return
        if tag in self._open:
            self._open[tag] += 1
        if tag == "pre":
            self._pre += 1
        if tag == "tr":
            self._first_cell = True
        if tag in ("ol", "ul"):
            self._lists.append([1 if tag == "ol" else 0, 0])
        if self._cell and tag not in _CELL and tag not in {"tr", "table"} and \
                (tag in _PARAGRAPH or tag in _LINE):
            self._space()  # "<th>Low season<br>3 Jan - 27 Mar</th>" is one cell
        elif tag in _PARAGRAPH:
            self._emit("\n\n")
        elif tag in _LINE:
            self._emit("\n")
            if tag == "li" and self._lists and not self._pre:
                # List items keep their markers: "1. Check the calendar", "- No smoking".
                kind = self._lists[-1]
                kind[1] += 1
                self._emit(f"{kind[1]}. " if kind[0] else "- ")
        elif tag in _CELL:
            self._emit("" if self._first_cell else "| " if self._spaced() else " | ")
            self._first_cell = False
            self._cell += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in SKIPPED:
            self.handle_starttag(tag, attrs)
            if tag not in _VOID:
                self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in SKIPPED:
            self._skip = max(0, self._skip - 1)
            return
        if tag in self._open:
            self._open[tag] = max(0, self._open[tag] - 1)
        if tag == "pre":
            self._pre = max(0, self._pre - 1)
        if tag in ("ol", "ul") and self._lists:
            self._lists.pop()
        if tag in _CELL:
            self._cell = max(0, self._cell - 1)
        elif tag in {"tr", "table"}:
            self._cell = 0  # a cell left open ends with its row
        if tag in _PARAGRAPH:
            if self._cell and tag != "table":
                self._space()
            else:
                self._emit("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        if self._skip:
            return
        self._emit(data if self._pre else re.sub(r"\s+", " ", data))

    def text(self) -> str:
        for name in ("main", "article", "all"):
            text = _tidy("".join(self.parts[name]))
            if text:
                return text
        return ""


def _tidy(text: str) -> str:
    lines = [line.strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _render(markup: str) -> tuple[str, str]:
    renderer = _Renderer()
    renderer.feed(markup)
    renderer.close()
    return renderer.text(), " ".join("".join(renderer.title).split())


def _soup_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("bs4") is not None


def html_to_text(markup: str, *, use_soup: bool | None = None) -> tuple[str, str]:
    """``(text, title)`` of an HTML page. ``use_soup=None`` uses BeautifulSoup if present."""
    if use_soup is not False and _soup_available():
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(markup, "html.parser")
        title = " ".join(soup.title.get_text().split()) if soup.title else ""
        for tag in soup(list(SKIPPED)):
            tag.decompose()
        root = soup.find("main") or soup.find("article") or soup.body or soup
        text, _ = _render(str(root))
        return text, title
    return _render(markup)


def parse(data: bytes, name: str, limits: ParseLimits) -> list[Parsed]:
    text, title = html_to_text(decode_text(data, name))
    return [Parsed(text=text, metadata={"title": title} if title else {})]

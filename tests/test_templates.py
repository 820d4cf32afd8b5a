"""The safe renderer of user templates and the sandboxed Jinja environment."""

from __future__ import annotations

import pytest

from ragloom.errors import InvalidInputError
from ragloom.rag import augment_user_query
from ragloom.templates import (
    check_rag_tool_template,
    rag_tool_values,
    render_template,
    sandboxed_jinja,
)
from ragloom.types import TextChunk, TextDocument


def test_named_placeholders_render() -> None:
    assert render_template("[{number}] {text}", {"number": 2, "text": "hi"}) == "[2] hi"
    assert render_template("{{literal}} {a}", {"a": 1}) == "{literal} 1"


@pytest.mark.parametrize("template", [
    "{index:>2000000000}", "{index!r}", "{metadata.values}", "{chunk.__class__}",
    "{0}", "{}", "{index[0]}", "{text:{width}}", "{unclosed",
])
def test_everything_else_is_refused_naming_the_template(template: str) -> None:
    with pytest.raises(InvalidInputError, match="chunk_template"):
        render_template(template, {"index": 1, "text": "t", "width": 5, "metadata": {}})


def test_rag_tool_template_keys_are_names_not_lookups() -> None:
    check_rag_tool_template("[{index}] {chunk.content} {metadata[document_id]} "
                            "{metadata.page}")
    for bad in ("{metadata.__class__}", "{metadata[__len__]}", "{chunk.content.upper}",
                "{metadata[a][b]}"):
        with pytest.raises(InvalidInputError):
            check_rag_tool_template(bad)
    values = rag_tool_values(1, "text", "c1", "d1", {"page": 3}, {"document_id": "d1"})
    assert render_template("{metadata[document_id]}/{chunk.metadata.page}", values) == "d1/3"


def test_augment_user_query_uses_the_safe_renderer() -> None:
    document = TextDocument.create("Leave is 25 days.", source="policy")
    chunk = TextChunk.create(document, "Leave is 25 days.", index=0, start=0, end=17)
    assert "[1] Leave is 25 days." in augment_user_query([chunk], "How long?")
    with pytest.raises(InvalidInputError, match="format spec"):
        augment_user_query([chunk], "q", chunk_template="{text:>2000000000}")
    with pytest.raises(InvalidInputError):
        augment_user_query([chunk], "q", chunk_template="{source.__class__}")


def test_chat_templates_are_sandboxed() -> None:
    from jinja2.exceptions import SecurityError

    env = sandboxed_jinja(keep_trailing_newline=True)
    ok = env.from_string("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}")
    assert ok.render(messages=[{"role": "user", "content": "hi"}]) == "<user>hi"
    crafted = env.from_string(
        "{{ ''.__class__.__mro__[1].__subclasses__() }}")
    with pytest.raises(SecurityError):
        crafted.render()
    mutate = env.from_string("{{ messages.append(1) }}")
    with pytest.raises(SecurityError):
        mutate.render(messages=[])


def test_no_unsandboxed_jinja_environment_in_the_source() -> None:
    import re
    from pathlib import Path

    import ragloom

    root = Path(ragloom.__file__).parent
    pattern = re.compile(r"jinja2\.(Environment|Template)\(|from jinja2 import .*"
                         r"\b(Environment|Template)\b")
    offenders = [str(p.relative_to(root)) for p in root.rglob("*.py")
                 if pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []

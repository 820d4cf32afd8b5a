"""Safe rendering of user-supplied templates.

A ``chunk_template`` comes from whoever calls the API, so ``str.format`` is too
strong for it: a format spec (``{index:>2000000000}``) allocates gigabytes, and
attribute or index access (``{metadata.values}``, ``{chunk.__class__}``) reaches
objects. :func:`render_template` accepts only named placeholders that are keys of
the mapping it is given, without format specs or conversions; a dotted name such as
``{chunk.content}`` is one key of that mapping, never an attribute lookup. Anything
else raises :class:`~ragloom.errors.InvalidInputError` naming the template.

Jinja templates (a model's chat template) are rendered by
:func:`sandboxed_jinja`, a :class:`jinja2.sandbox.ImmutableSandboxedEnvironment`.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Mapping
from typing import Any

from ragloom.errors import InvalidInputError

_SHOWN = 120


def _refuse(label: str, template: str, problem: str, allowed: Iterable[str]) -> InvalidInputError:
    shown = template if len(template) <= _SHOWN else template[:_SHOWN] + "..."
    names = ", ".join("{" + n + "}" for n in sorted(allowed))
    return InvalidInputError(f"{label} {shown!r}: {problem}; a template may use only the "
                             f"named placeholders {names}, without format specs (':...'), "
                             "conversions ('!r') or attribute/index access")


def check_template(template: str, allowed: Iterable[str], *,
                   label: str = "chunk_template", open_prefixes: Iterable[str] = ()) -> None:
    """Raise InvalidInputError unless every placeholder of ``template`` is one of
    ``allowed`` (or starts with one of ``open_prefixes``, e.g. ``"metadata."``)."""
    names = set(allowed)
    prefixes = tuple(open_prefixes)
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise _refuse(label, template, f"cannot be parsed ({exc})", names) from exc
    for _literal, field, spec, conversion in parsed:
        if field is None:
            continue
        if conversion is not None:
            raise _refuse(label, template, f"{{{field}!{conversion}}} has a conversion", names)
        if spec:
            raise _refuse(label, template, f"{{{field}:{spec}}} has a format spec", names)
        if field not in names and not any(_keyed(field, p) for p in prefixes):
            raise _refuse(label, template, f"unknown placeholder {{{field}}}", names)


def render_template(template: str, values: Mapping[str, Any], *,
                    label: str = "chunk_template") -> str:
    """``template`` with each ``{name}`` replaced by ``str(values[name])``."""
    check_template(template, values, label=label)
    out: list[str] = []
    for literal, field, _spec, _conversion in string.Formatter().parse(template):
        out.append(literal)
        if field is not None:
            out.append(str(values[field]))
    return "".join(out)


def _keyed(field: str, prefix: str) -> bool:
    """Whether ``field`` is ``prefix`` and one plain key: ``metadata.page`` or
    ``metadata[page]`` (looked up by name in the mapping, never evaluated)."""
    if not field.startswith(prefix):
        return False
    key = field[len(prefix):]
    if prefix.endswith("["):
        if not key.endswith("]"):
            return False
        key = key[:-1]
    return bool(key) and not key.startswith("_") and not any(c in key for c in ".[]")


def sandboxed_jinja(**options: Any) -> Any:
    """A :class:`jinja2.sandbox.ImmutableSandboxedEnvironment` (templates cannot call
    unsafe methods, reach private attributes or mutate their arguments)."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    return ImmutableSandboxedEnvironment(**options)


#: The placeholders of a RAG tool ``chunk_template`` (Llama Stack's), besides
#: ``{metadata.KEY}``, ``{metadata[KEY]}`` and the same under ``chunk.`` (names of
#: the mapping, not Python attribute or item access).
RAG_TOOL_FIELDS = ("index", "chunk.content", "chunk.chunk_id", "chunk.document_id",
                   "chunk.metadata", "metadata")
RAG_TOOL_OPEN = ("metadata.", "chunk.metadata.", "metadata[", "chunk.metadata[")


def check_rag_tool_template(template: str) -> None:
    check_template(template, RAG_TOOL_FIELDS, open_prefixes=RAG_TOOL_OPEN)


def rag_tool_values(index: int, content: str, chunk_id: str, document_id: str,
                    chunk_metadata: Mapping[str, Any], metadata: Mapping[str, Any]
                    ) -> dict[str, Any]:
    """The values a RAG tool ``chunk_template`` may name, by placeholder."""
    values: dict[str, Any] = {}
    for prefix, mapping in (("chunk.metadata", chunk_metadata), ("metadata", metadata)):
        for key, value in mapping.items():
            values[f"{prefix}.{key}"] = values[f"{prefix}[{key}]"] = value
    values.update({"index": index, "chunk.content": content, "chunk.chunk_id": chunk_id,
                   "chunk.document_id": document_id, "chunk.metadata": dict(chunk_metadata),
                   "metadata": dict(metadata)})
    return values

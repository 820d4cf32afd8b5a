"""Content injectors: the user message the model sees, built from the question and
the retrieved content.

:class:`DefaultContentInjector` fills a template with ``{question}`` and
``{contents}``; each passage is numbered (so answers can cite ``[1]``) and may show
chosen metadata keys (``metadata_keys=("file_name", "page")``) after its text.
Passages past ``max_tokens_in_context`` are left out whole, never cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from ragloom.errors import InvalidInputError
from ragloom.protocols import TokenCounter
from ragloom.types import ChatMessage, QueryMatch

__all__ = ["DEFAULT_INJECTION_TEMPLATE", "ContentInjector", "DefaultContentInjector"]

DEFAULT_INJECTION_TEMPLATE = "Context:\n{contents}\n\nQuestion: {question}"
DEFAULT_PASSAGE_TEMPLATE = "[{number}] {text}"


@runtime_checkable
class ContentInjector(Protocol):
    def inject(self, question: str, contents: Sequence[QueryMatch]) -> ChatMessage: ...


def _approx_tokens(text: str) -> int:
    return max(1, len(text.split()) * 4 // 3)


class DefaultContentInjector:
    """``template`` uses ``{question}`` and ``{contents}``; ``passage_template`` may use
    ``{number}``, ``{text}``, ``{source}``, ``{knowledge_base}`` and any metadata key.
    With no contents the question goes as it is."""

    def __init__(self, *, template: str = DEFAULT_INJECTION_TEMPLATE,
                 passage_template: str = DEFAULT_PASSAGE_TEMPLATE,
                 metadata_keys: Sequence[str] = (), max_tokens_in_context: int | None = 1500,
                 token_counter: TokenCounter | None = None) -> None:
        for name in ("{question}", "{contents}"):
            if name not in template:
                raise InvalidInputError(f"the injection template needs {name}; got {template!r}")
        self.template = template
        self.passage_template = passage_template
        self.metadata_keys = tuple(metadata_keys)
        self.max_tokens_in_context = max_tokens_in_context
        self._count: Callable[[str], int] = (token_counter.count_tokens if token_counter
                                             else _approx_tokens)

    def passage(self, number: int, match: QueryMatch) -> str:
        chunk = match.chunk
        values: dict[str, Any] = {key: chunk.metadata.get(key, "") for key in self.metadata_keys}
        values.update(number=number, text=chunk.text.strip(), source=chunk.source,
                      knowledge_base=match.knowledge_base)
        try:
            block = self.passage_template.format(**values)
        except KeyError as exc:
            raise InvalidInputError(
                f"the passage template uses {exc}, which is not a field; name it in "
                "metadata_keys or use {number}, {text}, {source}, {knowledge_base}") from exc
        shown = [f"{key}: {chunk.metadata[key]}" for key in self.metadata_keys
                 if key in chunk.metadata and "{" + key + "}" not in self.passage_template]
        return block + ("\n(" + "; ".join(shown) + ")" if shown else "")

    def render_contents(self, contents: Sequence[QueryMatch]) -> tuple[str, int]:
        """The passages block and how many passages it holds."""
        blocks: list[str] = []
        used = 0
        for number, match in enumerate(contents, start=1):
            block = self.passage(number, match)
            cost = self._count(block)
            if (self.max_tokens_in_context is not None and blocks
                    and used + cost > self.max_tokens_in_context):
                break
            blocks.append(block)
            used += cost
        return "\n\n".join(blocks), len(blocks)

    def fit(self, contents: Sequence[QueryMatch]) -> list[QueryMatch]:
        """The passages that fit ``max_tokens_in_context`` (the first always does)."""
        _, count = self.render_contents(contents)
        return list(contents[:count])

    def inject(self, question: str, contents: Sequence[QueryMatch]) -> ChatMessage:
        if not contents:
            return ChatMessage.user(question)
        block, _ = self.render_contents(contents)
        # Replace the question last so braces in it are never read as fields.
        text = self.template.replace("{contents}", block).replace("{question}", question.strip())
        return ChatMessage.user(text)

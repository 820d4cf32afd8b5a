"""One settings value for answers: what reaches the model and how answers are checked.

:class:`GenerationSettings` replaces the keyword lists the entry points used to repeat
(temperature, max tokens, system prompt, template, metadata keys, history window,
grounding). The CLI (``ragloom ask`` flags and ``[generation]`` in ``ragloom.toml``),
``NaiveRag``, ``AugmentedRag`` and the server build one and hand it to the
:class:`~ragloom.answering.engine.AnswerEngine`.

Grounding modes:

* ``strict`` (default): an answer must be backed by the sentence it cites, or that
  sentence is quoted instead; weak evidence gives a refusal.
* ``check``: the model's answer is shown; numbers and names found in none of the
  passages it was given are flagged (``unsupported``) but not replaced.
* ``off``: the model's answer as it came.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ragloom.errors import ConfigurationError

Grounding = Literal["strict", "check", "off"]
GROUNDING_MODES: tuple[str, ...] = ("strict", "check", "off")


@dataclass(frozen=True)
class GenerationSettings:
    """What the answering model is sent and how its answer is checked.

    ``temperature`` None leaves the provider's default (the bundled model decodes
    greedily then); ``max_tokens`` bounds the answer; ``system_prompt`` and
    ``template`` (with ``{context}`` and ``{question}``) replace the engine's own
    prompt; ``metadata_keys`` show with each passage; ``history_messages`` and
    ``history_tokens`` bound the earlier turns sent with the question.
    """

    temperature: float | None = None
    max_tokens: int | None = None
    system_prompt: str | None = None
    template: str | None = None
    metadata_keys: tuple[str, ...] = ()
    history_messages: int = 10
    history_tokens: int = 1000
    grounding: Grounding = "strict"
    #: The kind of question when the caller knows it (skips classification).
    kind: str | None = None
    #: Points a summary gives at most (one per section of the document and one more,
    #: at least 8 when it has them).
    summary_points: int = 10
    #: Items a list gathers at most.
    list_items: int = 12
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.grounding not in GROUNDING_MODES:
            raise ConfigurationError(
                f"grounding must be one of {', '.join(GROUNDING_MODES)}, not "
                f"{self.grounding!r}")
        if self.temperature is not None and not 0.0 <= self.temperature <= 2.0:
            raise ConfigurationError(f"temperature must be between 0 and 2, not "
                                     f"{self.temperature}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ConfigurationError(f"max_tokens must be at least 1, not {self.max_tokens}")
        if self.history_messages < 0 or self.history_tokens < 0:
            raise ConfigurationError("the history window cannot be negative")
        if self.template is not None and ("{question}" not in self.template):
            raise ConfigurationError("a prompt template must contain {question} (and "
                                     "usually {context})")

    def with_(self, **changes: Any) -> GenerationSettings:
        """A copy with ``changes`` (None values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def model_options(self, default_max_tokens: int) -> dict[str, Any]:
        """Keyword arguments for ``ModelProvider.chat``/``stream``."""
        options: dict[str, Any] = {"max_tokens": self.max_tokens or default_max_tokens}
        if self.temperature is not None:
            options["temperature"] = self.temperature
        return options

"""The extractors behind :class:`~ragloom.graph.model.GraphExtractor`, by name.

* ``offline``: :class:`~ragloom.graph.offline.OfflineExtractor`, no model (needs the
  ``graph`` extra for its key phrases).
* ``llm``: :class:`~ragloom.graph.llm.LlmExtractor` with a chat model the caller
  builds (any configured ``provider:model``).
"""

from __future__ import annotations

from ragloom.errors import ConfigurationError
from ragloom.graph.model import GraphExtractor
from ragloom.protocols import ModelProvider

EXTRACTORS: dict[str, str] = {
    "offline": "names and key phrases (YAKE) with co-occurrence relations; no model",
    "llm": "a chat model asked for JSON validated against a schema, with retries and a budget",
}


def make_extractor(name: str, *, model: ModelProvider | None = None) -> GraphExtractor:
    """The extractor called ``name``; ``llm`` needs ``model``."""
    if name == "offline":
        from ragloom.graph.offline import OfflineExtractor

        return OfflineExtractor()
    if name == "llm":
        if model is None:
            raise ConfigurationError(
                "the llm graph extractor needs a chat model; name one with --graph-llm "
                "(e.g. local:smollm2) or use --graph-extractor offline")
        from ragloom.graph.llm import LlmExtractor

        return LlmExtractor(model)
    raise ConfigurationError(
        f"unknown graph extractor {name!r}; use one of {', '.join(EXTRACTORS)}")

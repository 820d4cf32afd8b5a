"""``provider:model`` names to provider objects, importing only what is asked for.

Each entry names a module and a factory function ``create(model, **options)``;
the module is imported when the name is used, so ``import ragloom`` stays light and
a missing extra fails only for the provider that needs it. Configuration names
entries here; it never holds import paths.
"""

from __future__ import annotations

import importlib
from typing import Any

from ragloom.errors import ConfigurationError
from ragloom.protocols import EmbeddingProvider, ModelProvider

EMBEDDERS: dict[str, str] = {
    "local": "ragloom.embeddings.local",
    "hf": "ragloom.embeddings.local",
    "openai": "ragloom.embeddings.openai",
    "ollama": "ragloom.embeddings.ollama",
    "gemini": "ragloom.embeddings.gemini",
    "fake": "ragloom.testing.fakes",
}

MODELS: dict[str, str] = {
    "local": "ragloom.models.local",
    "openai": "ragloom.models.openai",
    "ollama": "ragloom.models.ollama",
    "anthropic": "ragloom.models.anthropic",
    "gemini": "ragloom.models.gemini",
    "gguf": "ragloom.models.llamacpp",
    "fake": "ragloom.testing.fakes",
}

DEFAULT_EMBEDDER = "local:all-MiniLM-L6-v2-int8"
DEFAULT_MODEL = "local:smollm2"


def split_name(name: str, kind: str) -> tuple[str, str]:
    """``"openai:gpt-4o-mini"`` -> ``("openai", "gpt-4o-mini")``."""
    provider, sep, model = name.partition(":")
    if not sep or not provider or not model:
        raise ConfigurationError(
            f"{kind} {name!r} is not of the form provider:model, e.g. {DEFAULT_EMBEDDER!r}"
            if kind == "embedder" else
            f"{kind} {name!r} is not of the form provider:model, e.g. {DEFAULT_MODEL!r}"
        )
    return provider.lower(), model


def _factory(table: dict[str, str], name: str, kind: str, factory: str) -> tuple[Any, str, str]:
    provider, model = split_name(name, kind)
    module_name = table.get(provider)
    if module_name is None:
        known = ", ".join(sorted(table))
        raise ConfigurationError(f"unknown {kind} provider {provider!r}; known: {known}")
    module = importlib.import_module(module_name)
    return getattr(module, factory), provider, model


def make_embedder(name: str, **options: Any) -> EmbeddingProvider:
    """An embedding provider from its ``provider:model`` name. Loads nothing yet."""
    create, provider, model = _factory(EMBEDDERS, name, "embedder", "create_embedder")
    embedder: EmbeddingProvider = create(model, provider=provider, **options)
    return embedder


def make_model(name: str, **options: Any) -> ModelProvider | None:
    """A chat model from its ``provider:model`` name; ``"none"`` means retrieval only."""
    if name.strip().lower() == "none":
        return None
    create, provider, model = _factory(MODELS, name, "language model", "create_model")
    chat_model: ModelProvider = create(model, provider=provider, **options)
    return chat_model

"""Settings for the CLI and the server edge: ``ragloom.toml``, environment, flags.

The library itself takes collaborators as arguments; only the edges resolve
settings, with this precedence (highest first)::

    explicit overrides (CLI flags) > environment > ./ragloom.toml
        > ~/.config/ragloom/ragloom.toml > defaults

A ``ragloom.toml``::

    db = ".ragloom"
    knowledge_base = "default"
    embedder = "openai:text-embedding-3-small"
    llm = "openai:gpt-4o-mini"
    fallback_llm = "ollama:llama3.2"

    [chunking]                 # how `ragloom ingest` splits documents
    splitter = "recursive"     # recursive, markdown, sentence, paragraph, line, word, ...
    chunk_size = 200           # in the embedder's tokens (tiktoken for OpenAI embedders)
    chunk_overlap = 30

    [retrieval]                # how `ragloom ask` retrieves
    mode = "hybrid"            # vector, keyword, hybrid
    top_k = 5
    ranker = "weighted"        # weighted (alpha) or rrf (impact_factor)

    [generation]               # how `ragloom ask` answers
    prompt_template = "Context:\n{contents}\n\nQuestion: {question}"
    metadata_keys = ["file_name", "page"]
    temperature = 0.2
    memory_size = 10           # messages of a --session that reach the model
    grounding = "strict"       # strict, check or off (see docs/answers.md)

    [server]                   # `ragloom serve`
    otel = true                # OpenTelemetry traces (extra otel; see ragloom.tracing)
    otel_exporter = "auto"     # auto (OTLP when installed), otlp, console, none
    otel_record_results = false  # document ids and scores on retrieval spans
    cache_entries = 1000       # cached query embeddings and searches per tenant (0: off)
    cache_mb = 64              # largest size of each cache, all tenants together

    [server]                   # ragloom serve: what tenants may name
    allowed_embedders = ["hf:BAAI/bge-small-en-v1.5"]   # besides the server's own
    allowed_llms = []
    allowed_hosts = []         # Host names served without API keys, besides localhost
    [server.tenants.acme]      # more for one tenant
    allowed_embedders = ["openai:text-embedding-3-small"]

    [providers.openai]
    base_url = "http://127.0.0.1:8000/v1"   # any OpenAI-compatible server
    timeout = 30                            # seconds
    max_retries = 3
    requests_per_minute = 500
    tokens_per_minute = 200000

Environment: ``RAGLOOM_DB``, ``RAGLOOM_KB``, ``RAGLOOM_EMBEDDER``, ``RAGLOOM_LLM``,
``RAGLOOM_FALLBACK_LLM``, and the base URLs ``OPENAI_BASE_URL``,
``ANTHROPIC_BASE_URL``, ``OLLAMA_HOST``, ``GEMINI_BASE_URL``. Secrets (API keys)
live only in the environment: a toml key that looks like one is refused.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ragloom.errors import ConfigurationError
from ragloom.protocols import EmbeddingProvider, ModelProvider
from ragloom.registry import DEFAULT_EMBEDDER, DEFAULT_MODEL, make_embedder, make_model, split_name

PROJECT_FILE = "ragloom.toml"
REMOTE_PROVIDERS = frozenset({"openai", "anthropic", "ollama", "gemini"})
DEFAULT_MAX_RETRIES = 3

ENV_SETTINGS = {
    "RAGLOOM_DB": "db",
    "RAGLOOM_KB": "knowledge_base",
    "RAGLOOM_EMBEDDER": "embedder",
    "RAGLOOM_LLM": "llm",
    "RAGLOOM_FALLBACK_LLM": "fallback_llm",
}
ENV_BASE_URLS = {
    "OPENAI_BASE_URL": "openai",
    "ANTHROPIC_BASE_URL": "anthropic",
    "OLLAMA_HOST": "ollama",
    "GEMINI_BASE_URL": "gemini",
}
_SECRET = re.compile(r"(api[_-]?key|secret|password|passwd|credential|(^|[_-])token$)",
                     re.IGNORECASE)


@dataclass(frozen=True)
class ProviderOptions:
    """Connection settings for one provider (``openai``, ``ollama``, ...)."""

    base_url: str | None = None
    timeout: float | None = None
    max_retries: int | None = None
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None

    def client_options(self) -> dict[str, Any]:
        """The options the provider factories take (only those that are set)."""
        options: dict[str, Any] = {}
        if self.base_url:
            options["base_url"] = self.base_url
        if self.timeout is not None:
            options["timeout"] = float(self.timeout)
        return options


@dataclass(frozen=True)
class Settings:
    """Resolved settings; build one with :func:`load_settings`."""

    db: str = ".ragloom"
    knowledge_base: str = "default"
    embedder: str = DEFAULT_EMBEDDER
    llm: str = DEFAULT_MODEL
    fallback_llm: str | None = None
    providers: Mapping[str, ProviderOptions] = field(default_factory=dict)
    chunking: Mapping[str, Any] = field(default_factory=dict)
    retrieval: Mapping[str, Any] = field(default_factory=dict)
    generation: Mapping[str, Any] = field(default_factory=dict)
    server: Mapping[str, Any] = field(default_factory=dict)
    sources: tuple[str, ...] = ()

    def provider(self, name: str) -> ProviderOptions:
        return self.providers.get(name, ProviderOptions())


#: The tables that configure the pipeline without Python, and the keys each takes.
SECTION_KEYS: dict[str, frozenset[str]] = {
    "chunking": frozenset({"splitter", "chunk_size", "chunk_overlap", "pattern"}),
    "retrieval": frozenset({"mode", "top_k", "ranker", "alpha", "impact_factor",
                            "score_threshold", "candidates"}),
    "generation": frozenset({"prompt_template", "system_prompt", "metadata_keys",
                             "temperature", "max_answer_tokens", "memory_size",
                             "history_tokens", "max_infer_iters", "grounding"}),
    # ragloom serve: the edge policy (models tenants may name besides the server's own,
    # Host names served without API keys, per tenant [server.tenants.NAME] lists) and
    # OpenTelemetry traces, and the caches' bounds.
    "server": frozenset({"allowed_embedders", "allowed_llms", "allowed_hosts", "tenants",
                         "otel", "otel_exporter", "otel_record_results", "cache_entries",
                         "cache_mb"}),
}
_TOP_KEYS = {"db", "knowledge_base", "embedder", "llm", "fallback_llm", "providers",
             *SECTION_KEYS}
_PROVIDER_KEYS = {f.name for f in fields(ProviderOptions)}


def _refuse_secrets(data: Mapping[str, Any], where: str, path: str = "") -> None:
    for key, value in data.items():
        dotted = f"{path}{key}"
        if _SECRET.search(key):
            raise ConfigurationError(
                f"{where}: the key {dotted!r} looks like a secret; put secrets in the "
                "environment (e.g. OPENAI_API_KEY), never in ragloom.toml")
        if isinstance(value, Mapping):
            _refuse_secrets(value, where, dotted + ".")


def _validate(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    _refuse_secrets(data, where)
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ConfigurationError(f"{where}: unknown setting(s) {sorted(unknown)}; "
                                 f"known: {sorted(_TOP_KEYS)}")
    for section, known in SECTION_KEYS.items():
        _check_table(data.get(section, {}), known, where, section)
    providers = data.get("providers", {})
    if not isinstance(providers, Mapping):
        raise ConfigurationError(f"{where}: [providers] must be a table of tables")
    for name, options in providers.items():
        _check_table(options, _PROVIDER_KEYS, where, f"providers.{name}")
    return dict(data)


def _check_table(table: object, known: Collection[str], where: str, section: str) -> None:
    """``[section]`` is a table whose keys are all ``known``."""
    if not isinstance(table, Mapping):
        raise ConfigurationError(f"{where}: [{section}] must be a table")
    bad = set(table) - set(known)
    if bad:
        raise ConfigurationError(f"{where}: unknown option(s) {sorted(bad)} in "
                                 f"[{section}]; known: {sorted(known)}")


def read_toml(path: Path) -> dict[str, Any]:
    """One settings file, validated; an absent file is empty."""
    if not path.is_file():
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            return {}
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"cannot read {path}: {exc}") from exc
    return _validate(data, str(path))


def _env_layer(env: Mapping[str, str]) -> dict[str, Any]:
    layer: dict[str, Any] = {key: env[var] for var, key in ENV_SETTINGS.items() if env.get(var)}
    providers = {name: {"base_url": env[var]} for var, name in ENV_BASE_URLS.items()
                 if env.get(var)}
    if providers:
        layer["providers"] = providers
    return layer


def _merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        if value is None:
            continue
        if key in SECTION_KEYS:
            merged[key] = {**merged.get(key, {}),
                           **{k: v for k, v in value.items() if v is not None}}
        elif key == "providers":
            providers = {name: dict(opts) for name, opts in merged.get("providers", {}).items()}
            for name, opts in value.items():
                providers.setdefault(name, {}).update(
                    {k: v for k, v in opts.items() if v is not None})
            merged["providers"] = providers
        else:
            merged[key] = value
    return merged


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    user_config: str | Path | None = None,
) -> Settings:
    """Resolve settings: ``overrides`` (CLI flags; ``None`` values are ignored) >
    environment > ``<cwd>/ragloom.toml`` > the user file > defaults.

    ``env``, ``cwd`` and ``user_config`` default to the process environment, the
    current directory and ``~/.config/ragloom/ragloom.toml``.
    """
    env = os.environ if env is None else env
    project = Path(cwd or Path.cwd()) / PROJECT_FILE
    user = (Path(user_config) if user_config is not None
            else Path.home() / ".config" / "ragloom" / PROJECT_FILE)
    merged: dict[str, Any] = {}
    sources: list[str] = []
    for path in (user, project):
        layer = read_toml(path)
        if layer:
            sources.append(str(path))
        merged = _merge(merged, layer)
    merged = _merge(merged, _env_layer(env))
    if overrides:
        merged = _merge(merged, _validate(
            {k: v for k, v in overrides.items() if v is not None}, "overrides"))
    providers = {}
    for name, options in merged.pop("providers", {}).items():
        try:
            providers[name] = ProviderOptions(**options)
        except TypeError as exc:
            raise ConfigurationError(f"[providers.{name}]: {exc}") from exc
    return Settings(**merged, providers=providers, sources=tuple(sources))


def _options(settings: Settings, name: str, kind: str) -> tuple[str, ProviderOptions]:
    provider, _ = split_name(name, kind)
    return provider, settings.provider(provider)


def _wrap(
    provider_obj: Any, provider: str, options: ProviderOptions, sleep: Callable[[float], None]
) -> Any:
    from ragloom.resilience import RateLimited, Retrying

    wrapped = provider_obj
    if options.requests_per_minute or options.tokens_per_minute:
        wrapped = RateLimited(wrapped, requests_per_minute=options.requests_per_minute,
                              tokens_per_minute=options.tokens_per_minute, sleep=sleep)
    if provider in REMOTE_PROVIDERS:
        retries = DEFAULT_MAX_RETRIES if options.max_retries is None else options.max_retries
        if retries > 0:
            wrapped = Retrying(wrapped, max_attempts=retries + 1, sleep=sleep)
    return wrapped


def build_model(settings: Settings, *, sleep: Callable[[float], None] = time.sleep
                ) -> ModelProvider | None:
    """The chat model the settings name (``None`` for ``llm = "none"``).

    Remote providers get their ``[providers.X]`` options (base_url, timeout), a
    client-side rate limit when ``requests_per_minute`` / ``tokens_per_minute`` are
    set, and :func:`~ragloom.resilience.Retrying` (``max_retries``, default 3).
    With ``fallback_llm`` the result is a :class:`~ragloom.resilience.FallbackChain`
    that answers from the fallback when the first model fails. Loads nothing yet.
    """
    from ragloom.resilience import FallbackChain

    chain: list[ModelProvider] = []
    for name in (settings.llm, settings.fallback_llm):
        if not name:
            continue
        if name.strip().lower() == "none":
            if name is settings.llm:
                return None
            continue
        provider, options = _options(settings, name, "language model")
        model = make_model(name, **options.client_options())
        assert model is not None
        chain.append(_wrap(model, provider, options, sleep))
    if len(chain) == 1:
        return chain[0]
    return FallbackChain(chain)


def build_embedder(settings: Settings, *, sleep: Callable[[float], None] = time.sleep
                   ) -> EmbeddingProvider:
    """The embedder the settings name, with the provider's options, rate limit and
    retries as in :func:`build_model`. Loads nothing yet."""
    provider, options = _options(settings, settings.embedder, "embedder")
    embedder = make_embedder(settings.embedder, **options.client_options())
    wrapped: EmbeddingProvider = _wrap(embedder, provider, options, sleep)
    return wrapped


def search_options(settings: Settings, **flags: Any) -> Any:
    """SearchOptions from ``[retrieval]``, with CLI flags (None: not given) on top."""
    from ragloom.retrieval.options import SearchOptions

    values = {**settings.retrieval, **{k: v for k, v in flags.items() if v is not None}}
    if values.get("graph"):
        # Graph-aware retrieval lives above the retrieval layer: importing it hands
        # its search to ragloom.retrieval (see ragloom.graph.retrieval).
        import ragloom.graph  # noqa: F401
    try:
        return SearchOptions(**values)
    except TypeError as exc:
        raise ConfigurationError(f"[retrieval]: {exc}") from exc


def build_chunker(settings: Settings, embedder: EmbeddingProvider, **flags: Any) -> Any:
    """The splitter ``[chunking]`` (and flags) name, sized in the embedder's tokens;
    None when nothing is configured (the knowledge base's default applies)."""
    values = {**settings.chunking, **{k: v for k, v in flags.items() if v is not None}}
    if not values:
        return None
    from ragloom.chunking.factory import make_splitter
    from ragloom.chunking.tokens import token_counter_for
    from ragloom.protocols import TokenCounter

    name = str(values.pop("splitter", "recursive"))
    counter = embedder if isinstance(embedder, TokenCounter) else token_counter_for(
        embedder.name)
    if counter is not None and name in ("recursive", "markdown"):
        values["token_counter"] = counter
    return make_splitter(name, **values)

"""Settings resolution: flags > environment > project toml > user toml > defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.config import Settings, build_embedder, build_model, load_settings
from ragloom.errors import ConfigurationError
from ragloom.registry import DEFAULT_EMBEDDER, DEFAULT_MODEL
from ragloom.resilience import FallbackChain, RetryingEmbedder, RetryingModel


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_files_or_env(tmp_path: Path) -> None:
    settings = load_settings(env={}, cwd=tmp_path, user_config=tmp_path / "none.toml")
    assert settings == Settings()
    assert (settings.embedder, settings.llm) == (DEFAULT_EMBEDDER, DEFAULT_MODEL)


def test_precedence(tmp_path: Path) -> None:
    user = write(tmp_path / "home" / "ragloom.toml",
                 'llm = "ollama:user"\nembedder = "fake:user"\ndb = "user.db"\n'
                 'knowledge_base = "user-kb"\n[providers.ollama]\ntimeout = 5\n')
    write(tmp_path / "proj" / "ragloom.toml",
          'llm = "ollama:project"\nembedder = "fake:project"\n'
          '[providers.ollama]\nbase_url = "http://project:11434"\n')
    env = {"RAGLOOM_LLM": "ollama:env", "OLLAMA_HOST": "http://env:11434"}
    settings = load_settings({"llm": "ollama:flag", "db": None}, env=env,
                             cwd=tmp_path / "proj", user_config=user)
    assert settings.llm == "ollama:flag"          # flag beats env
    assert settings.embedder == "fake:project"    # project beats user
    assert settings.db == "user.db"               # a None flag does not override
    assert settings.knowledge_base == "user-kb"
    ollama = settings.provider("ollama")
    assert ollama.base_url == "http://env:11434"  # env beats project
    assert ollama.timeout == 5                    # tables merge key by key
    assert len(settings.sources) == 2


@pytest.mark.parametrize("key", ["api_key", "OPENAI_API_KEY", "secret", "token", "auth_token"])
def test_secrets_in_toml_are_refused(tmp_path: Path, key: str) -> None:
    write(tmp_path / "ragloom.toml", f'[providers.openai]\n{key} = "sk-123"\n')
    with pytest.raises(ConfigurationError, match="environment") as info:
        load_settings(env={}, cwd=tmp_path, user_config=tmp_path / "none")
    assert "sk-123" not in str(info.value)


def test_unknown_keys_and_bad_toml(tmp_path: Path) -> None:
    write(tmp_path / "a" / "ragloom.toml", 'lmm = "typo"\n')
    with pytest.raises(ConfigurationError, match="lmm"):
        load_settings(env={}, cwd=tmp_path / "a", user_config=tmp_path / "none")
    write(tmp_path / "b" / "ragloom.toml", "[providers.openai]\nbase_urll = 'x'\n")
    with pytest.raises(ConfigurationError, match="base_urll"):
        load_settings(env={}, cwd=tmp_path / "b", user_config=tmp_path / "none")
    write(tmp_path / "c" / "ragloom.toml", "llm = [unclosed\n")
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_settings(env={}, cwd=tmp_path / "c", user_config=tmp_path / "none")


def test_tokens_per_minute_is_not_a_secret(tmp_path: Path) -> None:
    write(tmp_path / "ragloom.toml", "[providers.openai]\ntokens_per_minute = 1000\n"
          "requests_per_minute = 10\nmax_retries = 1\n")
    settings = load_settings(env={}, cwd=tmp_path, user_config=tmp_path / "none")
    assert settings.provider("openai").tokens_per_minute == 1000


def test_build_model_wraps_remote_models_and_chains_fallback(tmp_path: Path) -> None:
    settings = load_settings({"llm": "openai:gpt-x", "fallback_llm": "ollama:llama-x"},
                             env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, cwd=tmp_path,
                             user_config=tmp_path / "none")
    model = build_model(settings)
    assert isinstance(model, FallbackChain)
    first, second = model.models
    assert isinstance(first, RetryingModel) and isinstance(second, RetryingModel)
    assert first.inner.base_url == "http://127.0.0.1:9/v1"  # type: ignore[attr-defined]
    assert model.name == "openai:gpt-x"
    assert build_model(Settings(llm="none")) is None
    assert build_model(Settings(llm="fake:echo")).chat("hi").text == "hi"  # type: ignore[union-attr]


def test_build_embedder(tmp_path: Path) -> None:
    settings = Settings(embedder="ollama:nomic-x")
    embedder = build_embedder(settings)
    assert isinstance(embedder, RetryingEmbedder) and embedder.name == "ollama:nomic-x"
    assert build_embedder(Settings(embedder="fake:hashing-16")).dimension == 16

